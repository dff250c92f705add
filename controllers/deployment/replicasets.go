package deployment

import (
	"cmp"
	"slices"

	"github.com/kinformer/kinformer/object"
)

// active keeps the ReplicaSets with spec.replicas > 0.
func active(rss []*object.ReplicaSet) []*object.ReplicaSet {
	var out []*object.ReplicaSet
	for _, rs := range rss {
		if rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// withNew returns olds plus newRS (when there is one).
func withNew(olds []*object.ReplicaSet, newRS *object.ReplicaSet) []*object.ReplicaSet {
	all := slices.Clone(olds)
	if newRS != nil {
		all = append(all, newRS)
	}
	return all
}

// sumSpec, sumStatus and friends add a field over ReplicaSets (nil ones count 0).
func sumSpec(rss []*object.ReplicaSet) int32 { return sum(rss, rsReplicas) }
func sumStatus(rss []*object.ReplicaSet) int32 {
	return sum(rss, func(rs *object.ReplicaSet) int32 { return rs.Status.Replicas })
}
func sumReady(rss []*object.ReplicaSet) int32 {
	return sum(rss, func(rs *object.ReplicaSet) int32 { return rs.Status.ReadyReplicas })
}
func sumAvailable(rss []*object.ReplicaSet) int32 {
	return sum(rss, func(rs *object.ReplicaSet) int32 { return rs.Status.AvailableReplicas })
}
func sumTerminating(rss []*object.ReplicaSet) *int32 {
	var n int32
	known := false
	for _, rs := range rss {
		if rs != nil && rs.Status.TerminatingReplicas != nil {
			n += *rs.Status.TerminatingReplicas
			known = true
		}
	}
	if !known {
		return nil
	}
	return &n
}

func sum(rss []*object.ReplicaSet, f func(*object.ReplicaSet) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += f(rs)
		}
	}
	return n
}

// byAge orders oldest first, ties by name.
func byAge(a, b *object.ReplicaSet) int {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// bySizeOlderFirst orders larger first, and among equals the older first: scaling down
// takes from the largest, and from the oldest of equals.
func bySizeOlderFirst(a, b *object.ReplicaSet) int {
	if c := cmp.Compare(rsReplicas(b), rsReplicas(a)); c != 0 {
		return c
	}
	return byAge(a, b)
}

// bySizeNewerFirst orders larger first, and among equals the newer first: scaling up
// gives to the largest, and to the newest of equals.
func bySizeNewerFirst(a, b *object.ReplicaSet) int {
	if c := cmp.Compare(rsReplicas(b), rsReplicas(a)); c != 0 {
		return c
	}
	return byAge(b, a)
}

// byRevision orders by revision annotation, ties by age.
func byRevision(a, b *object.ReplicaSet) int {
	if c := cmp.Compare(revision(&a.ObjectMeta), revision(&b.ObjectMeta)); c != 0 {
		return c
	}
	return byAge(a, b)
}
