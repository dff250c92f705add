package informer

import (
	"context"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

func TestFactorySharesAndShutsDown(t *testing.T) {
	e := newEnv(t, apisim.Options{}) // checks for leaked goroutines after its cleanup
	e.create(t, "a", nil)
	f, reg := meteredFactory(t, e)
	ctx := context.Background()
	p1, err := For[*object.Pod](ctx, f, "pods", Selectors{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := For[*object.Pod](ctx, f, "po", Selectors{Namespace: "ns"})
	if p1 != p2 {
		t.Error("the same resource and selectors must share one informer")
	}
	other, _ := For[*object.Pod](ctx, f, "pods", Selectors{Namespace: "ns", LabelSelector: "app=web"})
	if other == p1 {
		t.Error("another selector is another informer")
	}
	raw, err := For[*object.Raw](ctx, f, "pods", Selectors{Namespace: "ns"})
	if err != nil || raw == nil {
		t.Fatalf("another object type: %v", err)
	}
	if _, err := For[*object.Pod](ctx, f, "gadgets", Selectors{}); err == nil {
		t.Error("an unknown resource must be an error")
	}
	rec := newRecorder()
	p1.AddEventHandler(rec, HandlerOptions{Name: "rec"})
	f.Start(ctx)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := f.WaitForSync(wctx); err != nil {
		t.Fatal(err)
	}
	late, err := For[*object.Deployment](ctx, f, "deployments.apps", Selectors{}) // started at once
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, late.HasSynced, "waiting for the late informer")
	e.create(t, "b", nil)
	testwait.Eventually(t, 10*time.Second, func() bool { return rec.count("add ns/b") == 1 }, "waiting for event")

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, fam := range families {
		seen[fam.GetName()] = true
	}
	for _, name := range []string{"kinformer_reflector_lists_total", "kinformer_reflector_watches_total",
		"kinformer_reflector_watch_events_total", "kinformer_reflector_last_resource_version",
		"kinformer_informer_handler_buffer_depth", "kinformer_informer_handler_lag_seconds"} {
		if !seen[name] {
			t.Errorf("metric %s missing", name)
		}
	}
	f.Shutdown() // newEnv's leak check verifies every goroutine is gone
}

func TestMetadataOnlyInformer(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	e.create(t, "a", map[string]string{"app": "web"})
	f := NewFactory(e.client, FactoryOptions{Reflector: fastReflector()})
	ctx := context.Background()
	meta, err := For[*object.Raw](ctx, f, "pods", Selectors{Namespace: "ns", MetadataOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	full, _ := For[*object.Raw](ctx, f, "pods", Selectors{Namespace: "ns"})
	if meta == full {
		t.Fatal("metadata-only must be its own informer")
	}
	f.Start(ctx)
	defer f.Shutdown()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := f.WaitForSync(wctx); err != nil {
		t.Fatal(err)
	}
	e.create(t, "b", nil)
	testwait.Eventually(t, 10*time.Second, func() bool { _, ok := meta.Lister().Get("ns/b"); return ok }, "waiting for the watched pod")
	for _, key := range []string{"ns/a", "ns/b"} {
		o, _ := meta.Lister().Get(key)
		if o.Kind != "PartialObjectMetadata" || o.UID == "" || o.Unknown.Get("spec") != nil {
			t.Errorf("%s: kind %q uid %q, spec %s", key, o.Kind, o.UID, o.Unknown.Get("spec"))
		}
	}
	if o, _ := meta.Lister().Get("ns/a"); o.Labels["app"] != "web" {
		t.Error("labels must be kept")
	}
	if o, _ := full.Lister().Get("ns/a"); o.Unknown.Get("spec") == nil {
		t.Error("the full informer must keep the spec")
	}
}
