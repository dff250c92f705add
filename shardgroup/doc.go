// Package shardgroup divides the hash space of package shard among the processes of a
// group, coordinated only through coordination.k8s.io/v1 Leases, and hands parts of it
// over as processes come and go, so that two members never act on the same namespace at
// the same moment.
//
// Every process runs a Member (New, then Run). It holds a Lease of its own,
// <group>-<id> in kube-system, labelled shard.kinformer.io/group=<group> and renewed every
// RetryPeriod. Its annotation shard.kinformer.io/acting lists the buckets the member may
// be acting on, as a BucketSet ("256:0-31,64,100-127"); shard.kinformer.io/target lists
// those it should be. The members are the group's Leases that have not expired, judged
// as client-go judges a leader's lease: from when this process saw the Lease change, on
// its own clock, plus its leaseDurationSeconds. Nobody compares a renewTime written by
// another machine's clock with its own. A member's target is shard.Assign of the members'
// IDs over Buckets buckets, so members that see the same Leases agree on it without
// talking, and a member that joins or leaves moves about 1/N of the space.
//
// A controller acts through two callbacks and one check. Acquire(ranges) starts the
// work of a part of the space (lists it, starts informers with the member's Acting
// selector); Release(ranges) stops it and returns once the work in flight has finished;
// Acts(namespace) says, before each sync, whether the object is still this member's.
//
// # The protocol
//
// A member runs rounds, every RetryPeriod and at once when its watch on the group's
// Leases sees one appear, go, or change its claims:
//
//  1. Read the group's Leases with a consistent list (resourceVersion ""): the newest
//     state etcd holds, not the watch cache's.
//  2. Release: for buckets it acts on that are no longer its target, Acts turns false and
//     Release is called. Their claims stay in the Lease until Release has returned.
//  3. Acquire: its claims written by an earlier round, still targeted, that no other
//     unexpired Lease lists in this read, are acquired: Acquire is called, and the member
//     acts on them when it returns. A claim another Lease lists too waits, published,
//     while that member releases it or gives it up; when that member targets it as well
//     (their views of the membership differ for a round), it is withdrawn and not made
//     again before a jittered RetryPeriod, while the other does the same.
//  4. Write the Lease, with the resourceVersion read, so that it never overwrites another
//     writer: renewed, keeping every claim of steps 2 and 3, dropping those given up, and
//     adding claims on targeted buckets that no Lease lists. New claims are acquired in
//     the next round, which follows at once.
//
// Acquire and Release run on their own goroutine, one at a time, while the rounds go on
// renewing the Lease: a slow Release holds a hand-over up, for as long as it takes, and
// never lets the Lease expire.
//
// A member that has not renewed within RenewDeadline of the start of its last successful
// renewal stops at once: Acts turns false, a running callback's context ends, and
// Release is called for everything with a context that ends LeaseDuration after that
// renewal. It writes nothing until it has, then joins again as a member with no claims.
// When Run's context ends (SIGTERM), the member releases everything while it goes on
// renewing, writes an empty claim, and deletes its Lease: the others take over within a
// round instead of after LeaseDuration.
//
// # Why no bucket has two members at once
//
// A member claims bucket b from the write that adds b to its Lease to the write that
// removes it. It works on b (from the call of Acquire to the return of Release) only
// within that claim: it acquires only claims a write has already stored, and removes one
// only after its Release returned. A write whose outcome is unknown (a timeout) may have
// been stored all the same; a member then counts as stored only the claims both the old
// and the new Lease hold.
//
// Say A and B both acquire b. etcd orders all writes; say A's claim was written first. B
// acquires only after a consistent read made after its own claim's write, so after A's,
// and that read shows A's claim: A removes it only once its work on b has ended, which
// would be after B's had started. So B did not acquire, unless it judged A's Lease
// expired. That takes B seeing the Lease unchanged for LeaseDuration, counted from a
// moment after A's last renewal was stored, so after A started it; and A stops acting
// RenewDeadline after that start, and its last Release ends LeaseDuration after it. The
// two clocks are assumed to run at the same rate, not to agree. Two members writing
// claims together are the same case: at most one of the two reads that follow the writes
// misses the other's claim.
//
// A Lease that disappears while it lists claims (deleted by hand) keeps them standing,
// in the eyes of every member that saw it, until LeaseDuration after they saw it gone;
// its member finds it gone at its next renewal and stops. A member that leaves writes an
// empty claim before it deletes its Lease, and the watch's DELETED event carries that
// last state, so nobody waits for it.
//
// # What it asks of its users
//
// IDs must be unique among running members (like leader election's identities), and
// every member of a group must use the same Buckets and Field; a member that meets
// claims in another division of the space still honours every hash they cover, but the
// two will never agree on an assignment. Release must stop the work promptly once its
// context ends after a loss: the margin LeaseDuration − RenewDeadline is all it has.
// Deleting a member's Lease by hand is unsafe against a member that starts while the
// Lease is gone, which has seen no claim to honour.
package shardgroup
