package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/indexer"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// podImages is an embedder's projection of a pod: its metadata and its containers'
// images (object.CheckProjection).
type podImages struct {
	Metadata object.ObjectMeta `json:"metadata"`
	Spec     struct {
		Containers []struct {
			Name  string `json:"name"`
			Image string `json:"image"`
		} `json:"containers"`
	} `json:"spec"`
}

func (p *podImages) Meta() *object.ObjectMeta { return &p.Metadata }

// An informer of a user-declared struct against the real apiserver: pods created with
// kubectl are cached as their images, indexed by image, and follow an image change;
// Update of one is refused and a patch goes through.
func TestInformerOfAProjection(t *testing.T) {
	ns := namespace(t)
	for _, p := range []struct{ name, images string }{{"web", "nginx:1.27,envoy:1.30"}, {"db", "postgres:16"}} {
		var containers []string
		for i, img := range strings.Split(p.images, ",") {
			containers = append(containers, `{"name":"c`+string(rune('0'+i))+`","image":"`+img+`"}`)
		}
		kubectlIn(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"`+p.name+`","namespace":"`+ns+`"},"spec":{"containers":[`+strings.Join(containers, ",")+`]}}`,
			"apply", "-f", "-")
	}
	c := client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := informer.NewFactory(c, informer.FactoryOptions{})
	defer f.Shutdown()
	inf, err := informer.For[*podImages](ctx, f, "pods", informer.Selectors{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	byImage := func(p *podImages) ([]string, error) {
		var out []string
		for _, c := range p.Spec.Containers {
			out = append(out, c.Image)
		}
		return out, nil
	}
	if err := inf.Cache().AddIndexers(map[string]indexer.IndexFunc[*podImages]{"image": byImage}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := f.WaitForSync(wctx); err != nil {
		t.Fatal(err)
	}
	holders := func(image string) []string {
		got, err := inf.Lister().ByIndex("image", image)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range got {
			names = append(names, p.Metadata.Name)
		}
		slices.Sort(names)
		return names
	}
	clusterPoll.Eventually(t, 30*time.Second, func() bool { return slices.Equal(holders("envoy:1.30"), []string{"web"}) },
		"the pod web is not indexed by envoy:1.30: %v", holders("envoy:1.30"))

	kubectl(t, "-n", ns, "set", "image", "pod/web", "c1=envoy:1.31")
	clusterPoll.Eventually(t, 30*time.Second, func() bool {
		return slices.Equal(holders("envoy:1.31"), []string{"web"}) && len(holders("envoy:1.30")) == 0
	}, "the image change did not reach the index: 1.31 %v, 1.30 %v", holders("envoy:1.31"), holders("envoy:1.30"))

	pods := resource[*podImages](t, c, "pods", ns)
	web, ok := inf.Lister().Namespace(ns).Get("web")
	if !ok {
		t.Fatal("the pod web is not cached")
	}
	if _, err := pods.Update(ctx, object.DeepCopy(web)); err == nil || !strings.Contains(err.Error(), "Patch") {
		t.Errorf("Update of a projection: %v, want a refusal", err)
	}
	if _, err := pods.Patch(ctx, "web", listwatch.MergePatch, []byte(`{"metadata":{"labels":{"seen":"yes"}}}`), ""); err != nil {
		t.Errorf("Patch: %v", err)
	}
	out := kubectl(t, "-n", ns, "get", "pod", "web", "-o", "jsonpath={.spec.containers[*].image} {.metadata.labels.seen}")
	if out != "nginx:1.27 envoy:1.31 yes" {
		t.Errorf("the pod after the patch: %q", out)
	}
}
