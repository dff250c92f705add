package fakekubelet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/fakekubelet"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Deadlines are generous: these tests poll for what the kubelet does and never time it,
// so a loaded machine makes them slower, not flaky.
const patience = 30 * time.Second

// cluster is a simulator, the kubelets' client, and the pods of namespace "default"
// through the test's own client.
type cluster struct {
	sim    *apisim.Server
	client *listwatch.Client
	pods   *listwatch.Resource[*object.Pod]
	raw    *listwatch.Resource[*object.Raw]
}

// kubeletAgent is the User-Agent of the kubelets' client, so injected failures can hit
// the kubelet's requests and not the test's.
const kubeletAgent = "fakekubelet-test"

func newCluster(t *testing.T) cluster {
	t.Helper()
	sim, c := simtest.Start(t, apisim.Options{})
	info, err := c.Discover(context.Background(), "pods")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := listwatch.New(&listwatch.Config{Host: c.Config().Host, QPS: -1, UserAgent: kubeletAgent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.CloseIdleConnections)
	return cluster{sim: sim, client: kc, pods: listwatch.For[*object.Pod](c, info, "default"),
		raw: listwatch.For[*object.Raw](c, info, "default")}
}

// runKubelet runs a kubelet until the returned stop is called (or the test ends); stop
// waits for Run to return and fails the test if it returned an error.
func runKubelet(t *testing.T, opts fakekubelet.Options) (*fakekubelet.Kubelet, func()) {
	t.Helper()
	k, err := fakekubelet.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return k, stop
}

// newPod returns a pod with one container per image, named c0, c1, ...
func newPod(name string, images ...string) *object.Pod {
	type container struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	}
	cs := []container{}
	for i, image := range images {
		cs = append(cs, container{fmt.Sprintf("c%d", i), image})
	}
	b, _ := json.Marshal(cs)
	p := &object.Pod{ObjectMeta: object.ObjectMeta{Name: name}}
	p.Spec.Unknown.Set("containers", b)
	return p
}

func (c cluster) create(t *testing.T, pods ...*object.Pod) {
	t.Helper()
	for _, p := range pods {
		if _, err := c.pods.Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFor polls the named pod until ok accepts it (nil: the pod does not exist).
func (c cluster) waitFor(t *testing.T, name, what string, ok func(*object.Pod) bool) *object.Pod {
	t.Helper()
	var p *object.Pod
	testwait.Eventually(t, patience, func() bool {
		var err error
		p, err = c.pods.Get(context.Background(), name)
		switch {
		case object.IsNotFound(err):
			p = nil
		case err != nil:
			t.Fatal(err)
		}
		return ok(p)
	}, "pod %s never became %s; last seen: %+v", name, what, testwait.Lazy(func() any { return p }))
	return p
}

func hasStarted(p *object.Pod) bool {
	if p == nil {
		return false
	}
	ok := p.Status.Unknown.Get("startTime") != nil
	return ok
}

func isReady(p *object.Pod) bool { return p != nil && p.IsReady() }

func isBound(p *object.Pod) bool { return p != nil && p.Spec.NodeName != "" }

func isGone(p *object.Pod) bool { return p == nil }

// status returns the pod's status as stored, as generic JSON.
func (c cluster) status(t *testing.T, name string) map[string]any {
	t.Helper()
	r, err := c.raw.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(r.Unknown.Get("status"), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	containerIDForm = regexp.MustCompile(`^containerd://[0-9a-f]{64}$`)
	imageIDForm     = regexp.MustCompile(`^(.+)@sha256:[0-9a-f]{64}$`)
)

// normalized replaces what differs from run to run (times, pod addresses, ids) with
// placeholders, after checking its form, so whole statuses can be compared.
func normalized(t *testing.T, v any) any {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			s, _ := x.(string)
			switch {
			case k == "lastTransitionTime" || k == "startTime" || k == "startedAt":
				if _, err := time.Parse(time.RFC3339, s); err != nil {
					t.Errorf("%s %q is not an RFC 3339 time", k, s)
				}
				out[k] = "<time>"
			case k == "containerID":
				if !containerIDForm.MatchString(s) {
					t.Errorf("containerID %q", s)
				}
				out[k] = "<container id>"
			case k == "imageID" && s != "":
				m := imageIDForm.FindStringSubmatch(s)
				if m == nil {
					t.Errorf("imageID %q", s)
					continue
				}
				out[k] = m[1] + "@<digest>"
			case (k == "podIP" || k == "ip") && strings.HasPrefix(s, "10.244."):
				if _, err := netip.ParseAddr(s); err != nil {
					t.Errorf("%s %q", k, s)
				}
				out[k] = "<pod ip>"
			default:
				out[k] = normalized(t, x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalized(t, x)
		}
		return out
	}
	return v
}

// Status fragments as the kubelet writes them, after normalization.
func running(name, image, repo string) string {
	return fmt.Sprintf(`{"name":%q,"image":%q,"imageID":"%s@<digest>","containerID":"<container id>","ready":true,"started":true,"restartCount":0,"state":{"running":{"startedAt":"<time>"}},"lastState":{}}`, name, image, repo)
}

func pulling(name, image string) string {
	return fmt.Sprintf(`{"name":%q,"image":%q,"imageID":"","ready":false,"started":false,"restartCount":0,"state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image \"%s\""}},"lastState":{}}`, name, image, image)
}

// wantStatus is a started pod's normalized status: ready unless some containers are
// unready.
func wantStatus(t *testing.T, unready []string, containers ...string) any {
	t.Helper()
	const phase = "Running"
	ready := `"status":"True"`
	if len(unready) > 0 {
		ready = `"status":"False","reason":"ContainersNotReady","message":"containers with unready status: [` + strings.Join(unready, " ") + `]"`
	}
	doc := `{"phase":"` + phase + `","startTime":"<time>","hostIP":"172.18.0.2","hostIPs":[{"ip":"172.18.0.2"}],` +
		`"podIP":"<pod ip>","podIPs":[{"ip":"<pod ip>"}],"conditions":[` +
		`{"type":"Initialized","status":"True","lastTransitionTime":"<time>"},` +
		`{"type":"Ready",` + ready + `,"lastTransitionTime":"<time>"},` +
		`{"type":"ContainersReady",` + ready + `,"lastTransitionTime":"<time>"},` +
		`{"type":"PodScheduled","status":"True","lastTransitionTime":"<time>"}],` +
		`"containerStatuses":[` + strings.Join(containers, ",") + `]}`
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%v in %s", err, doc)
	}
	return v
}

func TestPodsAreBoundAndStarted(t *testing.T) {
	c := newCluster(t)
	runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: -1,
		NeverReadyImages: []string{":nonexistent", ":404", "broken/"}})
	tests := []struct {
		name   string
		images []string
		want   func(t *testing.T) any
	}{
		{"one container", []string{"nginx:1.27"}, func(t *testing.T) any {
			return wantStatus(t, nil, running("c0", "nginx:1.27", "nginx"))
		}},
		{"two containers", []string{"nginx:1.27", "registry.example:5000/team/sidecar:v2"}, func(t *testing.T) any {
			return wantStatus(t, nil, running("c0", "nginx:1.27", "nginx"),
				running("c1", "registry.example:5000/team/sidecar:v2", "registry.example:5000/team/sidecar"))
		}},
		{"no containers", nil, func(t *testing.T) any { return wantStatus(t, nil) }},
		{"tag nonexistent", []string{"nginx:nonexistent"}, func(t *testing.T) any {
			return wantStatus(t, []string{"c0"}, pulling("c0", "nginx:nonexistent"))
		}},
		{"tag 404", []string{"registry.example/app:404"}, func(t *testing.T) any {
			return wantStatus(t, []string{"c0"}, pulling("c0", "registry.example/app:404"))
		}},
		{"pattern inside the name", []string{"example.com/broken/app:1.0"}, func(t *testing.T) any {
			return wantStatus(t, []string{"c0"}, pulling("c0", "example.com/broken/app:1.0"))
		}},
		{"one image of three cannot be pulled", []string{"nginx:1.27", "busybox:nonexistent", "redis:7"}, func(t *testing.T) any {
			return wantStatus(t, []string{"c1"}, running("c0", "nginx:1.27", "nginx"),
				pulling("c1", "busybox:nonexistent"), running("c2", "redis:7", "redis"))
		}},
	}
	for i, tt := range tests {
		c.create(t, newPod(fmt.Sprintf("pod-%d", i), tt.images...))
	}
	addresses := map[string]string{}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("pod-%d", i)
			p := c.waitFor(t, name, "started", hasStarted)
			if p.Spec.NodeName != "fake-node" {
				t.Errorf("nodeName %q", p.Spec.NodeName)
			}
			status := c.status(t, name)
			if d := cmp.Diff(tt.want(t), normalized(t, status)); d != "" {
				t.Errorf("status (-want +got):\n%s", d)
			}
			ip, _ := status["podIP"].(string)
			if other, dup := addresses[ip]; dup {
				t.Errorf("%s has the address of %s: %s", name, other, ip)
			}
			addresses[ip] = name
		})
	}
}

// TestReadyAfter checks with the server's own timestamps that a pod starts no sooner
// than ReadyAfter after it was bound (both are whole seconds, rounded down alike).
func TestReadyAfter(t *testing.T) {
	c := newCluster(t)
	const readyAfter = 2 * time.Second
	runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: readyAfter})
	c.create(t, newPod("web", "nginx:1.27"))
	p := c.waitFor(t, "web", "ready", isReady)
	var status struct{ StartTime time.Time }
	b, _ := json.Marshal(p.Status)
	json.Unmarshal(b, &status)
	bound := p.Condition("PodScheduled").LastTransitionTime.Time()
	if started := status.StartTime.Sub(bound); started < readyAfter {
		t.Errorf("started %v after it was bound (at %v), want at least %v", started, bound, readyAfter)
	}
}

func TestDeletionIsFinished(t *testing.T) {
	tests := []struct {
		name       string
		readyAfter time.Duration
		until      func(*object.Pod) bool // the pod's state when it is deleted
	}{
		{"running pod", -1, hasStarted},
		{"pod not started yet", time.Hour, isBound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: tt.readyAfter})
			elsewhere := newPod("elsewhere", "nginx:1.27")
			elsewhere.Spec.NodeName = "other-node"
			c.create(t, elsewhere, newPod("web", "nginx:1.27"))
			c.waitFor(t, "web", "bound", tt.until)
			ctx := context.Background()
			for _, name := range []string{"elsewhere", "web"} {
				if err := c.pods.Delete(ctx, name, listwatch.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			c.waitFor(t, "web", "deleted", isGone)
			// Another node's pod waits for its own kubelet.
			p := c.waitFor(t, "elsewhere", "still there", func(p *object.Pod) bool { return p != nil })
			if p.DeletionTimestamp == nil {
				t.Error("the other node's pod lost its deletionTimestamp")
			}
		})
	}
}

// TestRestartPicksUpPods runs three kubelets one after the other: the first starts a
// pod, the second only binds one (it would start it in an hour), and the third starts
// that pod and one created bound to the node while no kubelet ran, without touching the
// first, and gives each pod its own address.
func TestRestartPicksUpPods(t *testing.T) {
	c := newCluster(t)
	_, stop := runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: -1})
	c.create(t, newPod("early", "nginx:1.27"))
	early := c.waitFor(t, "early", "ready", isReady)
	stop()

	_, stop = runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: time.Hour})
	c.create(t, newPod("bound", "nginx:1.27"))
	c.waitFor(t, "bound", "bound", isBound)
	stop()

	late := newPod("late", "nginx:1.27")
	late.Spec.NodeName = "fake-node"
	c.create(t, late)
	runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: -1})
	addresses := map[string]string{}
	for _, name := range []string{"bound", "late", "early"} {
		p := c.waitFor(t, name, "ready", isReady)
		if name == "early" && p.ResourceVersion != early.ResourceVersion {
			t.Errorf("the restarted kubelet rewrote a pod started before: rv %s → %s", early.ResourceVersion, p.ResourceVersion)
		}
		ip, _ := c.status(t, name)["podIP"].(string)
		if other, dup := addresses[ip]; dup || ip == "" {
			t.Errorf("%s has address %q, as %s", name, ip, other)
		}
		addresses[ip] = name
	}
}

// kubeletRequests matches the kubelet's requests by method and path suffix.
func kubeletRequests(method, suffix string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Header.Get("User-Agent") == kubeletAgent && r.Method == method && strings.HasSuffix(r.URL.Path, suffix)
	}
}

func TestFailedWritesAreRetried(t *testing.T) {
	tests := []struct {
		name   string
		method string
		suffix string
	}{
		{"binding", "POST", "/web/binding"},
		{"status", "PATCH", "/web/status"},
		{"deletion", "DELETE", "/web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			c.sim.Faults().FailRequests(3, http.StatusInternalServerError, 0, kubeletRequests(tt.method, tt.suffix))
			k, _ := runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: -1})
			c.create(t, newPod("web", "nginx:1.27"))
			c.waitFor(t, "web", "ready", isReady)
			if err := c.pods.Delete(context.Background(), "web", listwatch.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			c.waitFor(t, "web", "deleted", isGone)
			if n := k.Dropped(); n != 0 {
				t.Errorf("Dropped() = %d", n)
			}
			// The kubelet met every injected failure: a request like its own now gets
			// the server's answer, not an injected one.
			req, _ := http.NewRequest(tt.method, c.client.Config().Host+"/api/v1/namespaces/default/pods"+tt.suffix, strings.NewReader("{}"))
			req.Header.Set("User-Agent", kubeletAgent)
			req.Header.Set("Content-Type", "application/merge-patch+json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			http.DefaultClient.CloseIdleConnections()
			if resp.StatusCode == http.StatusInternalServerError {
				t.Error("the injected failures did not all reach the kubelet")
			}
		})
	}
}

func TestGivesUpAfterMaxRetries(t *testing.T) {
	c := newCluster(t)
	c.sim.Faults().FailRequests(1000, http.StatusInternalServerError, 0, kubeletRequests("PATCH", "/doomed/status"))
	var mu sync.Mutex
	var logged []string
	k, _ := runKubelet(t, fakekubelet.Options{Client: c.client, ReadyAfter: -1, MaxRetries: 2,
		Logf: func(format string, args ...any) {
			mu.Lock()
			logged = append(logged, fmt.Sprintf(format, args...))
			mu.Unlock()
		}})
	c.create(t, newPod("doomed", "nginx:1.27"), newPod("fine", "nginx:1.27"))
	c.waitFor(t, "fine", "ready", isReady)
	testwait.Eventually(t, patience, func() bool { return k.Dropped() != 0 },
		"the kubelet never gave up on a pod whose status writes all fail")
	mu.Lock()
	if len(logged) != 1 || !strings.Contains(logged[0], "giving up on pod default/doomed after 2 retries") {
		t.Errorf("logged %q", logged)
	}
	mu.Unlock()

	// The next change of a pod given up on brings it back.
	c.sim.Faults().FailRequests(0, 0, 0, nil)
	if _, err := c.pods.Patch(context.Background(), "doomed", listwatch.MergePatch, []byte(`{"metadata":{"labels":{"retry":"please"}}}`), ""); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, "doomed", "ready", isReady)
}

func TestNewAndRunErrors(t *testing.T) {
	leakcheck.Check(t)
	if _, err := fakekubelet.New(fakekubelet.Options{}); err == nil {
		t.Error("New without a client succeeded")
	}
	client, err := listwatch.New(&listwatch.Config{Host: "http://127.0.0.1:1", QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	k, _ := fakekubelet.New(fakekubelet.Options{Client: client})
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := k.Run(ctx); err == nil || ctx.Err() != nil {
		t.Errorf("Run against no server: %v, want an error at once", err)
	}
	if err := k.Run(ctx); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("second Run: %v", err)
	}
}
