package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

func TestListPaginates(t *testing.T) {
	ns := namespace(t)
	c := client(t)
	cms := resource[*object.Raw](t, c, "configmaps", ns)
	ctx := testwait.Context(t, time.Minute)
	for i := range 12 {
		obj := &object.Raw{ObjectMeta: object.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}
		obj.Unknown.Set("data", json.RawMessage(`{"i":"`+fmt.Sprint(i)+`"}`))
		if _, err := cms.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	pages := 0
	_, err := cms.ListAll(ctx, listwatch.ListOptions{Limit: 5}, func(l *object.List[*object.Raw]) error {
		pages++
		if l.Continue != "" && (l.RemainingItemCount == nil || *l.RemainingItemCount <= 0) {
			t.Errorf("page %d: continue without remainingItemCount", pages)
		}
		for _, it := range l.Items {
			names = append(names, it.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages != 3 || len(names) != 12 || names[0] != "cm-00" || names[11] != "cm-11" {
		t.Errorf("%d pages, items %v", pages, names)
	}
}

func TestWatchSeesKubectlChanges(t *testing.T) {
	for _, ws := range []bool{false, true} {
		t.Run(fmt.Sprintf("websocket=%v", ws), func(t *testing.T) {
			ns := namespace(t)
			c := client(t)
			cms := resource[*object.Raw](t, c, "configmaps", ns)
			ctx := testwait.Context(t, time.Minute)
			list, err := cms.List(ctx, listwatch.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := cms.Watch(ctx, listwatch.WatchOptions{ResourceVersion: list.ResourceVersion, AllowBookmarks: true, WebSocket: ws})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			kubectl(t, "-n", ns, "create", "configmap", "a", "--from-literal=k=v1")
			kubectl(t, "-n", ns, "label", "configmap", "a", "changed=yes")
			kubectl(t, "-n", ns, "delete", "configmap", "a")
			var got []string
			for range 3 {
				ev := nextEvent(t, w)
				got = append(got, fmt.Sprintf("%s %s", ev.Type, ev.Object.Name))
			}
			if d := cmp.Diff([]string{"ADDED a", "MODIFIED a", "DELETED a"}, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

func TestBookmarkArrives(t *testing.T) {
	ns := namespace(t)
	c := client(t)
	pods := resource[*object.Pod](t, c, "pods", ns)
	ctx := testwait.Context(t, time.Minute)
	list, err := pods.List(ctx, listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The apiserver sends a bookmark shortly before a watch's timeout.
	w, err := pods.Watch(ctx, listwatch.WatchOptions{ResourceVersion: list.ResourceVersion, AllowBookmarks: true, TimeoutSeconds: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	other := namespace(t)
	kubectl(t, "-n", other, "run", "bookmark-bump", "--image=nginx", "--restart=Never")
	ev, err := w.Next()
	if err != nil {
		t.Fatalf("waiting for a bookmark: %v", err)
	}
	if ev.Type != listwatch.Bookmark || ev.Object.ResourceVersion == "" {
		t.Fatalf("got %s with rv %q, want a bookmark", ev.Type, ev.Object.ResourceVersion)
	}
}

func TestWatchFromCompactedRevisionIsGone(t *testing.T) {
	ns := namespace(t)
	c := client(t)
	cms := resource[*object.Raw](t, c, "configmaps", ns)
	ctx := testwait.Context(t, time.Minute)
	old, err := cms.List(ctx, listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		kubectl(t, "-n", ns, "create", "configmap", fmt.Sprintf("churn-%d", i))
	}
	// The apiserver compacts etcd every 5 s (see TestMain), to where the previous round
	// was: wait until the revision is compacted away, as an exact list at it shows. A
	// watch from a revision starts just after it, so the revision after it must be gone
	// too (with only the first compacted, etcd serves the watch: CI saw it once).
	rv, err := strconv.ParseUint(old.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	next := strconv.FormatUint(rv+1, 10)
	clusterPoll.Eventually(t, 30*time.Second, func() bool {
		_, err := cms.List(ctx, listwatch.ListOptions{ResourceVersion: next, ResourceVersionMatch: "Exact"})
		return object.IsGone(err)
	}, "rv %s still listable: not compacted", next)
	w, err := cms.Watch(ctx, listwatch.WatchOptions{ResourceVersion: old.ResourceVersion})
	if err == nil {
		defer w.Close()
		_, err = w.Next()
	}
	if !object.IsGone(err) {
		t.Fatalf("watch from rv %s after compaction: %v, want 410", old.ResourceVersion, err)
	}
	if r := object.ReasonOf(err); r != object.ReasonExpired && r != object.ReasonGone {
		t.Errorf("reason %q", r)
	}
	_, err = cms.List(ctx, listwatch.ListOptions{ResourceVersion: old.ResourceVersion, ResourceVersionMatch: "Exact"})
	if !object.IsGone(err) {
		t.Errorf("exact list at a compacted revision: %v, want 410", err)
	}
}

func TestStreamingListEndsWithBookmark(t *testing.T) {
	ns := namespace(t)
	c := client(t)
	// Secrets, not configmaps: a streaming list is served from the watch cache, which
	// this cluster turns off for configmaps.
	secrets := resource[*object.Raw](t, c, "secrets", ns)
	for _, n := range []string{"s1", "s2", "s3"} {
		kubectl(t, "-n", ns, "create", "secret", "generic", n)
	}
	ctx := testwait.Context(t, time.Minute)
	w, err := secrets.Watch(ctx, listwatch.WatchOptions{SendInitialEvents: true, AllowBookmarks: true, ResourceVersionMatch: "NotOlderThan"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var names []string
	for {
		ev, err := w.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == listwatch.Bookmark {
			if ev.Object.Annotations[listwatch.InitialEventsEndAnnotation] == "true" {
				break
			}
			continue
		}
		if ev.Type != listwatch.Added {
			t.Fatalf("initial event of type %s", ev.Type)
		}
		names = append(names, ev.Object.Name)
	}
	if strings.Join(names, ",") != "s1,s2,s3" {
		t.Errorf("initial events for %v", names)
	}
}

const deploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: roundtrip
  labels: {app: roundtrip}
  annotations: {note: "kept"}
spec:
  replicas: 2
  revisionHistoryLimit: 4
  selector: {matchLabels: {app: roundtrip}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: "10%"}}
  template:
    metadata: {labels: {app: roundtrip}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: web
        image: nginx:1.27
        args: ["--port", "8080"]
        ports: [{containerPort: 8080, name: http}]
        resources: {limits: {cpu: 500m, memory: 64Mi}, requests: {cpu: 100m}}
        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 3}
        env: [{name: A, value: "1"}]
        volumeMounts: [{name: scratch, mountPath: /tmp}]
      volumes: [{name: scratch, emptyDir: {sizeLimit: 1Gi}}]
      tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
`

func TestDeploymentRoundTripLosesNothing(t *testing.T) {
	ns := namespace(t)
	kubectlIn(t, deploymentYAML, "-n", ns, "apply", "-f", "-")
	var want map[string]any
	if err := json.Unmarshal([]byte(kubectl(t, "-n", ns, "get", "deployment", "roundtrip", "-o", "json", "--show-managed-fields")), &want); err != nil {
		t.Fatal(err)
	}
	c := encodingClient(t, listwatch.EncodingJSON) // JSON's round trip (protobuf's: e2e/protobuf_test.go)
	deps := resource[*object.Deployment](t, c, "deployments.apps", ns)
	d, err := deps.Get(testwait.Context(t, 10*time.Second), "roundtrip")
	if err != nil {
		t.Fatal(err)
	}
	if d.ResourceVersion != want["metadata"].(map[string]any)["resourceVersion"] {
		t.Skip("the deployment changed between the two reads; rerun")
	}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decode → encode changed the deployment (-kubectl +kinformer):\n%s", diff)
	}
	// The update path sends it all back: a no-op update keeps every field and the RV.
	back, err := deps.Update(testwait.Context(t, 10*time.Second), d)
	if err != nil {
		t.Fatal(err)
	}
	if back.ResourceVersion != d.ResourceVersion {
		t.Errorf("a no-op update changed the object: rv %s → %s", d.ResourceVersion, back.ResourceVersion)
	}
}

func TestTLSIsVerifiedByDefault(t *testing.T) {
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: shared.cluster.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLS.CAData = nil // the test CA is not in the system pool
	c, err := listwatch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if _, err := c.Discover(testwait.Context(t, 10*time.Second), "pods"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}
	cfg.TLS.Insecure = true
	c2, err := listwatch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.CloseIdleConnections()
	if _, err := c2.Discover(testwait.Context(t, 10*time.Second), "pods"); err != nil {
		t.Errorf("insecure-skip-tls-verify: %v", err)
	}
}

func TestHTTP2OverTLS(t *testing.T) {
	c := client(t)
	version, proto, err := c.ServerVersion(testwait.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if proto != "HTTP/2.0" || !strings.HasPrefix(version, "v1.36.") {
		t.Errorf("version %q over %q, want v1.36.x over HTTP/2.0", version, proto)
	}
	cfg, _ := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: shared.cluster.Kubeconfig})
	cfg.DisableHTTP2 = true
	c1, _ := listwatch.New(cfg)
	defer c1.CloseIdleConnections()
	if _, proto, err := c1.ServerVersion(testwait.Context(t, 10*time.Second)); err != nil || proto != "HTTP/1.1" {
		t.Errorf("DisableHTTP2: %q, %v", proto, err)
	}
}

// TestFutureResourceVersion pins down what the simulator copies: a NotOlderThan list at
// a resourceVersion the apiserver has not reached answers 504 with a
// ResourceVersionTooLarge cause and a retry hint (after waiting ~3 s for its watch cache
// to catch up), which the reflector answers with a consistent relist; a watch from such
// a resourceVersion is no error: it waits for that revision, silently, until its timeout.
func TestFutureResourceVersion(t *testing.T) {
	ns := namespace(t)
	cfg, err := listwatch.LoadKubeconfig(listwatch.LoadOptions{Path: shared.cluster.Kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxRetries = -1 // see the first answer, not the client's retries of it
	c, err := listwatch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	secrets := resource[*object.Raw](t, c, "secrets", ns)
	ctx := testwait.Context(t, time.Minute)
	l, err := secrets.List(ctx, listwatch.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
	future := strconv.FormatInt(rv+1_000_000, 10)

	_, err = secrets.List(ctx, listwatch.ListOptions{ResourceVersion: future, ResourceVersionMatch: "NotOlderThan"})
	se, ok := object.AsStatus(err)
	if !ok {
		t.Fatalf("list at a future RV: %v, want a Status error", err)
	}
	hasCause := false
	if d := se.Status.Details; d != nil {
		for _, c := range d.Causes {
			hasCause = hasCause || c.Type == "ResourceVersionTooLarge"
		}
	}
	retry, hinted := object.RetryAfter(err)
	if se.Status.Code != 504 || !hasCause || !hinted || retry <= 0 {
		t.Errorf("list at a future RV: code %d, cause %v, retry %v %v: %+v", se.Status.Code, hasCause, retry, hinted, se.Status)
	}

	w, err := secrets.Watch(ctx, listwatch.WatchOptions{ResourceVersion: future, TimeoutSeconds: 3})
	if err != nil {
		t.Fatalf("watch at a future RV: %v, want it accepted", err)
	}
	defer w.Close()
	if ev, err := w.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("watch at a future RV: event %v, error %v; want nothing until the timeout", ev.Type, err)
	}
}
