package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/overshoot"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// A template with resources, probes, env (with a fieldRef), volumes, tolerations and an
// annotation: every one must reach the pods unchanged.
const rsManifest = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
spec:
  replicas: 5
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web, tier: frontend}
      annotations: {team: payments}
    spec:
      containers:
      - name: app
        image: registry.example/app:v2
        resources:
          limits: {cpu: 500m, memory: 256Mi}
          requests: {cpu: 100m, memory: 64Mi}
        readinessProbe:
          httpGet: {path: /ready, port: 8080}
          periodSeconds: 5
        livenessProbe:
          tcpSocket: {port: 8080}
          initialDelaySeconds: 3
        env:
        - name: POD_IP
          valueFrom:
            fieldRef: {fieldPath: status.podIP}
        - {name: MODE, value: fast}
        volumeMounts:
        - {name: cache, mountPath: /cache}
        - {name: config, mountPath: /etc/app}
      volumes:
      - name: cache
        emptyDir: {sizeLimit: 1Gi}
      - name: config
        configMap: {name: app-config, optional: true}
      tolerations:
      - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
      terminationGracePeriodSeconds: 10
`

type rsHandles struct {
	rss  *listwatch.Resource[*object.ReplicaSet]
	pods *listwatch.Resource[*object.Pod]
}

func handles(t *testing.T, ns string) rsHandles { return handlesOf(t, client(t), ns) }

// handlesOf is handles through c (a client of one encoding).
func handlesOf(t *testing.T, c *listwatch.Client, ns string) rsHandles {
	return rsHandles{rss: resource[*object.ReplicaSet](t, c, "replicasets.apps", ns), pods: resource[*object.Pod](t, c, "pods", ns)}
}

func (h rsHandles) rs(t *testing.T, name string) *object.ReplicaSet {
	t.Helper()
	rs, err := h.rss.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// activeOwned returns the pods controlled by rs that are not being deleted.
func (h rsHandles) activeOwned(t *testing.T, rs *object.ReplicaSet) []*object.Pod {
	t.Helper()
	l, err := h.pods.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*object.Pod
	for _, p := range l.Items {
		if ref := object.ControllerRef(&p.ObjectMeta); ref != nil && ref.UID == rs.UID && p.DeletionTimestamp == nil &&
			p.Status.Phase != object.PodSucceeded && p.Status.Phase != object.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

func podNames(pods []*object.Pod) string {
	var n []string
	for _, p := range pods {
		n = append(n, p.Name)
	}
	return strings.Join(n, ",")
}

func TestReplicaSetControllerAgainstRealAPIServer(t *testing.T) {
	ns := namespace(t)
	h := handles(t, ns)
	startProc(t, "fake-kubelet", "--kubeconfig", shared.cluster.Kubeconfig, "--ready-after", "300ms")
	_, addr := startManager(t, "--controllers", "replicaset")

	kubectlIn(t, rsManifest, "apply", "-n", ns, "-f", "-")
	rs := h.rs(t, "web")
	clusterPoll.Eventually(t, 60*time.Second, func() bool {
		st := h.rs(t, "web").Status
		return st.Replicas == 5 && st.ReadyReplicas == 5 && st.AvailableReplicas == 5 && st.ObservedGeneration == 1
	}, "status %+v", testwait.Lazy(func() any { return h.rs(t, "web").Status }))

	t.Run("template reaches every pod unchanged", func(t *testing.T) {
		// Compared as JSON, so read as JSON (read as protobuf, what the model does not
		// hold is protobuf: e2e/protobuf_test.go compares those).
		jh := handlesOf(t, encodingClient(t, listwatch.EncodingJSON), ns)
		rs := jh.rs(t, "web")
		var template map[string]any
		if err := jsonRoundTrip(rs.Spec.Template.Spec, &template); err != nil {
			t.Fatal(err)
		}
		for _, p := range jh.activeOwned(t, rs) {
			b, _ := json.Marshal(p.Spec)
			var spec map[string]any
			if err := json.Unmarshal(b, &spec); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(asPod(template), withoutServerAdditions(spec)); d != "" {
				t.Errorf("pod %s spec differs from the template (-template +pod):\n%s", p.Name, d)
			}
			if d := cmp.Diff(rs.Spec.Template.Annotations, p.Annotations); d != "" {
				t.Errorf("pod %s annotations (-template +pod):\n%s", p.Name, d)
			}
			if d := cmp.Diff(rs.Spec.Template.Labels, p.Labels); d != "" {
				t.Errorf("pod %s labels (-template +pod):\n%s", p.Name, d)
			}
		}
	})

	t.Run("scale down to 2", func(t *testing.T) {
		kubectl(t, "scale", "-n", ns, "rs/web", "--replicas=2")
		clusterPoll.Eventually(t, 30*time.Second, func() bool { return len(h.activeOwned(t, rs)) == 2 && h.rs(t, "web").Status.Replicas == 2 },
			"active %s", testwait.Lazy(func() any { return podNames(h.activeOwned(t, rs)) }))
	})

	t.Run("a deleted pod is replaced", func(t *testing.T) {
		victim := h.activeOwned(t, rs)[0].Name
		kubectl(t, "delete", "pod", "-n", ns, victim, "--wait=false")
		clusterPoll.Eventually(t, 30*time.Second, func() bool {
			pods := h.activeOwned(t, rs)
			return len(pods) == 2 && !strings.Contains(podNames(pods), victim)
		}, "active %s", testwait.Lazy(func() any { return podNames(h.activeOwned(t, rs)) }))
	})

	t.Run("a bare pod with matching labels is adopted", func(t *testing.T) {
		w, err := h.pods.Watch(testwait.Context(t, time.Minute), listwatch.WatchOptions{FieldSelector: "metadata.name=bare"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		kubectlIn(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`,
			"apply", "-n", ns, "-f", "-")
		for {
			ev := nextEvent(t, w)
			if ref := object.ControllerRef(&ev.Object.ObjectMeta); ref != nil {
				if ref.Kind != "ReplicaSet" || ref.Name != "web" || ref.UID != rs.UID {
					t.Fatalf("adopted by %+v", ref)
				}
				break
			}
		}
		// Three pods for two replicas now: one goes, and two stay.
		clusterPoll.Eventually(t, 30*time.Second, func() bool { return len(h.activeOwned(t, rs)) == 2 },
			"active %s", testwait.Lazy(func() any { return podNames(h.activeOwned(t, rs)) }))
	})

	t.Run("a relabelled pod is released and replaced", func(t *testing.T) {
		name := h.activeOwned(t, rs)[0].Name
		kubectl(t, "label", "pod", "-n", ns, name, "app=debug", "--overwrite")
		clusterPoll.Eventually(t, 30*time.Second, func() bool {
			p, err := h.pods.Get(context.Background(), name)
			return err == nil && len(p.OwnerReferences) == 0 && len(h.activeOwned(t, rs)) == 2 &&
				!strings.Contains(podNames(h.activeOwned(t, rs)), name)
		}, "%s", testwait.Lazy(func() any {
			p, _ := h.pods.Get(context.Background(), name)
			return fmt.Sprintf("refs %+v; active %s", p.OwnerReferences, podNames(h.activeOwned(t, rs)))
		}))
	})

	t.Run("kubectl describe shows the events", func(t *testing.T) {
		out := kubectl(t, "describe", "rs", "-n", ns, "web")
		for _, want := range []string{"SuccessfulCreate", "Created pod: web-", "SuccessfulDelete", "Deleted pod: web-"} {
			if !strings.Contains(out, want) {
				t.Errorf("describe lacks %q:\n%s", want, out)
			}
		}
	})

	if v := metric(t, addr, `workqueue_adds_total{name="replicaset"}`); v == "" || v == "0" {
		t.Errorf("workqueue_adds_total{name=\"replicaset\"} = %q", v)
	}
}

// withoutServerAdditions removes from a pod's spec what the scheduler, the pod defaults
// and the admission plugins add to a pod and never to a template (checked against
// kube-apiserver 1.36): the node it was bound to, enableServiceLinks, its priority, and
// DefaultTolerationSeconds' not-ready and unreachable tolerations.
func withoutServerAdditions(spec map[string]any) map[string]any {
	for _, k := range []string{"nodeName", "enableServiceLinks", "priority", "preemptionPolicy"} {
		delete(spec, k)
	}
	list, _ := spec["tolerations"].([]any)
	var kept []any
	for _, tol := range list {
		m, _ := tol.(map[string]any)
		if k := m["key"]; k == "node.kubernetes.io/not-ready" || k == "node.kubernetes.io/unreachable" {
			continue
		}
		kept = append(kept, tol)
	}
	if len(kept) == 0 {
		delete(spec, "tolerations")
	} else {
		spec["tolerations"] = kept
	}
	return spec
}

// asPod applies to a template spec the one pod default the server applies to pods only:
// a container's unset resource requests take its limits.
func asPod(spec map[string]any) map[string]any {
	for _, list := range []string{"initContainers", "containers"} {
		cs, _ := spec[list].([]any)
		for _, c := range cs {
			res, _ := c.(map[string]any)["resources"].(map[string]any)
			limits, _ := res["limits"].(map[string]any)
			if len(limits) == 0 {
				continue
			}
			req, _ := res["requests"].(map[string]any)
			if req == nil {
				req = map[string]any{}
			}
			for k, v := range limits {
				if _, ok := req[k]; !ok {
					req[k] = v
				}
			}
			res["requests"] = req
		}
	}
	return spec
}

func leaseHolder(t *testing.T) string {
	c := client(t)
	l, err := resource[*object.Lease](t, c, "leases.coordination.k8s.io", "kube-system").Get(context.Background(), "kinformer-controller-manager")
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// Two controller managers with --leader-elect: one holds the Lease and acts; kill -9 of
// the leader hands the Lease to the standby within lease duration + retry period, and
// it acts at once without a re-list; SIGTERM on a leader hands over in under 3 s; no
// ReplicaSet ever has more active pods than its spec.
func TestLeaderElectionAgainstRealAPIServer(t *testing.T) {
	ns := namespace(t)
	h := handles(t, ns)
	const lease, retry = 4 * time.Second, 500 * time.Millisecond
	le := func(id string) []string {
		return []string{"--controllers", "replicaset", "--leader-elect", "--leader-elect-id", id,
			"--lease-duration", lease.String(), "--renew-deadline", "3s", "--retry-period", retry.String()}
	}
	// A previous test's manager may have left the lease held: wait for it to be free.
	clusterPoll.Eventually(t, 2*lease, func() bool { h := leaseHolder(t); return h == "" || !strings.HasPrefix(h, "e2e-") },
		"%s", testwait.Lazy(func() any { return leaseHolder(t) }))
	a, _ := startManager(t, le("e2e-a")...)
	clusterPoll.Eventually(t, 3*lease, func() bool { return leaseHolder(t) == "e2e-a" },
		"holder %s", testwait.Lazy(func() any { return leaseHolder(t) }))
	b, bAddr := startManager(t, le("e2e-b")...)
	over, err := overshoot.Start(context.Background(), client(t), ns, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Stop()

	kubectlIn(t, strings.Replace(rsManifest, "replicas: 5", "replicas: 3", 1), "apply", "-n", ns, "-f", "-")
	rs := h.rs(t, "web")
	clusterPoll.Eventually(t, 30*time.Second, func() bool { return len(h.activeOwned(t, rs)) == 3 },
		"%s", testwait.Lazy(func() any { return podNames(h.activeOwned(t, rs)) }))
	clusterPoll.Eventually(t, 10*time.Second, func() bool {
		return metric(t, bAddr, `leader_election_master_status{name="kinformer-controller-manager"}`) == "0"
	}, "the standby does not report leader_election_master_status 0")
	lists := metric(t, bAddr, `kinformer_reflector_lists_total{name="pods"}`)

	killed := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	clusterPoll.Eventually(t, 2*lease, func() bool { return leaseHolder(t) == "e2e-b" },
		"holder %s", testwait.Lazy(func() any { return leaseHolder(t) }))
	took := time.Since(killed)
	t.Logf("kill -9: the standby held the lease %s later (lease %s, retry %s)", took.Round(10*time.Millisecond), lease, retry)
	if took > lease+retry+time.Second {
		t.Errorf("the standby took the lease %s after kill -9; want within %s + %s", took, lease, retry)
	}
	kubectl(t, "scale", "-n", ns, "rs/web", "--replicas=5")
	scaled := time.Now()
	clusterPoll.Eventually(t, 10*time.Second, func() bool { return len(h.activeOwned(t, rs)) == 5 },
		"%s", testwait.Lazy(func() any { return podNames(h.activeOwned(t, rs)) }))
	t.Logf("after the take-over, kubectl scale to 5 completed in %s", time.Since(scaled).Round(10*time.Millisecond))
	if after := metric(t, bAddr, `kinformer_reflector_lists_total{name="pods"}`); after != lists {
		t.Errorf("the new leader listed pods again (%s → %s): a warm standby must not", lists, after)
	}

	// A standby again, then SIGTERM on the leader: it releases the lease on its way out.
	_, cAddr := startManager(t, le("e2e-c")...)
	clusterPoll.Eventually(t, 30*time.Second, func() bool {
		return ready(cAddr) && metric(t, cAddr, `leader_election_master_status{name="kinformer-controller-manager"}`) == "0"
	}, "the new manager is not a ready standby")
	code, took := b.signal(t, syscall.SIGTERM)
	if code != 0 {
		t.Errorf("the leader exited %d on SIGTERM, want 0:\n%s", code, b.output())
	}
	handover := time.Now()
	clusterPoll.Eventually(t, 5*time.Second, func() bool { return leaseHolder(t) == "e2e-c" },
		"holder %s", testwait.Lazy(func() any { return leaseHolder(t) }))
	total := took + time.Since(handover)
	t.Logf("SIGTERM: the leader exited in %s, the standby held the lease %s after the signal", took.Round(10*time.Millisecond), total.Round(10*time.Millisecond))
	if total > 3*time.Second {
		t.Errorf("SIGTERM hand-over took %s, want under 3 s", total)
	}
	kubectl(t, "scale", "-n", ns, "rs/web", "--replicas=1")
	clusterPoll.Eventually(t, 20*time.Second, func() bool { return len(h.activeOwned(t, rs)) == 1 },
		"%s", testwait.Lazy(func() any { return podNames(h.activeOwned(t, rs)) }))
	if first, snapshots := over.Stop(); first != "" {
		t.Errorf("a ReplicaSet overshot its spec (%d snapshots): %s", snapshots, first)
	}
}

// ready reports whether the manager serving its plain HTTP endpoints at addr answers
// /readyz with 200: its caches are synced, a standby ready to take over.
func ready(addr string) bool {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// jsonRoundTrip decodes the JSON encoding of v into out: a typed value as generic JSON.
func jsonRoundTrip(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
