package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/controllers/consistency"
	"github.com/kinformer/kinformer/controllers/expectations"
	"github.com/kinformer/kinformer/object"
)

// Forget drops the expectations and the read-your-writes records of the objects in the
// namespaces handed away, and keeps those of the others.
func TestBaseForget(t *testing.T) {
	keys := []string{"gone/web", "gone/api", "kept/web", "cluster-scoped"}
	tests := []struct {
		name         string
		gone         func(string) bool
		noExp        bool // a controller without expectations (the Deployment controller)
		wantRecorded []string
	}{
		{name: "one namespace handed away", gone: func(ns string) bool { return ns == "gone" },
			wantRecorded: []string{"kept/web", "cluster-scoped"}},
		{name: "nothing handed away", gone: func(string) bool { return false }, wantRecorded: keys},
		{name: "everything handed away", gone: func(string) bool { return true }},
		{name: "cluster-scoped objects are in the namespace \"\"", gone: func(ns string) bool { return ns == "" },
			wantRecorded: []string{"gone/web", "gone/api", "kept/web"}},
		{name: "without expectations", gone: func(ns string) bool { return ns == "gone" }, noExp: true,
			wantRecorded: []string{"kept/web", "cluster-scoped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, _ := cacheAt(10)
			written := consistency.New(map[string]consistency.Source{"pods": pods})
			var exp *expectations.Expectations
			if !tt.noExp {
				exp = expectations.New(0, nil)
			}
			b := NewBase(Config[*object.ReplicaSet]{Name: "test", Expectations: exp, Written: written}, Options{})
			t.Cleanup(b.Queue().ShutDown)
			for _, key := range keys {
				if exp != nil {
					exp.ExpectCreations(key, 1)
				}
				written.WroteAt(consistency.Owner{Key: key, UID: "u-" + key}, "pods", "12")
			}

			b.Forget(tt.gone)

			var recorded []string
			for _, key := range keys {
				waits := written.Ready(consistency.Owner{Key: key, UID: "u-" + key}) != nil
				if exp != nil && waits == exp.Satisfied(key) {
					t.Errorf("%s: read-your-writes record kept %v, expectations kept %v: Forget drops both or neither",
						key, waits, !exp.Satisfied(key))
				}
				if waits {
					recorded = append(recorded, key)
				}
			}
			if d := cmp.Diff(tt.wantRecorded, recorded); d != "" {
				t.Errorf("keys with records left (-want +got):\n%s", d)
			}
		})
	}
}
