// Package manager is the controller manager: the process that runs kinformer's
// controllers against one apiserver, as kube-controller-manager runs its own.
//
// It builds one shared informer factory for all controllers, one Prometheus registry
// (workqueue_*{name=...}, the informer metrics, sync durations and errors per
// controller, leader_election_master_status), and serves /metrics, /healthz and /readyz.
//
// With leader election, candidates contend for a coordination.k8s.io/v1 Lease (package
// leaderelection). Unlike kube-controller-manager, a candidate that is not the leader
// is a warm standby: its informers run and stay synced, and only its workers wait. A
// fail-over then starts workers on a full cache at once, with no list to wait for, and
// /readyz reports a standby ready as soon as its caches synced.
//
// Stopping: on ctx's end (SIGTERM) the leader stops taking keys, lets the syncs in
// flight finish, releases the Lease so a standby takes over at once, and Run returns
// nil. A leader that cannot renew its Lease within the renew deadline aborts its syncs
// at once and Run returns leaderelection.ErrLeadershipLost; the process must exit
// non-zero, as kube-controller-manager does, rather than act without a lease.
package manager
