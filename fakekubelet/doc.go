// Package fakekubelet makes pods run where no kubelet does: it plays the scheduler and
// the kubelet of one fake node, so that pods made by controllers become Running and
// Ready and rollouts progress in the demo and in end-to-end tests.
//
// A Kubelet watches every pod through one shared informer and works through a queue of
// pod keys, doing for each pod what the real components would:
//
//   - an unscheduled pod is bound to the node through the pods/binding subresource, as
//     the scheduler binds it;
//   - a pod on the node starts once ReadyAfter has passed since it was bound: one merge
//     patch of its /status sets phase Running, startTime, the node's and the pod's IP
//     addresses, the conditions Initialized, Ready, ContainersReady and PodScheduled, and
//     a running, ready status for each container, which is what the ReplicaSet and
//     Deployment controllers and `kubectl rollout status` read;
//   - a pod with an image that matches one of NeverReadyImages is started but never
//     ready: phase Running, its containers waiting in ImagePullBackOff, Ready and
//     ContainersReady False. It stays so, and a rollout waiting for it times out;
//   - a pod on the node that is being deleted is deleted with grace period 0 and a uid
//     precondition, which is how a kubelet finishes a graceful deletion once the
//     containers have stopped (here they stop at once).
//
// Nothing runs: no containers, no probes, no restarts, no Events. The kubelet remembers
// little beyond the informer's cache (when it bound a pod, which addresses it handed
// out), and what it remembers it can rebuild, so a restarted Kubelet picks up pods bound
// and started by an earlier one.
//
// It uses only the engine's public packages (informer, listwatch, object, workqueue),
// as any controller built on kinformer would.
package fakekubelet
