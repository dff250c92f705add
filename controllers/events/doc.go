// Package events writes core/v1 Events about the objects a controller manages, so that
// `kubectl describe` shows what the controller did and why (SuccessfulCreate,
// FailedCreate, ScalingReplicaSet, ...).
//
// Writing must never slow a controller down or flood the apiserver. Eventf only queues
// the event; one goroutine (Run) writes them. An event repeated for the same object,
// type, reason and message within ten minutes updates the Event already written (count
// and lastTimestamp), as kube-controller-manager's recorder does, instead of creating
// another. Each object has a token bucket (a burst of 25, then one event every five
// minutes) and the queue is bounded: beyond them events are dropped and counted, never
// waited for.
package events
