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
// Before it binds a pod, a Kubelet registers its node, as a kubelet (or kwok) does: tools
// that look for nodes find one, and kube-controller-manager's pod garbage collector does
// not delete pods bound to a node that does not exist.
//
//   - The Node is created schedulable and without taints of its own, labelled as a
//     kubelet labels it (hostname, os linux, arch amd64) and with NodeLabel, with
//     Capacity and Allocatable (DefaultCapacity: cpu 32, memory 256Gi, pods 110, as
//     kwok's nodes), the addresses InternalIP (the pods' hostIP) and Hostname, nodeInfo
//     (kubeletVersion is the apiserver's version), and the conditions a healthy kubelet
//     reports: MemoryPressure, DiskPressure and PIDPressure False, Ready True with
//     reason KubeletReady. kube-apiserver taints every new Node not-ready until
//     kube-controller-manager sees it Ready; the Kubelet lifts it (and unreachable)
//     itself, so the node is schedulable on a cluster without one too.
//   - A Node of that name that exists already (a restart) is adopted, not refused: its
//     labels get the kubelet's, its status is written, and all else on it stays (a
//     cordon, others' taints, labels and conditions).
//   - Its Lease, kube-node-lease/NAME, held by the node for LeaseDuration (40 s) and
//     owned by the Node (so it is collected with it), is renewed every quarter of that,
//     10 s, as a kubelet renews it: a node lifecycle controller that finds it stale
//     marks the node NotReady. The status is written every StatusInterval (1 min; a
//     kubelet using a Lease writes it every 5 min when nothing changed), which refreshes
//     the conditions' lastHeartbeatTime and keeps their lastTransitionTime. Both are
//     timed on Options.Clock.
//   - Writes are merge patches that name only what the kubelet owns: the status goes to
//     nodes/NAME/status under the resourceVersion it was computed from (the conditions
//     list is replaced whole, and another component's condition must not be lost), the
//     Lease's renewal sets its three fields.
//   - A Node deleted while the Kubelet runs is registered again at its next heartbeat.
//     On exit the Node and its Lease stay, as a stopped kubelet's do (the Lease runs
//     out), unless DeleteNodeOnExit.
//
// Nothing runs: no containers, no probes, no restarts, no Events. The kubelet remembers
// little beyond the informer's cache (when it bound a pod, which addresses it handed
// out), and what it remembers it can rebuild, so a restarted Kubelet picks up pods bound
// and started by an earlier one.
//
// It uses only the engine's public packages (clock, informer, listwatch, object,
// workqueue), as any controller built on kinformer would.
package fakekubelet
