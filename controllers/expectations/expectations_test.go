package expectations

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSatisfied(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tests := []struct {
		name string
		act  func(e *Expectations)
		want bool
	}{
		{"no record", func(e *Expectations) {}, true},
		{"creations pending", func(e *Expectations) { e.ExpectCreations("rs", 2); e.CreationObserved("rs") }, false},
		{"creations observed", func(e *Expectations) {
			e.ExpectCreations("rs", 2)
			e.CreationObserved("rs")
			e.CreationObserved("rs")
		}, true},
		{"more observations than expected stay met", func(e *Expectations) {
			e.ExpectCreations("rs", 1)
			e.CreationObserved("rs")
			e.CreationObserved("rs")
		}, true},
		{"deletions pending", func(e *Expectations) {
			e.ExpectDeletions("rs", []string{"ns/a", "ns/b"})
			e.DeletionObserved("rs", "ns/a")
		}, false},
		{"deletion of an object not awaited does not count", func(e *Expectations) {
			e.ExpectDeletions("rs", []string{"ns/a"})
			e.DeletionObserved("rs", "ns/other")
		}, false},
		{"deletions observed", func(e *Expectations) {
			e.ExpectDeletions("rs", []string{"ns/a", "ns/b"})
			e.DeletionObserved("rs", "ns/b")
			e.DeletionObserved("rs", "ns/a")
		}, true},
		{"expired after the TTL", func(e *Expectations) { e.ExpectCreations("rs", 3); now = now.Add(5*time.Minute + time.Second) }, true},
		{"not expired at the TTL", func(e *Expectations) { e.ExpectCreations("rs", 3); now = now.Add(5 * time.Minute) }, false},
		{"forgotten", func(e *Expectations) { e.ExpectCreations("rs", 3); e.Forget("rs") }, true},
		{"an unanswered create stays expected", func(e *Expectations) {
			e.ExpectCreations("rs", 2)
			e.CreationObservedOf("rs", "ns/a")
			e.CreationUncertain("rs", "ns/b")
		}, false},
		{"an unanswered create the informer shows is settled", func(e *Expectations) {
			e.ExpectCreations("rs", 2)
			e.CreationObservedOf("rs", "ns/a")
			e.CreationUncertain("rs", "ns/b")
			e.CreationObservedOf("rs", "ns/b")
		}, true},
		{"an unanswered create the server never made is settled", func(e *Expectations) {
			e.ExpectCreations("rs", 1)
			e.CreationUncertain("rs", "ns/b")
			e.CreationNotMade("rs", "ns/b")
		}, true},
		{"only uncertain creates can be declared not made", func(e *Expectations) {
			e.ExpectCreations("rs", 1)
			e.CreationNotMade("rs", "ns/other")
		}, false},
		{"other keys are independent", func(e *Expectations) { e.ExpectCreations("other", 3) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(0, clock)
			tt.act(e)
			if got := e.Satisfied("rs"); got != tt.want {
				adds, dels := e.Pending("rs")
				t.Errorf("Satisfied = %v, want %v (pending %d adds, %d deletes)", got, tt.want, adds, dels)
			}
		})
	}
}

// ForgetNamespaces drops the records of the keys in the namespaces it is given, and only
// those: a sharded controller manager handed them away.
func TestForgetNamespaces(t *testing.T) {
	keys := []string{"a/web", "a/api", "b/web", "node-1"}
	tests := []struct {
		name        string
		gone        func(string) bool
		wantDropped int
		wantKept    []string
	}{
		{"one namespace", func(ns string) bool { return ns == "a" }, 2, []string{"b/web", "node-1"}},
		{"none", func(string) bool { return false }, 0, keys},
		{"all", func(string) bool { return true }, 4, nil},
		{"a cluster-scoped key is in the namespace \"\"", func(ns string) bool { return ns == "" }, 1, []string{"a/web", "a/api", "b/web"}},
		{"a namespace that prefixes another is not it", func(ns string) bool { return ns == "b/" || ns == "" || ns == "a/" }, 1, []string{"a/web", "a/api", "b/web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(0, nil)
			for _, k := range keys {
				e.ExpectDeletions(k, []string{k + "-pod"})
			}
			if got := e.ForgetNamespaces(tt.gone); got != tt.wantDropped {
				t.Errorf("ForgetNamespaces dropped %d records, want %d", got, tt.wantDropped)
			}
			var kept []string
			for _, k := range keys {
				if !e.Satisfied(k) {
					kept = append(kept, k)
				}
			}
			if d := cmp.Diff(tt.wantKept, kept); d != "" {
				t.Errorf("records kept (-want +got):\n%s", d)
			}
		})
	}
}
