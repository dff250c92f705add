package deployment

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/controllers/events"
	"github.com/kinformer/kinformer/controllers/replicaset"
	"github.com/kinformer/kinformer/fakekubelet"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// simEnv runs both controllers, their recorders and a fake kubelet on a simulator.
type simEnv struct {
	t      *testing.T
	c      *listwatch.Client
	deploy *listwatch.Resource[*object.Deployment]
	rss    *listwatch.Resource[*object.ReplicaSet]
	pods   *listwatch.Resource[*object.Pod]
	evs    *listwatch.Resource[*object.Raw]
}

func newSimEnv(t *testing.T) *simEnv {
	t.Helper()
	_, c := simtest.Start(t, apisim.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	f := informer.NewFactory(c, informer.FactoryOptions{})
	rec, err := events.NewRecorder(c, events.Options{Component: "deployment-controller"})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := New(ctx, f, c, Options{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	rsc, err := replicaset.New(ctx, f, c, replicaset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kubelet, err := fakekubelet.New(fakekubelet.Options{Client: c, ReadyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	var wg sync.WaitGroup
	for _, run := range []func(){
		func() { dc.Run(ctx, ctx, 2) }, func() { rsc.Run(ctx, ctx, 2) }, func() { rec.Run(ctx) }, func() { _ = kubelet.Run(ctx) },
	} {
		wg.Add(1)
		go func() { defer wg.Done(); run() }()
	}
	t.Cleanup(func() { cancel(); wg.Wait(); f.Shutdown() })
	e := &simEnv{t: t, c: c}
	info := func(r string) listwatch.ResourceInfo {
		i, err := c.Discover(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	e.deploy = listwatch.For[*object.Deployment](c, info("deployments.apps"), "ns")
	e.rss = listwatch.For[*object.ReplicaSet](c, info("replicasets.apps"), "ns")
	e.pods = listwatch.For[*object.Pod](c, info("pods"), "ns")
	e.evs = listwatch.For[*object.Raw](c, info("events"), "ns")
	return e
}

func (e *simEnv) get(name string) *object.Deployment {
	d, err := e.deploy.Get(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *simEnv) complete(name string) func() bool {
	return func() bool {
		d := e.get(name)
		c := condition(d.Status.Conditions, condProgressing)
		return complete(d, &d.Status) && c != nil && c.Reason == reasonNewRSAvailable
	}
}

func (e *simEnv) owned(d *object.Deployment) []*object.ReplicaSet {
	l, err := e.rss.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*object.ReplicaSet
	for _, rs := range l.Items {
		if ref := object.ControllerRef(&rs.ObjectMeta); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	return out
}

func newDeployment(name, spec string, replicas int32) *object.Deployment {
	return &object.Deployment{ObjectMeta: object.ObjectMeta{Name: name},
		Spec: object.DeploymentSpec{Replicas: &replicas, Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: object.MustPodSpec(spec)}}}
}

// A field no API version has yet goes from the Deployment to its ReplicaSet and pods.
func TestUnknownTemplateFieldsReachThePods(t *testing.T) {
	e := newSimEnv(t)
	spec := `{"containers":[{"name":"c","image":"nginx","futureContainerField":{"x":[1,true]}}],"aFieldFromTheFuture":"kept"}`
	if _, err := e.deploy.Create(context.Background(), newDeployment("web", spec, 2)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 15*time.Second, e.complete("web"),
		"%+v", testwait.Lazy(func() any { return e.get("web").Status }))
	var want any
	_ = json.Unmarshal([]byte(spec), &want)
	l, _ := e.pods.List(context.Background(), listwatch.ListOptions{})
	if len(l.Items) != 2 {
		t.Fatalf("%d pods", len(l.Items))
	}
	for _, p := range l.Items {
		b, _ := json.Marshal(p.Spec)
		var got map[string]any
		_ = json.Unmarshal(b, &got)
		delete(got, "nodeName") // set by the binding
		if d := cmp.Diff(want, any(got)); d != "" {
			t.Errorf("pod %s spec (-deployment +pod):\n%s", p.Name, d)
		}
	}
}

// A ReplicaSet that holds the new ReplicaSet's name with another template makes the
// controller raise collisionCount and use another name.
func TestHashCollision(t *testing.T) {
	e := newSimEnv(t)
	d := newDeployment("web", `{"containers":[{"name":"c","image":"nginx"}]}`, 1)
	hash, err := templateHash(&d.Spec.Template, nil)
	if err != nil {
		t.Fatal(err)
	}
	one := int32(0)
	squatter := &object.ReplicaSet{ObjectMeta: object.ObjectMeta{Name: "web-" + hash, Labels: map[string]string{"other": "x"}},
		Spec: object.ReplicaSetSpec{Replicas: &one, Selector: &object.LabelSelector{MatchLabels: map[string]string{"other": "x"}},
			Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"other": "x"}}, Spec: object.MustPodSpec(`{"containers":[{"name":"o","image":"busybox"}]}`)}}}
	if _, err := e.rss.Create(context.Background(), squatter); err != nil {
		t.Fatal(err)
	}
	if _, err := e.deploy.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 15*time.Second, e.complete("web"),
		"%+v", testwait.Lazy(func() any { return e.get("web").Status }))
	got := e.get("web")
	if got.Status.CollisionCount == nil || *got.Status.CollisionCount != 1 {
		t.Errorf("collisionCount %v, want 1", got.Status.CollisionCount)
	}
	rss := e.owned(got)
	if len(rss) != 1 || rss[0].Name == squatter.Name || !strings.HasPrefix(rss[0].Name, "web-") {
		t.Errorf("new ReplicaSet %v", rss)
	}
}

// A rollout records kube-controller-manager's events on the Deployment.
func TestScalingEvents(t *testing.T) {
	e := newSimEnv(t)
	if _, err := e.deploy.Create(context.Background(), newDeployment("web", `{"containers":[{"name":"c","image":"v1"}]}`, 2)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 15*time.Second, e.complete("web"),
		"%+v", testwait.Lazy(func() any { return e.get("web").Status }))
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"v2"}]}}}}`
	if _, err := e.deploy.Patch(context.Background(), "web", listwatch.MergePatch, []byte(patch), ""); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 15*time.Second, func() bool { return e.complete("web")() && e.get("web").Status.ObservedGeneration == 2 },
		"%+v", testwait.Lazy(func() any { return e.get("web").Status }))
	d := e.get("web")
	if d.Annotations[RevisionAnnotation] != "2" {
		t.Errorf("deployment revision %q, want 2", d.Annotations[RevisionAnnotation])
	}
	var first, second string
	for _, rs := range e.owned(d) {
		if rs.Annotations[RevisionAnnotation] == "1" {
			first = rs.Name
		} else {
			second = rs.Name
		}
	}
	want := []string{
		"Scaled up replica set " + first + " from 0 to 2",
		"Scaled up replica set " + second + " from 0 to 1",
		"Scaled down replica set " + first + " from 2 to 1",
	}
	testwait.Eventually(t, 15*time.Second, func() bool {
		msgs := e.messages()
		for _, w := range want {
			if !strings.Contains(msgs, w) {
				return false
			}
		}
		return true
	}, "%s", testwait.Lazy(func() any { return e.messages() }))
}

func (e *simEnv) messages() string {
	l, err := e.evs.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var msgs []string
	for _, ev := range l.Items {
		var m struct{ Reason, Message string }
		b, _ := json.Marshal(ev)
		_ = json.Unmarshal(b, &m)
		if m.Reason == "ScalingReplicaSet" {
			msgs = append(msgs, m.Message)
		}
	}
	return strings.Join(msgs, "\n")
}

// A ReplicaSet made by another controller (kube-controller-manager's hash, which this
// engine cannot reproduce) with the Deployment's template is adopted and carries on as
// the new ReplicaSet: no second ReplicaSet, no new pods.
func TestCarriesOnWithAnotherHashForTheSameTemplate(t *testing.T) {
	e := newSimEnv(t)
	spec := `{"containers":[{"name":"c","image":"nginx"}]}`
	two := int32(2)
	foreign := &object.ReplicaSet{ObjectMeta: object.ObjectMeta{Name: "web-5d9c7b8f6",
		Labels: map[string]string{"app": "web", PodTemplateHashLabel: "5d9c7b8f6"}, Annotations: map[string]string{RevisionAnnotation: "4"}},
		Spec: object.ReplicaSetSpec{Replicas: &two,
			Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": "web", PodTemplateHashLabel: "5d9c7b8f6"}},
			Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": "web", PodTemplateHashLabel: "5d9c7b8f6"}},
				Spec: object.MustPodSpec(spec)}}}
	if _, err := e.rss.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	// Paused, it adopts but creates nothing: the foreign ReplicaSet is known before the
	// first sync that could create one (as for any Deployment that existed already).
	d := newDeployment("web", spec, 2)
	d.Spec.Paused = true
	if _, err := e.deploy.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 15*time.Second, func() bool { return len(e.owned(e.get("web"))) == 1 }, "not adopted")
	if _, err := e.deploy.Patch(context.Background(), "web", listwatch.MergePatch, []byte(`{"spec":{"paused":false}}`), ""); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 15*time.Second, e.complete("web"),
		"%+v", testwait.Lazy(func() any { return e.get("web").Status }))
	d = e.get("web")
	rss := e.owned(d)
	if len(rss) != 1 || rss[0].Name != foreign.Name {
		t.Fatalf("ReplicaSets %v, want only the adopted %s", rss, foreign.Name)
	}
	if d.Annotations[RevisionAnnotation] != "4" {
		t.Errorf("deployment revision %q, want the adopted ReplicaSet's 4", d.Annotations[RevisionAnnotation])
	}
}
