package overshoot

import (
	"testing"
	"time"

	"github.com/kinformer/kinformer/object"
)

func rs(uid string, spec int32) *object.ReplicaSet {
	return &object.ReplicaSet{ObjectMeta: object.ObjectMeta{Name: "rs-" + uid, UID: uid}, Spec: object.ReplicaSetSpec{Replicas: &spec}}
}

func pods(uid string, n int) []*object.Pod {
	yes := true
	var out []*object.Pod
	for range n {
		out = append(out, &object.Pod{ObjectMeta: object.ObjectMeta{OwnerReferences: []object.OwnerReference{{UID: uid, Controller: &yes}}},
			Status: object.PodStatus{Phase: object.PodRunning}})
	}
	return out
}

func TestObserve(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name  string
		steps []struct {
			at   time.Duration
			spec int32
			pods int
		}
		want bool
	}{
		{"within spec", []struct {
			at   time.Duration
			spec int32
			pods int
		}{{0, 3, 3}, {time.Second, 3, 2}}, false},
		{"surplus right after a scale-down is allowed", []struct {
			at   time.Duration
			spec int32
			pods int
		}{{0, 4, 4}, {time.Second, 3, 4}}, false},
		{"pods beyond every recent spec", []struct {
			at   time.Duration
			spec int32
			pods int
		}{{0, 3, 3}, {time.Second, 3, 4}}, true},
		{"a larger spec long ago does not excuse surplus now", []struct {
			at   time.Duration
			spec int32
			pods int
		}{{0, 5, 5}, {Window + time.Second, 2, 2}, {Window + 2*time.Second, 2, 3}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &Watch{history: map[string][]sample{}}
			for _, s := range tt.steps {
				w.observe(t0.Add(s.at), []*object.ReplicaSet{rs("a", s.spec)}, pods("a", s.pods))
			}
			if got := w.first != ""; got != tt.want {
				t.Errorf("overshoot %v (%q), want %v", got, w.first, tt.want)
			}
		})
	}
}
