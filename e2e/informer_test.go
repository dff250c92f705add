package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/eventcheck"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

func cacheOf[T object.Object](inf *informer.Informer[T]) map[string]string {
	out := map[string]string{}
	for _, o := range inf.Cache().List() {
		out[object.Key(o)] = o.Meta().ResourceVersion
	}
	return out
}

func serverOf[T object.Object](t *testing.T, r *listwatch.Resource[T]) map[string]string {
	t.Helper()
	out := map[string]string{}
	_, err := r.ListAll(context.Background(), listwatch.ListOptions{Limit: 100}, func(l *object.List[T]) error {
		for _, o := range l.Items {
			out[object.Key(o)] = o.Meta().ResourceVersion
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// converge waits until the cache and the handler's view both equal the server, and
// checks that every event the handler got followed from the ones before it.
func converge[T object.Object](t *testing.T, what string, inf *informer.Informer[T], v *eventcheck.View[T], r *listwatch.Resource[T]) {
	t.Helper()
	var want map[string]string
	clusterPoll.Eventually(t, 30*time.Second, func() bool {
		want = serverOf(t, r)
		return cmp.Equal(want, cacheOf(inf)) && cmp.Equal(want, v.Snapshot())
	}, "%s: no convergence.\ncache (-server +cache):\n%s\nhandler (-server +handler):\n%s", what,
		testwait.Lazy(func() any { return cmp.Diff(want, cacheOf(inf)) }), testwait.Lazy(func() any { return cmp.Diff(want, v.Snapshot()) }))
	if broken := v.Broken(); len(broken) > 0 {
		t.Errorf("%s: the handler was told inconsistent events: %q", what, broken)
	}
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

func TestInformersUnderChurn(t *testing.T) {
	ns := namespace(t)
	kubectlIn(t, widgetCRD, "apply", "-f", "-")
	kubectl(t, "wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=60s")
	c := client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := informer.NewFactory(c, informer.FactoryOptions{})
	defer f.Shutdown()
	pods, err := informer.For[*object.Pod](ctx, f, "pods", informer.Selectors{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := informer.For[*object.Deployment](ctx, f, "deployments.apps", informer.Selectors{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	widgets, err := informer.For[*object.Raw](ctx, f, "widgets.example.com", informer.Selectors{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	pv, dv, wv := eventcheck.New[*object.Pod](), eventcheck.New[*object.Deployment](), eventcheck.New[*object.Raw]()
	pods.AddEventHandler(pv, informer.HandlerOptions{})
	deps.AddEventHandler(dv, informer.HandlerOptions{})
	widgets.AddEventHandler(wv, informer.HandlerOptions{})
	f.Start(ctx)
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := f.WaitForSync(wctx); err != nil {
		t.Fatal(err)
	}

	// Churn: pods with kubectl, deployments and widgets with the REST client.
	for i := range 6 {
		kubectl(t, "-n", ns, "run", fmt.Sprint("p", i), "--image=nginx", "--restart=Never", "--labels=round=0")
	}
	kubectl(t, "-n", ns, "label", "pods", "--all", "round=1", "--overwrite")
	kubectl(t, "-n", ns, "delete", "pod", "p0", "p1", "--grace-period=0", "--force")
	depRes := resource[*object.Deployment](t, c, "deployments.apps", ns)
	widgetRes := resource[*object.Raw](t, c, "widgets.example.com", ns)
	for i := range 4 {
		d := &object.Deployment{ObjectMeta: object.ObjectMeta{Name: fmt.Sprint("d", i)}}
		d.Spec.Selector = &object.LabelSelector{MatchLabels: map[string]string{"app": "d"}}
		d.Spec.Template.Labels = map[string]string{"app": "d"}
		d.Spec.Template.Spec = object.MustPodSpec(`{"containers":[{"name":"c","image":"nginx"}]}`)
		if _, err := depRes.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		w := &object.Raw{TypeMeta: object.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, ObjectMeta: object.ObjectMeta{Name: fmt.Sprint("w", i)}}
		w.Unknown.Set("spec", json.RawMessage(`{"size":`+fmt.Sprint(i)+`}`))
		if _, err := widgetRes.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := depRes.Patch(ctx, "d0", listwatch.MergePatch, []byte(`{"spec":{"replicas":3}}`), ""); err != nil {
		t.Fatal(err)
	}
	if err := widgetRes.Delete(ctx, "w1", listwatch.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "delete", "widget", "w2")
	kubectlIn(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2, namespace: "+ns+"}\nspec: {size: 20}\n",
		"create", "-f", "-") // the same name, another object
	converge(t, "pods", pods, pv, resource[*object.Pod](t, c, "pods", ns))
	converge(t, "deployments", deps, dv, depRes)
	converge(t, "widgets", widgets, wv, widgetRes)

	// kinformer cache verify, as a process, agrees.
	out, err := exec.Command(shared.bin, "cache", "verify", "pods", "-n", ns, "--kubeconfig", shared.cluster.Kubeconfig).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "verified 4 objects") || !strings.Contains(string(out), ": 0 difference(s)") {
		t.Errorf("cache verify: %v\n%s", err, out)
	}
}

// TestCompactionForcesRelist: configmap watches in this cluster bypass the watch cache,
// so a watch resumed from a resourceVersion that etcd has compacted gets 410 and the
// informer must relist. Churn in another namespace moves etcd on while the informer's
// namespace stays quiet and its short watches keep ending and resuming.
func TestCompactionForcesRelist(t *testing.T) {
	ns, busy := namespace(t), namespace(t)
	kubectl(t, "-n", ns, "create", "configmap", "before")
	c := client(t)
	reg := prometheus.NewRegistry()
	m, err := informer.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cms := resource[*object.Raw](t, c, "configmaps", ns)
	inf, err := informer.New[*object.Raw](cms, informer.Options[*object.Raw]{Name: "configmaps", Metrics: m,
		Reflector: reflector.Options{WatchTimeoutMin: 2 * time.Second, WatchTimeoutMax: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	v := eventcheck.New[*object.Raw]()
	inf.AddEventHandler(v, informer.HandlerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if err := informer.WaitForSync(testwait.Context(t, 30*time.Second), inf); err != nil {
		t.Fatal(err)
	}
	busyRes := resource[*object.Raw](t, c, "configmaps", busy)
	i := 0
	clusterPoll.Eventually(t, 40*time.Second, func() bool {
		if relists(t, reg) > 0 {
			return true
		}
		o := &object.Raw{ObjectMeta: object.ObjectMeta{Name: fmt.Sprint("churn-", i)}}
		if _, err := busyRes.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		i++
		return false
	}, "no relist under churn and compaction; status %+v", testwait.Lazy(func() any { return inf.Status() }))
	kubectl(t, "-n", ns, "create", "configmap", "after")
	converge(t, "configmaps after the relist", inf, v, cms)
}

func relists(t *testing.T, reg *prometheus.Registry) float64 {
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "kinformer_reflector_relists_total" {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

func TestStreamingListMatchesListAndWatch(t *testing.T) {
	ns := namespace(t)
	for i := range 5 {
		kubectl(t, "-n", ns, "create", "secret", "generic", fmt.Sprint("s", i), "--from-literal=k=v")
	}
	c := client(t)
	secrets := resource[*object.Raw](t, c, "secrets", ns)
	streaming, err := informer.New[*object.Raw](secrets, informer.Options[*object.Raw]{Name: "streaming", Reflector: reflector.Options{StreamingList: true}})
	if err != nil {
		t.Fatal(err)
	}
	classic, err := informer.New[*object.Raw](secrets, informer.Options[*object.Raw]{Name: "classic"})
	if err != nil {
		t.Fatal(err)
	}
	sv, cv := eventcheck.New[*object.Raw](), eventcheck.New[*object.Raw]()
	streaming.AddEventHandler(sv, informer.HandlerOptions{})
	classic.AddEventHandler(cv, informer.HandlerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, inf := range []*informer.Informer[*object.Raw]{streaming, classic} {
		wg.Add(1)
		go func() { defer wg.Done(); inf.Run(ctx) }()
	}
	defer func() { cancel(); wg.Wait() }()
	if err := informer.WaitForSync(testwait.Context(t, 30*time.Second), streaming, classic); err != nil {
		t.Fatal(err)
	}
	if streaming.Status().StreamingFallback {
		t.Errorf("the real apiserver's streaming list was given up: %v", streaming.Status().LastError)
	}
	kubectl(t, "-n", ns, "delete", "secret", "s0")
	kubectl(t, "-n", ns, "create", "secret", "generic", "late")
	converge(t, "streaming", streaming, sv, secrets)
	converge(t, "classic", classic, cv, secrets)
	if d := cmp.Diff(cacheOf(classic), cacheOf(streaming)); d != "" {
		t.Errorf("streaming vs list+watch caches:\n%s", d)
	}
}

func TestMetadataOnlyInformerAgainstRealAPIServer(t *testing.T) {
	ns := namespace(t)
	kubectlIn(t, strings.Replace(deploymentYAML, "name: roundtrip", "name: meta", 1), "-n", ns, "apply", "-f", "-")
	c := client(t)
	f := informer.NewFactory(c, informer.FactoryOptions{})
	defer f.Shutdown()
	ctx := context.Background()
	inf, err := informer.For[*object.Raw](ctx, f, "deployments.apps", informer.Selectors{Namespace: ns, MetadataOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	if err := f.WaitForSync(testwait.Context(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "label", "deployment", "meta", "watched=yes")
	var o *object.Raw
	clusterPoll.Eventually(t, 20*time.Second, func() bool {
		var ok bool
		o, ok = inf.Lister().Get(ns + "/meta")
		return ok && o.Labels["watched"] == "yes"
	}, "the label change never reached the metadata-only cache: %+v", testwait.Lazy(func() any { return o }))
	if o.Kind != "PartialObjectMetadata" || o.APIVersion != "meta.k8s.io/v1" || o.Unknown.Get("spec") != nil {
		t.Errorf("kind %q apiVersion %q spec %s", o.Kind, o.APIVersion, o.Unknown.Get("spec"))
	}
}
