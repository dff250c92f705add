package overshoot

import (
	"fmt"
	"testing"
	"time"

	"github.com/kinformer/kinformer/object"
)

func rs(uid string, spec int32) *object.ReplicaSet {
	return &object.ReplicaSet{ObjectMeta: object.ObjectMeta{Name: "rs-" + uid, UID: uid}, Spec: object.ReplicaSetSpec{Replicas: &spec}}
}

// pods returns active pods of the ReplicaSet uid with the given numbers: pod 3 in two
// snapshots is the same pod.
func pods(uid string, numbers ...int) []*object.Pod {
	yes := true
	var out []*object.Pod
	for _, i := range numbers {
		name := fmt.Sprint("p", i)
		out = append(out, &object.Pod{ObjectMeta: object.ObjectMeta{Name: name, UID: uid + name,
			OwnerReferences: []object.OwnerReference{{UID: uid, Controller: &yes}}},
			Status: object.PodStatus{Phase: object.PodRunning}})
	}
	return out
}

type step struct {
	at   time.Duration
	spec int32
	pods []int
}

func TestObserve(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name  string
		steps []step
		want  bool
	}{
		{"within spec", []step{{0, 3, []int{0, 1, 2}}, {time.Second, 3, []int{0, 1, 3}}}, false},
		{"surplus right after a scale-down is allowed", []step{{0, 4, []int{0, 1, 2, 3}}, {time.Second, 3, []int{0, 1, 2, 3}}}, false},
		{"a new pod beyond every recent spec", []step{{0, 3, []int{0, 1, 2}}, {time.Second, 3, []int{0, 1, 2, 3}}}, true},
		{"a larger spec long ago does not excuse a new pod beyond the spec now",
			[]step{{0, 5, []int{0, 1, 2, 3, 4}}, {Window + time.Second, 2, []int{0, 1}}, {Window + 2*time.Second, 2, []int{0, 1, 9}}}, true},
		{"surplus that lingers without new pods is a slow deletion, not over-creation",
			[]step{{0, 3, []int{0, 1, 2}}, {time.Second, 0, []int{0, 1, 2}}, {Window + 2*time.Second, 0, []int{2}}}, false},
		{"a replacement within spec after a deletion is fine",
			[]step{{0, 2, []int{0, 1}}, {time.Second, 2, []int{1}}, {2 * time.Second, 2, []int{1, 5}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWatch()
			for _, s := range tt.steps {
				w.observe(t0.Add(s.at), []*object.ReplicaSet{rs("a", s.spec)}, pods("a", s.pods...))
			}
			if got := w.first != ""; got != tt.want {
				t.Errorf("overshoot %v (%q), want %v", got, w.first, tt.want)
			}
		})
	}
}
