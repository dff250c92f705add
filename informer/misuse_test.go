package informer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/object"
)

// What the library can tell is wrong fails when the informer is made, with an error
// that says what to do, rather than a cache that fills with the wrong kind or an
// informer that retries forever.
func TestForRefusesWhatCannotWork(t *testing.T) {
	leakcheck.Check(t)
	e := newEnv(t, apisim.Options{})
	f := NewFactory(e.client, FactoryOptions{})
	defer f.Shutdown()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		for_ func() error
		want string
	}{
		{"Pods of a resource of ConfigMaps", func() error {
			_, err := For[*object.Pod](ctx, f, "configmaps", Selectors{})
			return err
		}, "holds ConfigMap objects, not Pod"},
		{"a label selector that does not parse", func() error {
			_, err := For[*object.Pod](ctx, f, "pods", Selectors{LabelSelector: "app in web"})
			return err
		}, `invalid label selector "app in web"`},
		{"a field selector that does not parse", func() error {
			_, err := For[*object.Pod](ctx, f, "pods", Selectors{FieldSelector: "spec.nodeName"})
			return err
		}, `invalid field selector "spec.nodeName"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.for_()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("For: %v, want an error saying %q", err, tc.want)
			}
		})
	}
	// What does work still does: any kind into *object.Raw, a metadata-only cache.
	if _, err := For[*object.Raw](ctx, f, "configmaps", Selectors{}); err != nil {
		t.Errorf("Raw of configmaps: %v", err)
	}
}

// WaitForSync on a factory never started fails at once, naming the informers and the
// missing call; once started, a timeout names each informer that is not synced.
func TestWaitForSyncSaysWhatIsMissing(t *testing.T) {
	leakcheck.Check(t)
	e := newEnv(t, apisim.Options{})
	f := NewFactory(e.client, FactoryOptions{})
	defer f.Shutdown()
	if _, err := For[*object.Pod](context.Background(), f, "pods", Selectors{Namespace: "default"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := f.WaitForSync(ctx)
	if err == nil || !strings.Contains(err.Error(), "call Factory.Start") || !strings.Contains(err.Error(), "default/pods") {
		t.Errorf("WaitForSync before Start: %v, want it to name default/pods and Factory.Start", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("WaitForSync before Start took %v: it should fail at once", d)
	}

	// Started, on a server that refuses to list pods: the error names the informer.
	e.sim.Faults().Forbid("pods", true)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	f.Start(runCtx)
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	if err := f.WaitForSync(short); err == nil || !strings.Contains(err.Error(), "default/pods not synced") {
		t.Errorf("WaitForSync of a forbidden list: %v, want it to name default/pods", err)
	}
}
