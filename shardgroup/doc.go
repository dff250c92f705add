// Package shardgroup divides the hash space of package shard among the processes of a
// group, coordinated only through coordination.k8s.io/v1 Leases, and hands parts of it
// over as processes come and go, so that two members never act on the same namespace at
// the same moment.
//
// Every process runs a Member (New, then Run). It holds a Lease of its own,
// <group>-<id> in kube-system, labelled shard.kinformer.io/group=<group> and renewed every
// RetryPeriod (package lease holds the rules of renewal and expiry it shares with leader
// election). Its annotation shard.kinformer.io/acting lists, as a shard.Set, the hashes
// the member may be acting on; shard.kinformer.io/target those it should be. The members
// are the group's Leases that have not expired, judged as client-go judges a leader's
// lease: from when this process saw the Lease change, on its own clock, plus its
// leaseDurationSeconds. Nobody compares a renewTime written by another machine's clock
// with its own.
//
// # Who gets what
//
// The group's plan (the Lease named <group>.plan, labelled shard.kinformer.io/role=plan)
// cuts the space into slots where the load is (shard.PlanFor): numbered namespaces, which
// FNV-1a crowds into one 256th of the space, end up in slots of their own. A member's
// target is what shard.Plan.Assign gives its ID among the live members' IDs, so members
// that see the same Leases agree on it without talking, a member that joins or leaves
// moves about 1/N of the load, and no member holds more than 1.1 × the mean (unless one
// namespace alone does). Each member publishes the load of what it acts on (objects by
// namespace, Options.Load) in shard.kinformer.io/load once it has settled on its target;
// when every live member has, the member whose ID sorts first cuts a new plan from those
// loads if the busiest member holds more than 1.15 × the mean and the new plan would do
// clearly better, at most once every five LeaseDurations. A group without a plan deals an
// equal one (shard.EqualPlan). The plan only moves targets: it is written with the
// resourceVersion read, and hand-overs follow it as they follow a join.
//
// A controller acts through two callbacks and two checks. Acquire(part) starts the work
// of a part of the space (lists it, starts informers with the member's Acting selector);
// Release(part) stops it; Acts(namespace) says, before each sync, whether the object is
// still this member's; and the Guard, given to the client of everything that writes for
// the member, checks every write at the moment it is sent.
//
// # The protocol
//
// A member is in one of these states, and these are all its transitions
// (TestTransitions runs each row against the code):
//
//	Joining   no live Lease of its ID stands: it writes its own, claiming nothing      → Member
//	Joining   another live process of its ID holds the Lease                           → Waiting
//	Joining   the read or the write fails                                              → Joining
//	Joining   the Lease belongs to another group or member                             → Stopped (error)
//	Joining   Run's context has ended                                                  → Stopped
//	Waiting   that process's Lease is released, or expires                             → Joining
//	Waiting   it still stands: the member marks it, every LeaseDuration                → Waiting
//	Waiting   Run's context has ended                                                  → Stopped
//	Member    a round: read, release, acquire, claim, renew                            → Member
//	Member    RenewDeadline has passed since the start of the last renewal             → Lost
//	Member    its Lease was deleted, or another process took it over                   → Lost
//	Member    an Acquire or Release has run a round past HandoverTimeout               → Lost
//	Member    a Release has kept failing for HandoverTimeout                           → Lost
//	Member    Run's context has ended                                                  → Leaving
//	Leaving   a round, still handing over                                              → Leaving
//	Leaving   everything released, an empty claim written: the Lease is deleted        → Stopped
//	Leaving   RenewDeadline has passed since the start of the last renewal             → Lost
//	Lost      the callback it stopped has not returned                                 → Lost
//	Lost      everything is released, but its claims still stand for the others        → Lost
//	Lost      everything is released, and its claims have lapsed                       → Joining
//	Lost      Run's context had ended                                                  → Stopped (error)
//
// A member's round, every RetryPeriod and at once when its watch on the group's Leases
// sees one appear, go, or change its claims:
//
//  1. Read the group's Leases with a consistent list (resourceVersion ""): the newest
//     state etcd holds, not the watch cache's. Its own Lease must be there, written by
//     this incarnation.
//  2. Release: what it acts on that is no longer its target stops counting for Acts and
//     the Guard at once; once no write the Guard let through there is in flight, Release
//     is called. Its claim stays in the Lease until Release has returned.
//  3. Acquire: its claims written by an earlier round, still targeted, that no other
//     unexpired Lease lists in this read, are acquired: Acquire is called, and the member
//     acts on them when it returns. A claim another Lease lists too waits, published,
//     while that member releases it or gives it up; when that member targets it as well
//     (their views of the membership or the plan differ for a round), it is withdrawn and
//     not made again before a jittered RetryPeriod, while the other does the same.
//  4. Write the Lease, with the resourceVersion read, so that it never overwrites another
//     writer: renewed, keeping every claim of steps 2 and 3, dropping those given up, and
//     adding claims on targeted hashes that no Lease lists. New claims are acquired in the
//     next round, which follows at once.
//
// Acquire and Release run on their own goroutine, one at a time, while the rounds go on
// renewing the Lease. Each is bounded by HandoverTimeout (its context ends then): a
// member whose callback outlives it, or whose Release keeps failing that long, gives
// everything up the safe way: Acts turns false and the Guard refuses every write at
// once, it stops renewing, so the others take over once its Lease expires, and Check
// fails (for /healthz) until the callback returns.
//
// # Why no namespace has two writers at once
//
// A member claims a hash from the write that adds it to its Lease to the write that
// removes it. It may write in a namespace only within that claim: its Guard admits a
// write only while the member acts on the namespace's hash (from the return of Acquire
// to the call of Release, which it acquires only once a write has stored the claim, and
// removes from the claim only after Release returned and every write it admitted there
// was answered), and only within RenewDeadline of the start of its last successful
// renewal, on the monotonic clock. A write whose outcome is unknown (a timeout) may have
// been stored all the same; a member then counts as stored only the claims both the old
// and the new Lease hold.
//
// Say A and B both write in a namespace of hash h. etcd orders all writes; say A's claim
// on h was written first. B acquires h only after a consistent read made after its own
// claim's write, so after A's, and that read shows A's claim: A removes it only once it
// can no longer write there, which would be after B had begun. So B did not acquire,
// unless it judged A's Lease expired. That takes B seeing the Lease unchanged for
// LeaseDuration, counted from a moment after A's last renewal was stored, so after A
// started it; and A's Guard refuses everything from RenewDeadline after that start,
// whether or not A's goroutines run (a process frozen by SIGSTOP or a long pause wakes
// to a monotonic clock that counted the frozen time; a machine suspended whole may not,
// since Linux's CLOCK_MONOTONIC stops during a system suspend). The clocks are assumed to
// run at the same rate, not to agree. Two members writing claims together are the same
// case: at most one of the two reads that follow the writes misses the other's claim.
//
// What no client-side check can cover: a write already on the wire when the process
// froze (or whose request was cancelled while the server still held it) may land late.
// The margin LeaseDuration − RenewDeadline is what absorbs it.
//
// A Lease that disappears while it lists claims (deleted by hand) keeps them standing,
// in the eyes of every member that saw it, until LeaseDuration after they saw it gone;
// its member finds it gone at its next round and stops. A member that leaves writes an
// empty claim before it deletes its Lease, and the watch's DELETED event carries that
// last state, so nobody waits for it.
//
// # Incarnations
//
// Each Run writes a new random incarnation into its Lease (shard.kinformer.io/
// incarnation). A process that finds its ID's Lease written by another incarnation that
// has not expired does not take it over: it waits, honouring that Lease's claims as a
// peer's, and marks it (shard.kinformer.io/contender) so that the holder, its metrics
// and `kinformer shards` report two processes of one ID. Only the holder acts. A holder
// that finds its Lease taken over (it was frozen past LeaseDuration, and a restart of its
// ID took the Lease) stops at once and, its part released, waits in its turn.
//
// # What it asks of its users
//
// Every member of a group must use the same Slots and Field. Release must stop the work
// promptly once its context ends after a loss: the margin LeaseDuration − RenewDeadline
// is all it has. Everything that writes for the member goes through a client with its
// Guard, or checks Acts itself immediately before each write. Deleting a member's Lease
// by hand is unsafe against a member that starts while the Lease is gone, which has seen
// no claim to honour.
package shardgroup
