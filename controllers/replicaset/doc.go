// Package replicaset is the ReplicaSet controller: it keeps spec.replicas active pods for
// each ReplicaSet, as kube-controller-manager's does, built only on kinformer's public
// packages.
//
// Two informers from one shared factory (replicasets and pods) feed one work queue of
// ReplicaSet keys. Pod events are mapped to the owning ReplicaSet through the pod's
// ControllerRef; an orphan pod is offered to every ReplicaSet whose selector matches it,
// and a pod whose labels or owner changed enqueues both its old and its new owner; a pod
// that starts terminating counts as deleted at once. These handlers, the queue, events
// and the sharded manager's Requeue and Forget are controllers.Base's, which the
// Deployment controller shares.
//
// One sync of a ReplicaSet:
//
//  1. waits until the informers have shown the writes of its last syncs (pods created,
//     adopted or released, its status): until then it is skipped and retried (package
//     consistency), as kube-controller-manager 1.36 does, so it never decides from a
//     cache older than its own writes; deletions, which the client returns no
//     resourceVersion for, are left to the expectations, as there;
//  2. claims its pods (package claim): adopts matching orphans, releases owned pods that
//     no longer match, never touches pods another controller owns;
//  3. if its expectations are met (package expectations), creates or deletes pods to
//     reach spec.replicas: creations in slow-start batches (1, 2, 4, ... while they
//     succeed, at most 500 per sync) from spec.template with every field of the
//     template passed through unchanged; deletions of the least valuable pods first, in
//     kube-controller-manager's ranking (see ranking.go);
//  4. writes status through /status when it changed: replicas, fullyLabeledReplicas,
//     readyReplicas, availableReplicas (ready for minReadySeconds; the key is requeued
//     for the time left), terminatingReplicas, observedGeneration, and the
//     ReplicaFailure condition while creates or deletes fail.
//
// Events (SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete) go to the
// ReplicaSet through package events, so `kubectl describe rs` shows them. A panic in a
// sync is recovered, logged and retried by controllers.WorkerPool
// (Options.CrashOnPanic: crash).
package replicaset
