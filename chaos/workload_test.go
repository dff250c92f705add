package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// writers churn pods, configmaps, widgets and Deployments through the direct client
// (faults are for the engine, not for the writers) until stopped; Pause holds them.
type writers struct {
	paused atomic.Bool
	writes atomic.Int64
	stop   func()
}

const deployments = 3

func startWriters(ctx context.Context, direct *listwatch.Client, ns string, seed int64) (*writers, error) {
	res := func(name string) (*listwatch.Resource[*object.Raw], error) {
		info, err := direct.Discover(ctx, name)
		if err != nil {
			return nil, err
		}
		return listwatch.For[*object.Raw](direct, info, ns), nil
	}
	pods, err := res("pods")
	if err != nil {
		return nil, err
	}
	cms, err := res("configmaps")
	if err != nil {
		return nil, err
	}
	widgets, err := res("widgets.chaos.kinformer.io")
	if err != nil {
		return nil, err
	}
	dInfo, err := direct.Discover(ctx, "deployments.apps")
	if err != nil {
		return nil, err
	}
	deploys := listwatch.For[*object.Deployment](direct, dInfo, ns)
	for i := range deployments {
		two := int32(2)
		d := &object.Deployment{ObjectMeta: object.ObjectMeta{Name: fmt.Sprint("d", i)}, Spec: object.DeploymentSpec{Replicas: &two,
			Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprint("d", i)}},
			Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": fmt.Sprint("d", i)}},
				Spec: object.MustPodSpec(`{"containers":[{"name":"c","image":"nginx:1"}]}`)}}}
		if _, err := deploys.Create(ctx, d); err != nil {
			return nil, err
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	w := &writers{}
	var wg sync.WaitGroup
	churn := func(r *listwatch.Resource[*object.Raw], prefix string, max int, body func(name string, n int) *object.Raw, seed uint64) {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 7))
		live := map[int]bool{}
		for n := 0; pause(runCtx, time.Duration(20+rng.IntN(40))*time.Millisecond); n++ {
			if w.paused.Load() {
				continue
			}
			i := rng.IntN(max)
			name := fmt.Sprintf("%s-%d", prefix, i)
			switch {
			case !live[i]:
				if _, err := r.Create(runCtx, body(name, n)); err == nil || object.IsAlreadyExists(err) {
					live[i] = true
				}
			case rng.IntN(3) > 0:
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"n":"%d"}}}`, n)
				_, _ = r.Patch(runCtx, name, listwatch.MergePatch, []byte(patch), "")
			default:
				grace := int64(0)
				if err := r.Delete(runCtx, name, listwatch.DeleteOptions{GracePeriodSeconds: &grace}); err == nil || object.IsNotFound(err) {
					delete(live, i)
				}
			}
			w.writes.Add(1)
		}
	}
	raw := func(kind, apiVersion, extra string) func(string, int) *object.Raw {
		return func(name string, n int) *object.Raw {
			o := &object.Raw{TypeMeta: object.TypeMeta{APIVersion: apiVersion, Kind: kind}, ObjectMeta: object.ObjectMeta{Name: name,
				Labels: map[string]string{"churn": "yes"}}}
			if extra != "" {
				o.Unknown.Set("spec", []byte(extra))
			}
			if kind == "ConfigMap" {
				o.Unknown = object.Unknown{}
				o.Unknown.Set("data", []byte(fmt.Sprintf(`{"n":"%d"}`, n)))
			}
			return o
		}
	}
	wg.Add(4)
	go churn(pods, "bare", 15, raw("Pod", "v1", `{"containers":[{"name":"c","image":"busybox"}]}`), uint64(seed))
	go churn(cms, "cm", 120, raw("ConfigMap", "v1", ""), uint64(seed)+1)
	go churn(widgets, "w", 20, raw("Widget", "chaos.kinformer.io/v1", `{"size":1}`), uint64(seed)+2)
	go func() { // Deployments: scale and roll out now and then
		defer wg.Done()
		rng := rand.New(rand.NewPCG(uint64(seed)+3, 7))
		for n := 0; pause(runCtx, time.Duration(500+rng.IntN(1500))*time.Millisecond); n++ {
			if w.paused.Load() {
				continue
			}
			name := fmt.Sprint("d", rng.IntN(deployments))
			patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1+rng.IntN(4))
			if rng.IntN(2) == 0 {
				patch = fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:%d"}]}}}}`, 1+rng.IntN(5))
			}
			_, _ = deploys.Patch(runCtx, name, listwatch.MergePatch, []byte(patch), "")
			w.writes.Add(1)
		}
	}()
	w.stop = func() { cancel(); wg.Wait() }
	return w, nil
}
