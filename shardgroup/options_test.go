package shardgroup

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

func TestNewValidates(t *testing.T) {
	client, err := listwatch.New(&listwatch.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	nop := func(context.Context, shard.Set) error { return nil }
	valid := Options{Group: "ctrl", ID: "pod-0", Acquire: nop, Release: nop}
	for _, tt := range []struct {
		name   string
		change func(*Options)
		want   string // in the error; "" for none
	}{
		{"defaults", func(*Options) {}, ""},
		{"dotted id", func(o *Options) { o.ID = "node-1.example" }, ""},
		{"an id a plan's name could take", func(o *Options) { o.ID = "x.plan" }, "taken for a group's plan"},
		{"no group", func(o *Options) { o.Group = "" }, "group"},
		{"group not a label value", func(o *Options) { o.Group = "-ctrl" }, "group"},
		{"group too long", func(o *Options) { o.Group = strings.Repeat("g", 64) }, "group"},
		{"no id", func(o *Options) { o.ID = "" }, "ID is required"},
		{"upper-case id", func(o *Options) { o.ID = "Pod-0" }, "not a DNS subdomain"},
		{"id with a slash", func(o *Options) { o.ID = "a/b" }, "not a DNS subdomain"},
		{"id with empty label", func(o *Options) { o.ID = "a..b" }, "not a DNS subdomain"},
		{"bad namespace", func(o *Options) { o.Namespace = "Kube_System" }, "namespace"},
		{"no callbacks", func(o *Options) { o.Acquire = nil }, "Acquire and Release callbacks"},
		{"slots", func(o *Options) { o.Slots = shard.MaxSlots }, "number of slots"},
		{"handover shorter than a round", func(o *Options) { o.HandoverTimeout = time.Second }, "HandoverTimeout"},
		{"field", func(o *Options) { o.Field = "object.metadata.name" }, "field"},
		{"lease not above deadline", func(o *Options) { o.LeaseDuration = 10 * time.Second }, "LeaseDuration"},
		{"deadline not above retry", func(o *Options) { o.RenewDeadline = 2 * time.Second; o.LeaseDuration = 3 * time.Second }, "RenewDeadline"},
		{"negative", func(o *Options) { o.RetryPeriod = -time.Second }, "negative"},
	} {
		o := valid
		tt.change(&o)
		_, err := New(client, o)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: New: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: New = %v, want an error about %q", tt.name, err, tt.want)
		}
	}
	if _, err := New(nil, valid); err == nil {
		t.Error("New without a client succeeded")
	}
}

// A Lease of the member's name that another group or member holds is never taken over:
// Run says whose it is.
func TestForeignLease(t *testing.T) {
	for _, tt := range []struct {
		name   string
		labels map[string]string
		holder string
		want   string
	}{
		{"other group", map[string]string{GroupLabel: "ctrl-x"}, "a", `labelled shard.kinformer.io/group="ctrl-x"`},
		{"no group", nil, "", `labelled shard.kinformer.io/group=""`},
		{"other holder", map[string]string{GroupLabel: group}, "b", `held by "b"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			l := &object.Lease{ObjectMeta: object.ObjectMeta{Name: leaseName(group, "a"), Namespace: namespace, Labels: tt.labels}}
			l.Spec.HolderIdentity = &tt.holder
			if _, err := h.leases.Create(context.Background(), l); err != nil {
				t.Fatal(err)
			}
			a := h.start("a")
			h.until(time.Minute, "Run returns", func() bool {
				select {
				case <-a.done:
					return true
				default:
					return false
				}
			})
			if a.err == nil || !strings.Contains(a.err.Error(), tt.want) {
				t.Errorf("Run = %v, want an error saying %s", a.err, tt.want)
			}
			if got, _ := h.lease("a"); lease.Holder(got.Spec) != tt.holder {
				t.Errorf("the Lease was changed: %+v", got)
			}
		})
	}
}
