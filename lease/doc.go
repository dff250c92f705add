// Package lease is what a process that holds a coordination.k8s.io/v1 Lease, and the
// processes that watch it, must agree on: the rules that make one holder at a time
// possible without a fencing token from the server. Leader election (package
// leaderelection) and shard groups (package shardgroup) are both built on it.
//
//   - Timing: LeaseDuration > RenewDeadline > 1.2 × RetryPeriod, kube-controller-manager's
//     15 s, 10 s and 2 s by default. A holder that has not renewed within RenewDeadline
//     of the start of its last successful renewal stops acting; the others take over no
//     sooner than LeaseDuration after they saw that renewal. The gap between the two is
//     what keeps an old and a new holder from overlapping.
//   - Own is a process's own Lease: every write names the resourceVersion it read, so a
//     write never overwrites another writer's (the apiserver answers Conflict, and Own
//     reads again); and it times the renewals on the process's monotonic clock, so a
//     process frozen past its deadline (SIGSTOP, a long pause) knows it on waking
//     (Linux's monotonic clock stops during a suspend of the whole machine, though).
//   - Expiry judges other processes' Leases: from when this process saw each one change,
//     on its own clock, plus the duration the Lease declares. The renewTime inside was
//     written by another machine's clock and is never compared with this one's.
//   - Stamp writes a holder's record into a LeaseSpec as client-go's leader election
//     does, so that kinformer and client-go processes read each other's records.
//
// The package Example holds a Lease through Own and judges its expiry from another
// process's Expiry.
package lease
