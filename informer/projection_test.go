package informer

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// podImages is an embedder's projection of a pod (object.CheckProjection).
type podImages struct {
	Metadata object.ObjectMeta `json:"metadata"`
	Spec     struct {
		Containers []struct {
			Image string `json:"image"`
		} `json:"containers"`
	} `json:"spec"`
}

func (p *podImages) Meta() *object.ObjectMeta { return &p.Metadata }

func imagesOf(p *podImages) ([]string, error) {
	var out []string
	for _, c := range p.Spec.Containers {
		out = append(out, c.Image)
	}
	return out, nil
}

// An informer of an embedder's projection caches the members it declares, typed, and an
// index over them works; writing one back is refused (it would drop the rest), a patch
// is not; a projection that embeds ObjectMeta is refused by For.
func TestInformerOfAProjection(t *testing.T) {
	leakcheck.Check(t)
	e := newEnv(t, apisim.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for name, images := range map[string][]string{"web": {"nginx:1.27", "envoy:1.30"}, "db": {"postgres:16"}} {
		p := &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}}
		for _, img := range images {
			p.Spec.Containers = append(p.Spec.Containers, object.NewContainer(strings.Split(img, ":")[0], img))
		}
		if _, err := e.pods.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	f := NewFactory(e.client, FactoryOptions{})
	defer f.Shutdown()
	inf, err := For[*podImages](ctx, f, "pods", Selectors{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	if err := inf.Cache().AddIndexers(map[string]indexer.IndexFunc[*podImages]{"image": imagesOf}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	if err := f.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := inf.Lister().ByIndex("image", "envoy:1.30")
	if err != nil || len(got) != 1 || got[0].Metadata.Name != "web" || len(got[0].Spec.Containers) != 2 {
		t.Fatalf("ByIndex(image, envoy:1.30) = %+v, %v; want the pod web with its two containers", got, err)
	}
	all := inf.Lister().List(object.Everything())
	var names []string
	for _, p := range all {
		names = append(names, p.Metadata.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"db", "web"}) {
		t.Errorf("cached %v", names)
	}

	info, err := e.client.Discover(ctx, "pods")
	if err != nil {
		t.Fatal(err)
	}
	res := listwatch.For[*podImages](e.client, info, "ns")
	if _, err := res.Update(ctx, object.DeepCopy(got[0])); err == nil || !strings.Contains(err.Error(), "Patch") {
		t.Errorf("Update of a projection: %v, want a refusal that points at Patch", err)
	}
	if _, err := res.Patch(ctx, "web", listwatch.MergePatch, []byte(`{"metadata":{"labels":{"seen":"yes"}}}`), ""); err != nil {
		t.Errorf("Patch through a projection's resource: %v", err)
	}
	if _, err := For[*embedsMetaPod](ctx, f, "pods", Selectors{}); err == nil || !strings.Contains(err.Error(), "embeds object.ObjectMeta") {
		t.Errorf("For of a projection embedding ObjectMeta: %v", err)
	}
}

type embedsMetaPod struct {
	object.ObjectMeta `json:"metadata"`
}
