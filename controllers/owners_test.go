package controllers

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// replicaSetOwners returns Owners over a cache of the given ReplicaSets, created in
// namespace ns of a simulator.
func replicaSetOwners(t *testing.T, rss ...*object.ReplicaSet) (Owners[*object.ReplicaSet], map[string]*object.ReplicaSet) {
	t.Helper()
	_, c := simtest.Start(t, apisim.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	info, err := c.Discover(ctx, "replicasets.apps")
	if err != nil {
		t.Fatal(err)
	}
	created := map[string]*object.ReplicaSet{}
	for _, rs := range rss {
		got, err := listwatch.For[*object.ReplicaSet](c, info, "ns").Create(ctx, rs)
		if err != nil {
			t.Fatal(err)
		}
		created[got.Name] = got
	}
	f := informer.NewFactory(c, informer.FactoryOptions{})
	inf, err := informer.For[*object.ReplicaSet](ctx, f, "replicasets.apps", informer.Selectors{})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	t.Cleanup(func() { cancel(); f.Shutdown() })
	if err := informer.WaitForSync(testwait.Context(t, 10*time.Second), inf); err != nil {
		t.Fatal(err)
	}
	return Owners[*object.ReplicaSet]{Lister: inf.Lister(), Group: "apps", Kind: "ReplicaSet",
		Selector: func(rs *object.ReplicaSet) *object.LabelSelector { return rs.Spec.Selector }}, created
}

func selecting(name string, sel *object.LabelSelector) *object.ReplicaSet {
	return &object.ReplicaSet{ObjectMeta: object.ObjectMeta{Name: name}, Spec: object.ReplicaSetSpec{Selector: sel}}
}

// An owner is found through a ControllerRef only when the ref names its kind, its group
// and its UID; an orphan is offered to every owner whose non-empty selector matches it.
func TestOwners(t *testing.T) {
	owners, rss := replicaSetOwners(t,
		selecting("web", &object.LabelSelector{MatchLabels: map[string]string{"app": "web"}}),
		selecting("web-and-api", &object.LabelSelector{MatchExpressions: []object.LabelSelectorRequirement{
			{Key: "app", Operator: "In", Values: []string{"web", "api"}}}}),
		selecting("everything", &object.LabelSelector{}),
		selecting("no-selector", nil),
	)
	web := rss["web"]

	resolves := []struct {
		name string
		ref  object.OwnerReference
		want bool
	}{
		{"the owner", object.NewControllerRef(&web.ObjectMeta, "apps/v1", "ReplicaSet"), true},
		{"another version of its group", object.NewControllerRef(&web.ObjectMeta, "apps/v1beta2", "ReplicaSet"), true},
		{"another group", object.NewControllerRef(&web.ObjectMeta, "extensions/v1beta1", "ReplicaSet"), false},
		{"the core group", object.NewControllerRef(&web.ObjectMeta, "v1", "ReplicaSet"), false},
		{"another kind", object.NewControllerRef(&web.ObjectMeta, "apps/v1", "Deployment"), false},
		{"its name with another UID", object.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "recreated"}, false},
		{"an owner not in the cache", object.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "gone", UID: web.UID}, false},
	}
	for _, tt := range resolves {
		t.Run("Resolve/"+tt.name, func(t *testing.T) {
			got, ok := owners.Resolve("ns", &tt.ref)
			if ok != tt.want || ok && got.UID != web.UID {
				t.Errorf("Resolve = %v, %v; want the owner: %v", got, ok, tt.want)
			}
		})
	}
	if _, ok := owners.Resolve("other", &resolves[0].ref); ok {
		t.Error("Resolve found an owner in another namespace")
	}

	selects := []struct {
		name   string
		ns     string
		labels map[string]string
		want   []string
	}{
		{"matched by two; empty and nil selectors select nothing", "ns", map[string]string{"app": "web"}, []string{"web", "web-and-api"}},
		{"matched by one", "ns", map[string]string{"app": "api"}, []string{"web-and-api"}},
		{"no labels", "ns", nil, nil},
		{"another namespace", "other", map[string]string{"app": "web"}, nil},
	}
	for _, tt := range selects {
		t.Run("Selecting/"+tt.name, func(t *testing.T) {
			var got []string
			for _, rs := range owners.Selecting(tt.ns, tt.labels) {
				got = append(got, rs.Name)
			}
			if d := cmp.Diff(tt.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("owners (-want +got):\n%s", d)
			}
		})
	}
}
