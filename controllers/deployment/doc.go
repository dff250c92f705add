// Package deployment is the Deployment controller: it rolls a Deployment's pods from one
// template to the next through ReplicaSets, as kube-controller-manager's does, so that
// `kubectl rollout status|history|undo|pause|resume` work against it unchanged. It is
// built only on kinformer's public packages.
//
// Informers on deployments, replicasets and pods (one shared factory) feed one queue of
// Deployment keys: a Deployment's own changes, its ReplicaSets' changes through their
// ControllerRef (an orphan ReplicaSet is offered to every Deployment that selects it),
// and, for a Recreate rollout waiting for old pods to go, pod deletions.
//
// A sync first waits until the informers have shown the controller's own last writes for
// that Deployment (ReplicaSets created, scaled or annotated, the Deployment's revision and
// status): until then it is skipped and retried (package consistency), so it never
// creates a ReplicaSet twice or scales one from a size it has already changed.
// kube-controller-manager 1.36 has this guard for ReplicaSets, not for Deployments.
//
// One sync of a Deployment, after claiming its ReplicaSets (package claim):
//
//   - the new ReplicaSet is the one whose template equals the Deployment's, ignoring the
//     pod-template-hash label; when there is none it is created as NAME-HASH, HASH a hash
//     of the template and status.collisionCount (a name taken by another template bumps
//     collisionCount and the next sync tries another name). It takes the next revision
//     (deployment.kubernetes.io/revision); an old ReplicaSet brought back by
//     `kubectl rollout undo` takes the new number and keeps its former ones in
//     revision-history;
//   - paused: only scaling; a scaling event (the replica count changed): only scaling,
//     proportional over the active ReplicaSets mid-rollout (desired-replicas and
//     max-replicas annotations);
//   - RollingUpdate: the new ReplicaSet grows within maxSurge (rounded up), the old ones
//     shrink within maxUnavailable (rounded down), unhealthy old replicas first;
//     Recreate: old ReplicaSets to zero, wait until their pods are gone, then the new one
//     to full size;
//   - beyond revisionHistoryLimit (default 10), the oldest fully scaled-down ReplicaSets
//     are deleted once the rollout completed;
//   - status through /status: replicas, updatedReplicas, readyReplicas,
//     availableReplicas, unavailableReplicas, terminatingReplicas, observedGeneration,
//     collisionCount, and the conditions Available and Progressing (with
//     progressDeadlineSeconds: a rollout without progress for that long is marked
//     ProgressDeadlineExceeded, and the key is requeued for exactly that moment).
//
// A Deployment being deleted only has its status synced; its ReplicaSets are the garbage
// collector's. Events (ScalingReplicaSet, ...) go to the Deployment. A panic in a sync is
// recovered, logged and retried by controllers.Loop (Options.CrashOnPanic: crash).
package deployment
