// Package deployment is the Deployment controller: it rolls a Deployment's pods from one
// template to the next through ReplicaSets, as kube-controller-manager's does, so that
// `kubectl rollout status|history|undo|pause|resume` work against it unchanged. It is
// built only on kinformer's public packages.
//
// Informers on deployments, replicasets and pods (one shared factory) feed one queue of
// Deployment keys: a Deployment's own changes, its ReplicaSets' changes through their
// ControllerRef (an orphan ReplicaSet is offered to every Deployment that selects it),
// and, for a Recreate rollout waiting for old pods to go, pod deletions. All but the last
// are controllers.Base's handlers, which the ReplicaSet controller shares, with the
// queue, events and the sharded manager's Requeue and Forget.
//
// A sync first waits until the informers have shown the controller's own last writes for
// that Deployment (ReplicaSets created, scaled or annotated, the Deployment's revision and
// status): until then it is skipped and retried (package consistency), so it never
// creates a ReplicaSet twice or scales one from a size it has already changed.
// kube-controller-manager 1.36 has this guard for ReplicaSets, not for Deployments.
//
// Then, in the order of kube-controller-manager's syncDeployment (sync.go):
//
//  1. it claims its ReplicaSets (package claim) and splits them, once and without
//     writing, into the new one, whose template equals the Deployment's ignoring the
//     pod-template-hash label, and the old ones;
//  2. a Deployment being deleted only has its revision and status synced: its
//     ReplicaSets are the garbage collector's;
//  3. pausing and resuming are recorded in the Progressing condition;
//  4. paused, or after a scaling event (an active ReplicaSet was sized for another
//     replica count, its desired-replicas annotation says): only scaling, proportional
//     over the active ReplicaSets mid-rollout, and while paused the history cleanup;
//  5. otherwise the strategy: RollingUpdate grows the new ReplicaSet within maxSurge
//     (rounded up) and shrinks the old ones within maxUnavailable (rounded down),
//     unhealthy old replicas first; Recreate scales the old ones to zero, waits until
//     their pods are gone, then scales the new one to full size;
//  6. the status is written through /status when it changed: replicas, updatedReplicas,
//     readyReplicas, availableReplicas, unavailableReplicas, terminatingReplicas,
//     observedGeneration, collisionCount, and the conditions Available and Progressing
//     (with progressDeadlineSeconds: a rollout without progress for that long is marked
//     ProgressDeadlineExceeded, and the key is requeued for exactly that moment).
//
// Every path of steps 2, 4 and 5 starts with the revision step (history.go): the new
// ReplicaSet takes the next revision (deployment.kubernetes.io/revision; an old
// ReplicaSet brought back by `kubectl rollout undo` takes the new number and keeps its
// former ones in revision-history) and the Deployment takes the new ReplicaSet's. Only a
// rollout creates a missing new ReplicaSet (newrs.go), as NAME-HASH, HASH a hash of the
// template and status.collisionCount (a name taken by another template bumps
// collisionCount and the next sync tries another name). Once a rollout is complete, the
// oldest fully scaled-down ReplicaSets beyond revisionHistoryLimit (default 10) are
// deleted.
//
// Events (ScalingReplicaSet, ...) go to the Deployment. A panic in a sync is recovered,
// logged and retried by controllers.WorkerPool (Options.CrashOnPanic: crash).
package deployment
