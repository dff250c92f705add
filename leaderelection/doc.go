// Package leaderelection elects one leader among the replicas of a process through a
// coordination.k8s.io/v1 Lease, the way kube-controller-manager does.
//
// Every candidate runs an Elector on the same Lease. The protocol is the one client-go's
// leader election speaks, so a kinformer process and a client-go one contending for the
// same Lease see each other's records:
//
//   - A candidate reads the Lease every RetryPeriod (with a little jitter). When it is
//     absent, the candidate creates it as holder, with leaseTransitions 0. When another
//     holder has it, the candidate waits until it has seen that holder's record
//     unchanged for the lease's leaseDurationSeconds, counted on its own clock from the
//     moment it saw the record change: the renewTime inside was written by another
//     machine's clock, and clocks skew. An expired or released (empty holderIdentity)
//     lease is then taken over: holderIdentity, acquireTime, renewTime, and
//     leaseTransitions one higher.
//   - Every write carries the resourceVersion that was read, so when two candidates race,
//     the apiserver accepts one write and answers the other with Conflict: never two
//     winners. The loser reads the lease again and judges the winner's record.
//   - The leader renews every RetryPeriod. If it has not renewed for RenewDeadline,
//     counted from the start of its last successful renewal, it has lost: the context of
//     its work is cancelled at once and Run returns ErrLeadershipLost. Since
//     RenewDeadline is shorter than LeaseDuration, the old leader has stopped before any
//     other candidate can consider its lease expired.
//   - When Run's context ends while leading, the work is cancelled and the lease kept
//     renewed until the work has returned; with ReleaseOnCancel the holder is then
//     emptied (with leaseDurationSeconds 1), so a standby takes over within a
//     RetryPeriod rather than a LeaseDuration.
//
// The rules themselves (the timing bounds, the holder's record, writes with optimistic
// concurrency, expiry judged on the local clock) are package lease's, shared with shard
// groups; this package adds the candidate's loop and its callbacks.
//
// The elector reads time only through Config.Clock. IsLeader and Check judge the renew
// deadline on it whenever they are called, so with the real clock, whose readings carry
// Go's monotonic clock, a process frozen past its deadline (SIGSTOP, a long pause)
// reports that it does not lead the moment it wakes, before its loop has run.
//
// An Elector also serves the process's /healthz (Check) and /metrics (the gauge
// leader_election_master_status).
package leaderelection
