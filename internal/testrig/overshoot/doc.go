// Package overshoot checks, for tests, that ReplicaSets never get more active pods than
// they were asked for. From consistent snapshots (ReplicaSets and pods listed at one
// resourceVersion) it flags a ReplicaSet that, in the snapshot where a new pod of it
// first appears, has more active pods than the largest spec.replicas it had within a
// recent window. Surplus pods left after a scale-down are not flagged (deleting them may
// take a while under faults); a pod created beyond every spec the ReplicaSet recently had
// is (a controller acting twice on a stale cache, or two leaders acting at once).
//
// It judges the controllers from outside, by lists of its own through a client that sees
// no injected faults, so that what it sees does not depend on the caches it judges. The chaos run and the ReplicaSet
// end-to-end tests use it; it is a test rig, not part of the engine.
package overshoot
