package replicaset

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/object"
)

// deletionCostAnnotation lets users say which pods are cheaper to delete.
const deletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// rankedPod is a deletion candidate with what the ranking compares.
type rankedPod struct {
	pod *object.Pod
	// colocated counts the active pods of the same owner family (the ReplicaSets of one
	// Deployment) on the pod's node: doubled-up pods go first, spreading the survivors.
	colocated int
}

// podsToDelete picks the n least valuable of pods. related are the active pods of the
// ReplicaSet's family, used to count pods per node.
func podsToDelete(pods, related []*object.Pod, n int, now time.Time) []*object.Pod {
	if n >= len(pods) {
		return pods
	}
	perNode := map[string]int{}
	for _, p := range related {
		if isActive(p) {
			perNode[p.Spec.NodeName]++
		}
	}
	ranked := make([]rankedPod, len(pods))
	for i, p := range pods {
		ranked[i] = rankedPod{pod: p, colocated: perNode[p.Spec.NodeName]}
	}
	slices.SortStableFunc(ranked, func(a, b rankedPod) int {
		switch {
		case deleteFirst(a, b, now):
			return -1
		case deleteFirst(b, a, now):
			return 1
		}
		return 0
	})
	out := make([]*object.Pod, n)
	for i := range out {
		out[i] = ranked[i].pod
	}
	return out
}

// phaseOrder ranks phases for deletion: Pending first, then Unknown, then Running (any
// other phase ranks with Pending).
func phaseOrder(p object.PodPhase) int {
	switch p {
	case object.PodUnknown:
		return 1
	case object.PodRunning:
		return 2
	}
	return 0
}

// deleteFirst reports whether a is less valuable than b, with kube-controller-manager's
// rules in order (each decides only when the pods differ in it):
//
//  1. unassigned (no node) before assigned;
//  2. Pending before Unknown before Running;
//  3. not ready before ready;
//  4. lower controller.kubernetes.io/pod-deletion-cost before higher;
//  5. more colocated pods of the same family on its node before fewer;
//  6. both ready: ready for less time before longer;
//  7. higher maximum container restart count before lower;
//  8. newer before older.
//
// Times in rules 6 and 8 are compared on a logarithmic scale of their age (pods aged 1 h
// and 1 h 20 m are equally old, ties broken by UID): scaling down then removes a mix of
// ages rather than always the newest.
func deleteFirst(a, b rankedPod, now time.Time) bool {
	pa, pb := a.pod, b.pod
	if pa.Spec.NodeName != pb.Spec.NodeName && (pa.Spec.NodeName == "" || pb.Spec.NodeName == "") {
		return pa.Spec.NodeName == ""
	}
	if oa, ob := phaseOrder(pa.Status.Phase), phaseOrder(pb.Status.Phase); oa != ob {
		return oa < ob
	}
	if ra, rb := pa.IsReady(), pb.IsReady(); ra != rb {
		return !ra
	}
	if ca, cb := deletionCost(pa), deletionCost(pb); ca != cb {
		return ca < cb
	}
	if a.colocated != b.colocated {
		return a.colocated > b.colocated
	}
	if pa.IsReady() && pb.IsReady() {
		if ta, tb := readySince(pa), readySince(pb); !ta.Equal(tb) {
			return youngerFirst(pa, pb, ta, tb, now)
		}
	}
	if ra, rb := maxRestarts(pa), maxRestarts(pb); ra != rb {
		return ra > rb
	}
	if ta, tb := pa.CreationTimestamp.Time(), pb.CreationTimestamp.Time(); !ta.Equal(tb) {
		return youngerFirst(pa, pb, ta, tb, now)
	}
	return false
}

// youngerFirst orders by time on the logarithmic age scale; an unknown (zero) time
// counts as the youngest.
func youngerFirst(pa, pb *object.Pod, ta, tb, now time.Time) bool {
	if ta.IsZero() || tb.IsZero() || now.IsZero() {
		if ta.IsZero() || tb.IsZero() {
			return ta.IsZero()
		}
		return ta.After(tb)
	}
	if d := ageRank(ta, now) - ageRank(tb, now); d != 0 {
		return d < 0
	}
	return pa.UID < pb.UID
}

// ageRank is the base-2 logarithm of the age in nanoseconds (-1 for no age).
func ageRank(t, now time.Time) int64 {
	if d := now.Sub(t); d > 0 {
		return int64(math.Log2(float64(d)))
	}
	return -1
}

// deletionCost reads the annotation; absent or invalid counts as 0.
func deletionCost(p *object.Pod) int32 {
	v, ok := p.Annotations[deletionCostAnnotation]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

func maxRestarts(p *object.Pod) int32 {
	var m int32
	for _, c := range p.Status.ContainerStatuses {
		m = max(m, c.RestartCount)
	}
	return m
}
