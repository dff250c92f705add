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

	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

type deployHandles struct {
	rsHandles
	ns     string
	deploy *listwatch.Resource[*object.Deployment]
}

func deployments(t *testing.T, ns string) deployHandles { return deploymentsOf(t, client(t), ns) }

// deploymentsOf is deployments through c (a client of one encoding).
func deploymentsOf(t *testing.T, c *listwatch.Client, ns string) deployHandles {
	return deployHandles{rsHandles: handlesOf(t, c, ns), ns: ns, deploy: resource[*object.Deployment](t, c, "deployments.apps", ns)}
}

func (h deployHandles) get(t *testing.T, name string) *object.Deployment {
	t.Helper()
	d, err := h.deploy.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// owned returns the ReplicaSets controlled by the Deployment.
func (h deployHandles) owned(t *testing.T, d *object.Deployment) []*object.ReplicaSet {
	t.Helper()
	l, err := h.rss.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*object.ReplicaSet
	for _, rs := range l.Items {
		if ref := object.ControllerRef(&rs.ObjectMeta); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	return out
}

// podsOf returns the non-terminal pods of the Deployment's ReplicaSets, by ReplicaSet
// name; withTerminating also counts pods being deleted.
func (h deployHandles) podsOf(t *testing.T, d *object.Deployment, withTerminating bool) map[string]int {
	t.Helper()
	names := map[string]string{}
	for _, rs := range h.owned(t, d) {
		names[rs.UID] = rs.Name
	}
	l, err := h.pods.List(context.Background(), listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range l.Items {
		ref := object.ControllerRef(&p.ObjectMeta)
		if ref == nil || names[ref.UID] == "" || p.Status.Phase == object.PodSucceeded || p.Status.Phase == object.PodFailed {
			continue
		}
		if p.DeletionTimestamp != nil && !withTerminating {
			continue
		}
		out[names[ref.UID]]++
	}
	return out
}

func kubectlErr(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("kubectl", append([]string{"--kubeconfig", shared.cluster.Kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// poller runs check every 50 ms until stopped and keeps the first violation it reports.
type poller struct {
	mu        sync.Mutex
	violation string
	polls     int
	stop      chan struct{}
	done      chan struct{}
}

func startPoller(check func() string) *poller {
	p := &poller{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			v := check()
			p.mu.Lock()
			p.polls++
			if v != "" && p.violation == "" {
				p.violation = v
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *poller) finish(t *testing.T) {
	t.Helper()
	close(p.stop)
	<-p.done
	if p.violation != "" {
		t.Errorf("violated during the rollout (%d polls): %s", p.polls, p.violation)
	}
	t.Logf("%d polls", p.polls)
}

func TestDeploymentControllerWithKubectlRollout(t *testing.T) {
	ns := namespace(t)
	h := deployments(t, ns)
	startProc(t, "fake-kubelet", "--kubeconfig", shared.cluster.Kubeconfig, "--ready-after", "300ms")
	startManager(t)
	rollout := func(name string) string {
		return kubectl(t, "rollout", "status", "-n", ns, "deployment/"+name, "--timeout=90s")
	}

	t.Run("create, set image within the surge and availability bounds, undo, history", func(t *testing.T) {
		kubectl(t, "create", "deployment", "web", "-n", ns, "--image=nginx:1.27", "--replicas=4")
		if out := rollout("web"); !strings.Contains(out, "successfully rolled out") {
			t.Fatalf("rollout status: %s", out)
		}
		d := h.get(t, "web")
		first := h.owned(t, d)
		if len(first) != 1 || first[0].Annotations["deployment.kubernetes.io/revision"] != "1" || d.Annotations["deployment.kubernetes.io/revision"] != "1" {
			t.Fatalf("after create: %d ReplicaSets, revision annotations wrong", len(first))
		}
		// 4 replicas, 25%/25%: at most 5 pods, at least 3 available, all along.
		p := startPoller(func() string {
			d := h.get(t, "web")
			total := 0
			for _, n := range h.podsOf(t, d, false) {
				total += n
			}
			if total > 5 {
				return fmt.Sprintf("%d pods > replicas + maxSurge = 5", total)
			}
			if d.Status.AvailableReplicas < 3 && d.Status.ObservedGeneration > 0 {
				return fmt.Sprintf("availableReplicas %d < replicas - maxUnavailable = 3", d.Status.AvailableReplicas)
			}
			return ""
		})
		kubectl(t, "set", "image", "-n", ns, "deployment/web", "nginx=nginx:1.28")
		rollout("web")
		p.finish(t)
		rss := h.owned(t, h.get(t, "web"))
		if len(rss) != 2 {
			t.Fatalf("%d ReplicaSets after one update, want 2", len(rss))
		}

		kubectl(t, "rollout", "undo", "-n", ns, "deployment/web")
		rollout("web")
		d = h.get(t, "web")
		if got := containerImage(t, d.Spec.Template); got != "nginx:1.27" {
			t.Errorf("after undo the template has %s", got)
		}
		var reused *object.ReplicaSet
		for _, rs := range h.owned(t, d) {
			if rs.Name == first[0].Name {
				reused = rs
			}
		}
		if reused == nil || reused.Annotations["deployment.kubernetes.io/revision"] != "3" ||
			reused.Annotations["deployment.kubernetes.io/revision-history"] != "1" || d.Annotations["deployment.kubernetes.io/revision"] != "3" {
			t.Errorf("undo must reuse the first ReplicaSet with revision 3 (history 1): %+v", reused)
		}
		if n := len(h.owned(t, d)); n != 2 {
			t.Errorf("%d ReplicaSets after undo, want the same 2", n)
		}
		hist := kubectl(t, "rollout", "history", "-n", ns, "deployment/web")
		if !strings.Contains(hist, "2 ") || !strings.Contains(hist, "3 ") || strings.Contains(hist, "\n1 ") {
			t.Errorf("rollout history:\n%s", hist)
		}
		kubectl(t, "rollout", "undo", "-n", ns, "deployment/web", "--to-revision=2")
		rollout("web")
		if got := containerImage(t, h.get(t, "web").Spec.Template); got != "nginx:1.28" {
			t.Errorf("after undo --to-revision=2 the template has %s", got)
		}
	})

	t.Run("pause, set image, nothing rolls; resume, it rolls", func(t *testing.T) {
		kubectl(t, "create", "deployment", "paused", "-n", ns, "--image=nginx:1.27", "--replicas=2")
		rollout("paused")
		kubectl(t, "rollout", "pause", "-n", ns, "deployment/paused")
		kubectl(t, "set", "image", "-n", ns, "deployment/paused", "nginx=nginx:1.28")
		// Until the controller has synced the new template (observedGeneration): a sync
		// that rolled would have made the new ReplicaSet before writing the status.
		gen := h.get(t, "paused").Generation
		var d *object.Deployment
		clusterPoll.Eventually(t, 30*time.Second, func() bool { d = h.get(t, "paused"); return d.Status.ObservedGeneration >= gen },
			"observedGeneration %d, want %d", testwait.Lazy(func() any { return d.Status.ObservedGeneration }), gen)
		if n := len(h.owned(t, d)); n != 1 {
			t.Errorf("%d ReplicaSets while paused: the rollout progressed", n)
		}
		if c := cond(d, "Progressing"); c == nil || c.Reason != "DeploymentPaused" {
			t.Errorf("Progressing while paused: %+v", c)
		}
		kubectl(t, "rollout", "resume", "-n", ns, "deployment/paused")
		rollout("paused")
		if n := len(h.owned(t, h.get(t, "paused"))); n != 2 {
			t.Errorf("%d ReplicaSets after resume, want 2", n)
		}
	})

	t.Run("kubectl scale mid-rollout scales proportionally", func(t *testing.T) {
		kubectl(t, "create", "deployment", "prop", "-n", ns, "--image=nginx:1.27", "--replicas=10")
		rollout("prop")
		kubectl(t, "set", "image", "-n", ns, "deployment/prop", "nginx=nginx:404") // never ready: the rollout stalls
		// 10 replicas, surge 3, unavailable 2: it stalls at old 8, new 5.
		want := func(oldN, newN int32) func() bool {
			return func() bool {
				d := h.get(t, "prop")
				var o, n int32 = -1, -1
				for _, rs := range h.owned(t, d) {
					if containerImage(t, rs.Spec.Template) == "nginx:404" {
						n = *rs.Spec.Replicas
					} else {
						o = *rs.Spec.Replicas
					}
				}
				return o == oldN && n == newN
			}
		}
		describe := testwait.Lazy(func() any {
			var s []string
			for _, rs := range h.owned(t, h.get(t, "prop")) {
				s = append(s, fmt.Sprintf("%s=%d%v", rs.Name, *rs.Spec.Replicas, rs.Annotations))
			}
			return strings.Join(s, " ")
		})
		clusterPoll.Eventually(t, 30*time.Second, want(8, 5), "%s", describe)
		kubectl(t, "scale", "-n", ns, "deployment/prop", "--replicas=20")
		clusterPoll.Eventually(t, 30*time.Second, want(15, 10), "%s", describe)
	})

	t.Run("Recreate never runs old and new pods together", func(t *testing.T) {
		kubectl(t, "create", "deployment", "rec", "-n", ns, "--image=nginx:1.27", "--replicas=3")
		kubectl(t, "patch", "-n", ns, "deployment/rec", "--type=merge", "-p", `{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}`)
		rollout("rec")
		d := h.get(t, "rec")
		p := startPoller(func() string {
			if pods := h.podsOf(t, d, true); len(pods) > 1 {
				return fmt.Sprintf("pods of several ReplicaSets at once: %v", pods)
			}
			return ""
		})
		kubectl(t, "set", "image", "-n", ns, "deployment/rec", "nginx=nginx:1.28")
		rollout("rec")
		p.finish(t)
	})

	t.Run("revisionHistoryLimit 1 keeps one old ReplicaSet", func(t *testing.T) {
		kubectl(t, "create", "deployment", "hist", "-n", ns, "--image=nginx:1.25", "--replicas=1")
		kubectl(t, "patch", "-n", ns, "deployment/hist", "--type=merge", "-p", `{"spec":{"revisionHistoryLimit":1}}`)
		for _, tag := range []string{"1.26", "1.27", "1.28"} {
			rollout("hist")
			kubectl(t, "set", "image", "-n", ns, "deployment/hist", "nginx=nginx:"+tag)
		}
		rollout("hist")
		clusterPoll.Eventually(t, 20*time.Second, func() bool { return len(h.owned(t, h.get(t, "hist"))) == 2 },
			"%d ReplicaSets", testwait.Lazy(func() any { return len(h.owned(t, h.get(t, "hist"))) }))
	})

	t.Run("a never-ready image exceeds the progress deadline", func(t *testing.T) {
		kubectl(t, "create", "deployment", "stuck", "-n", ns, "--image=nginx:nonexistent", "--replicas=2")
		kubectl(t, "patch", "-n", ns, "deployment/stuck", "--type=merge", "-p", `{"spec":{"progressDeadlineSeconds":5}}`)
		out, err := kubectlErr(t, "rollout", "status", "-n", ns, "deployment/stuck", "--timeout=60s")
		if err == nil || !strings.Contains(out, "exceeded its progress deadline") {
			t.Errorf("rollout status: %v\n%s", err, out)
		}
	})

	t.Run("every kind of pod template field reaches the pods", func(t *testing.T) {
		kubectlIn(t, fullDeployment, "apply", "-n", ns, "-f", "-")
		rollout("full")
		h := deploymentsOf(t, encodingClient(t, listwatch.EncodingJSON), ns) // compared as JSON, so read as JSON
		d := h.get(t, "full")
		var template map[string]any
		if err := jsonRoundTrip(d.Spec.Template.Spec, &template); err != nil {
			t.Fatal(err)
		}
		rss := h.owned(t, d)
		if len(rss) != 1 {
			t.Fatalf("%d ReplicaSets", len(rss))
		}
		for _, p := range h.activeOwned(t, rss[0]) {
			b, _ := json.Marshal(p.Spec)
			var spec map[string]any
			_ = json.Unmarshal(b, &spec)
			if d := cmp.Diff(asPod(template), withoutServerAdditions(spec)); d != "" {
				t.Errorf("pod %s (-deployment template +pod):\n%s", p.Name, d)
			}
			if p.Labels["pod-template-hash"] == "" || p.Annotations["note"] != "kept" {
				t.Errorf("pod %s labels %v annotations %v", p.Name, p.Labels, p.Annotations)
			}
		}
	})
}

// fullDeployment's pod template uses every kind of field (the real apiserver prunes
// fields it does not know, so the unknown-field case is in the simulator's test).
const fullDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: full
spec:
  replicas: 2
  selector:
    matchLabels: {app: full}
  template:
    metadata:
      labels: {app: full}
      annotations: {note: kept}
    spec:
      os: {name: linux}
      hostAliases:
      - {ip: 10.1.2.3, hostnames: [db.local]}
      dnsConfig:
        options: [{name: ndots, value: "2"}]
      securityContext:
        runAsNonRoot: true
        seccompProfile: {type: RuntimeDefault}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: full}}}
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 1
            preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}
      initContainers:
      - {name: init, image: busybox:1.36, command: [sh, -c, "true"]}
      containers:
      - name: app
        image: nginx:1.27
        args: [--port, "8080"]
        ports: [{containerPort: 8080, name: http}]
        env:
        - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
        - {name: LIMIT, valueFrom: {resourceFieldRef: {resource: limits.memory}}}
        envFrom: [{configMapRef: {name: opt, optional: true}}]
        resources: {limits: {memory: 128Mi}, requests: {cpu: 50m}}
        lifecycle: {preStop: {exec: {command: [sleep, "1"]}}}
        startupProbe: {httpGet: {path: /, port: http}, failureThreshold: 30}
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
        volumeMounts: [{name: scratch, mountPath: /scratch}, {name: info, mountPath: /etc/info}]
      volumes:
      - {name: scratch, emptyDir: {medium: Memory}}
      - name: info
        downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
`

func cond(d *object.Deployment, typ string) *object.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == typ {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

func containerImage(t *testing.T, tmpl object.PodTemplateSpec) string {
	t.Helper()
	if len(tmpl.Spec.Containers) == 0 {
		t.Fatalf("template spec without containers: %+v", tmpl.Spec)
	}
	return tmpl.Spec.Containers[0].Image()
}

// `kinformer demo --kubeconfig` tells the same story against the real apiserver, in a
// namespace it creates and deletes (this cluster has no kube-controller-manager and no
// nodes, so the demo runs its own controllers and fake kubelet there).
func TestDemoAgainstRealAPIServer(t *testing.T) {
	out, err := exec.Command(shared.bin, "demo", "--kubeconfig", shared.cluster.Kubeconfig, "--ready-after", "200ms", "--timeout", "90s").CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{"✓ 8/8 delete Deployment web (no garbage collector here)", "kinformer demo: done"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	ns := ""
	for _, l := range strings.Split(string(out), "\n") {
		if _, after, ok := strings.Cut(l, ", namespace "); ok {
			ns = after
		}
	}
	if ns == "" {
		t.Fatalf("no namespace named in:\n%s", out)
	}
	if got, _ := kubectlErr(t, "get", "namespace", ns, "-o", "jsonpath={.status.phase}"); !strings.Contains(got, "Terminating") && !strings.Contains(got, "NotFound") {
		t.Errorf("the demo's namespace %s was not deleted: %s", ns, got)
	}
}
