// Package manager is the controller manager: the process that runs kinformer's
// controllers against one apiserver, as kube-controller-manager runs its own.
//
// It builds one shared informer factory for all controllers, one Prometheus registry
// (workqueue_*{name=...}, the informer metrics, sync durations and errors per
// controller, leader_election_master_status), and serves /metrics, /healthz and /readyz.
//
// The endpoints are served as kube-controller-manager serves them on its secure port
// (SecureServing): over HTTPS, with a certificate given or self-signed at start, every
// caller checked with the apiserver (a TokenReview for its bearer token, a
// SubjectAccessReview for get on /metrics), the answers kept 10 s; /healthz and /readyz
// answer anyone, as probes carry no token. The manager's user then needs the ClusterRole
// system:auth-delegator. MetricsAddr serves the same endpoints over plain HTTP without
// any check, for development on loopback; either, both or neither may be set. An
// address that cannot be listened on fails New with a ListenError, and an endpoint that
// stops serving stops Run with its error.
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
