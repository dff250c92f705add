// Package shard says which part of a cluster a process serves, in the terms of
// server-side sharded list and watch (kube-apiserver 1.36, KEP-5866, feature gate
// ShardedListAndWatch).
//
// A sharded list or watch carries a shardSelector query parameter. The server hashes one
// field of every object with 64-bit FNV-1a (Hash) and sends only the objects whose hash
// falls in one of the selector's ranges:
//
//	shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000') || shardRange(...)
//
// Each range is start included, end excluded, both written as 0x and exactly 16
// lower-case hex digits; the end of the whole space, 2^64, is written
// 0x10000000000000000. All ranges of a selector hash the same field,
// object.metadata.namespace or object.metadata.uid. Selector is that parameter: String
// writes it, Parse reads it with the server's rules, Matches applies it to a value.
//
// A server answers a sharded list with metadata.shardInfo.selector, the selector it
// applied, in the form String writes. A server without the feature gate ignores the
// parameter without a word and sends everything, so a client must check the echo on
// its lists (watch events carry none) before trusting that it sees only its shard.
//
// # Which field
//
// Shard by namespace (Namespace) unless there is a reason not to. A Deployment, its
// ReplicaSets and their Pods share a namespace, so a namespace-sharded controller sees
// an owner and everything it owns together, and can build the object graph from its own
// cache; by uid (UID) they would hash to unrelated points and land on different shards.
// The price is granularity: a namespace is never split, so one huge namespace is one
// shard's whole load however many shards there are, and cluster-scoped objects (Nodes,
// Namespaces themselves, ClusterRoles), whose namespace is "", all hash to
// Hash("") = 0xcbf29ce484222325 and land on the one shard owning that point. UID spreads
// any population evenly, for work where each object stands alone.
//
// FNV-1a also spreads names that differ only at their end badly: the last byte or two of
// a name barely reach the hash's high bits, which are what ranges cut. team-a … team-z,
// or tenant-00 … tenant-99, all fall in one 1/256 of the space; tenant-000 … tenant-999
// fall in 13 of 256. The hash is the server's, so no client can mix it better; but the
// server takes any [start, end) bounds, so a client can cut where the namespaces are.
//
// # Who serves what
//
// A Plan cuts the space into slots: EqualPlan into equal ones, PlanFor where the load is
// (Points: the hash of each namespace and how many objects it holds), so that slots hold
// about equal shares of the work however the names hash. Plan.Assign deals the slots out
// to members by rendezvous hashing, then evens their loads out to within Slack of the
// mean, so processes that agree on the plan and the member list agree on the assignment
// without talking to each other, and a change of membership moves little: Moved and
// MovedLoad report how much, against the ideal 1/N, and Balance how even it is. A Set is
// a set of hashes, as members claim them.
package shard
