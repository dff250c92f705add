package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/memtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

// churnPod is pod i of template tmpl in round r: the pods of one template share their
// containers' env, resources and ports (a part the cache holds once), and each has a
// service-account volume of its own, mounted by its container.
func churnPod(t *testing.T, i, tmpl, r int) *object.Pod {
	t.Helper()
	var env []string
	for e := range 60 {
		env = append(env, fmt.Sprintf(`{"name":"SETTING_%d","value":"template-%d-round-%d-value-%d"}`, e, tmpl, r, e))
	}
	vol := fmt.Sprintf("kube-api-access-%05d", i)
	text := fmt.Sprintf(`{"metadata":{"name":"pod-%d","labels":{"app":"app-%d"}},"spec":{
"volumes":[{"name":%q,"projected":{"sources":[{"serviceAccountToken":{"path":"token"}}],"defaultMode":420}}],
"containers":[{"name":"main","image":"registry.example.com/app-%d:round-%d","env":[%s],
"resources":{"requests":{"cpu":"100m","memory":"128Mi"}},"ports":[{"containerPort":8080,"protocol":"TCP"}],
"volumeMounts":[{"name":%q,"readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}]}],
"restartPolicy":"Always","dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler"}}`,
		i, tmpl, vol, tmpl, r, strings.Join(env, ","), vol)
	var p object.Pod
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// A cache whose objects all change returns to the heap it held before: what its objects
// shared with each other goes when the last object holding it does. Every pod is
// replaced ten times, each time by a new version of its template; the live heap after
// the last round is the heap after the first (the simulator keeps a bounded history, so
// it does not grow either), and the cache shares as many parts as after the first. A
// table that kept its parts would hold nine rounds of env lists more (about 500 KB).
func TestChurnReturnsToBaseline(t *testing.T) {
	const pods, templates, rounds = 200, 20, 10
	e := newEnv(t, apisim.Options{HistoryWindow: 50})
	ctx := context.Background()
	for i := range pods {
		if _, err := e.pods.Create(ctx, churnPod(t, i, i%templates, 0)); err != nil {
			t.Fatal(err)
		}
	}
	inf := mustNew(t, e.pods, Options[*object.Pod]{Name: "pods", Reflector: fastReflector()})
	run(t, inf)
	if err := WaitForSync(testwait.Context(t, 10*time.Second), inf); err != nil {
		t.Fatal(err)
	}
	// roundDone: every cached pod shows round r's image.
	roundDone := func(r int) bool {
		all := inf.Lister().List(object.Everything())
		if len(all) != pods {
			return false
		}
		for _, p := range all {
			if !strings.HasSuffix(p.Spec.Containers[0].Image(), fmt.Sprintf(":round-%d", r)) {
				return false
			}
		}
		return true
	}
	var baseline uint64
	var baseParts int
	for r := 1; r <= rounds; r++ {
		for i := range pods {
			p := churnPod(t, i, i%templates, r)
			if _, err := e.pods.Update(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		testwait.Eventually(t, 20*time.Second, func() bool { return roundDone(r) }, "waiting for round %d in the cache", r)
		heap, parts := memtest.AfterGC().HeapAlloc, inf.maps.SharedParts()
		t.Logf("round %d: live heap %d KB, %d shared parts", r, heap>>10, parts)
		if r == 1 {
			baseline, baseParts = heap, parts
		}
	}
	if heap := memtest.AfterGC().HeapAlloc; heap > baseline+256<<10 {
		t.Errorf("live heap after %d rounds: %d KB, after the first: %d KB", rounds, heap>>10, baseline>>10)
	}
	// Collected objects' parts leave the table when their cleanups have run.
	testwait.Eventually(t, 10*time.Second, func() bool {
		memtest.AfterGC()
		return inf.maps.SharedParts() <= baseParts
	}, "waiting for the parts of replaced objects to go")
}
