package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

// The pods of one template share their container's unknown members in the cache: a
// reader that writes into a value it read (Unknown.Get hands out the cache's bytes)
// changes every pod holding that part. The detector names each of them, with the field,
// when the cache replaces it.
func TestMutationDetectorNamesEveryHolderOfASharedPart(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	ctx := context.Background()
	var env []string
	for i := range 10 {
		env = append(env, fmt.Sprintf(`{"name":"SETTING_%d","value":"v%d"}`, i, i))
	}
	for _, name := range []string{"a", "b", "c"} {
		var p object.Pod
		text := fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"containers":[{"name":"main","image":"web:1","x-tuning":12345,"env":[%s]}]}}`,
			name, strings.Join(env, ","))
		if err := json.Unmarshal([]byte(text), &p); err != nil {
			t.Fatal(err)
		}
		if _, err := e.pods.Create(ctx, &p); err != nil {
			t.Fatal(err)
		}
	}
	var found mutations
	inf := mustNew(t, e.pods, Options[*object.Pod]{Name: "pods", Reflector: fastReflector(),
		MutationDetector: MutationDetector{Enabled: true, Period: time.Hour, OnMutation: found.add}})
	run(t, inf)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), inf); err != nil {
		t.Fatal(err)
	}
	b, _ := inf.Lister().Get("ns/b")
	c, _ := inf.Lister().Get("ns/c")
	raw := b.Spec.Containers[0].Unknown().Get("x-tuning")
	raw[0] = '9' // the mistake: b's container part is c's too
	if got := string(c.Spec.Containers[0].Unknown().Get("x-tuning")); got != "92345" {
		t.Fatalf("c's x-tuning is %s: the part is not shared, so this test tests nothing", got)
	}
	for _, name := range []string{"a", "b", "c"} {
		e.relabel(t, name, "2") // the cache replaces each: the detector checks it
	}
	testwait.Eventually(t, 10*time.Second, func() bool { return len(found.list()) >= 3 }, "waiting for the reports")
	got := found.list()
	slices.SortFunc(got, func(x, y Mutation) int { return strings.Compare(x.Key, y.Key) })
	want := []Mutation{
		{Key: "ns/a", Path: "spec.containers[0].x-tuning", Before: "12345", After: "92345", Fields: 1},
		{Key: "ns/b", Path: "spec.containers[0].x-tuning", Before: "12345", After: "92345", Fields: 1},
		{Key: "ns/c", Path: "spec.containers[0].x-tuning", Before: "12345", After: "92345", Fields: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mutations found (-want +got):\n%s", d)
	}
}
