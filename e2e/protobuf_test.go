package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/internal/testrig/modelled"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// The protobuf encoding against the real apiserver: every kind of object the model
// reads decodes from protobuf to what it decodes to from JSON, and encodes back to the
// server's bytes; objects read in protobuf are written back in protobuf with nothing
// lost; the controllers roll out, and the CLI verifies its cache, in each encoding; and a
// custom resource, which has no protobuf, answers JSON to a protobuf client, which reads it.

// protobufObjectsYAML is one object of each kind the test compares, in namespace ns; the
// node (cluster-scoped) is named node.
func protobufObjectsYAML(ns, node string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: full
  labels: {app: full, tier: web}
  annotations: {note: kept, example.com/unicode: "é ✓ <&> \u2028", example.com/empty: ""}
spec:
  terminationGracePeriodSeconds: 5
  nodeSelector: {disk: ssd}
  hostAliases: [{ip: 10.1.2.3, hostnames: [db.local]}]
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  initContainers:
  - {name: init, image: "busybox:1.36", command: [sh, -c, "true"]}
  containers:
  - name: web
    image: nginx:1.27
    args: ["--port", "8080"]
    ports: [{containerPort: 8080, name: http, protocol: TCP}, {containerPort: 9090, name: metrics}]
    env:
    - {name: A, value: "1"}
    - {name: EMPTY, value: ""}
    - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: LIMIT, valueFrom: {resourceFieldRef: {resource: limits.memory}}}
    resources: {limits: {cpu: 500m, memory: 64Mi}, requests: {cpu: 100m, memory: 32Mi}}
    readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 3}
    livenessProbe: {tcpSocket: {port: 8080}, initialDelaySeconds: 2, failureThreshold: 5}
    startupProbe: {exec: {command: [cat, /tmp/ready]}, failureThreshold: 30}
    lifecycle: {preStop: {exec: {command: [sleep, "1"]}}}
    volumeMounts: [{name: scratch, mountPath: /tmp}, {name: cfg, mountPath: /etc/cfg, readOnly: true}]
  - name: sidecar
    image: busybox:1.36
    command: [sleep, infinity]
  volumes:
  - {name: scratch, emptyDir: {sizeLimit: 1Gi}}
  - {name: cfg, configMap: {name: settings, optional: true, defaultMode: 0440}}
  - name: info
    downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
  tolerations:
  - {key: k, operator: Exists, effect: NoSchedule}
  - {key: t, operator: Equal, value: v, effect: NoExecute, tolerationSeconds: 30}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, labels: {app: rs}}
spec:
  replicas: 2
  minReadySeconds: 3
  selector:
    matchLabels: {app: rs}
    matchExpressions:
    - {key: tier, operator: In, values: [web, api]}
    - {key: legacy, operator: DoesNotExist}
  template:
    metadata: {labels: {app: rs, tier: web}}
    spec:
      containers: [{name: c, image: "nginx:1.27", ports: [{containerPort: 80}]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: dep, labels: {app: dep}, annotations: {note: kept}}
spec:
  replicas: 3
  revisionHistoryLimit: 5
  progressDeadlineSeconds: 120
  selector: {matchLabels: {app: dep}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: "25%%", maxUnavailable: 1}}
  template:
    metadata: {labels: {app: dep}, annotations: {note: kept}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        env: [{name: A, value: "1"}]
        readinessProbe: {httpGet: {path: /, port: 80}}
      tolerations: [{key: k, operator: Exists}]
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: lease}
spec:
  holderIdentity: holder-1
  leaseDurationSeconds: 15
  acquireTime: "2026-03-14T08:26:53.123456Z"
  renewTime: "2026-03-14T08:27:03.654321Z"
  leaseTransitions: 2
---
apiVersion: v1
kind: Node
metadata:
  name: %[2]s
  labels: {kubernetes.io/hostname: %[2]s, e2e: protobuf}
  annotations: {note: kept}
spec:
  podCIDR: 10.244.7.0/24
  podCIDRs: [10.244.7.0/24]
  taints: [{key: dedicated, value: e2e, effect: NoSchedule}]
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: 3500m, memory: 7Gi, pods: "110"}
---
apiVersion: v1
kind: Event
metadata: {name: legacy}
involvedObject: {apiVersion: v1, kind: Pod, name: full, namespace: %[1]s}
reason: Testing
message: "the protobuf path <&> ✓"
type: Warning
source: {component: e2e-test, host: h}
count: 3
firstTimestamp: "2026-03-14T08:26:53Z"
lastTimestamp: "2026-03-14T08:27:53Z"
---
apiVersion: v1
kind: Event
metadata: {name: series}
involvedObject: {apiVersion: v1, kind: Pod, name: full, namespace: %[1]s}
reason: Testing
message: with an eventTime
type: Normal
eventTime: "2026-03-14T08:26:53.123456Z"
series: {count: 2, lastObservedTime: "2026-03-14T08:27:53.654321Z"}
reportingComponent: example.com/e2e
reportingInstance: e2e-1
action: Testing
---
apiVersion: v1
kind: Secret
metadata: {name: sec}
type: Opaque
data: {bin: AP/+gICA, empty: ""}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {a: "1", multi: "line1\nline2\n", unicode: "é ✓"}
binaryData: {blob: AP/+gICA}
`, ns, node)
}

func TestProtobufDecodesAsJSONOnRealAPIServer(t *testing.T) {
	ns := namespace(t)
	node := ns + "-node" // unique: the namespace's name is
	t.Cleanup(func() {
		_ = exec.Command("kubectl", "--kubeconfig", shared.cluster.Kubeconfig, "delete", "node", node, "--wait=false").Run()
	})
	kubectlIn(t, protobufObjectsYAML(ns, node), "-n", ns, "create", "-f", "-")
	cases := []struct {
		resource, name string
		check          func(t *testing.T, resource, ns, name string, autoProto bool)
		autoProto      bool // what auto asks for: protobuf for the model's types, JSON for Raw
	}{
		{"pods", "full", compareEncodings[*object.Pod], true},
		{"replicasets.apps", "rs", compareEncodings[*object.ReplicaSet], true},
		{"deployments.apps", "dep", compareEncodings[*object.Deployment], true},
		{"leases.coordination.k8s.io", "lease", compareEncodings[*object.Lease], true},
		{"nodes", node, compareEncodings[*object.Raw], false},
		{"events", "legacy", compareEncodings[*object.Raw], false},
		{"events", "series", compareEncodings[*object.Raw], false},
		{"secrets", "sec", compareEncodings[*object.Raw], false},
		{"configmaps", "cm", compareEncodings[*object.Raw], false},
	}
	for _, tc := range cases {
		t.Run(tc.resource+"/"+tc.name, func(t *testing.T) { tc.check(t, tc.resource, ns, tc.name, tc.autoProto) })
	}
}

// compareEncodings reads the object name by Get and by List with a JSON, a protobuf and
// an auto client, and checks that the protobuf read keeps its unknown fields in protobuf,
// models what the JSON read does, and encodes back to the bytes the server sent.
func compareEncodings[T object.Object](t *testing.T, resource, ns, name string, autoProto bool) {
	ctx := testwait.Context(t, time.Minute)
	jr := resourceRetrying[T](t, encodingClient(t, listwatch.EncodingJSON), resource, ns)
	pr := resourceRetrying[T](t, encodingClient(t, listwatch.EncodingProtobuf), resource, ns)
	ar := resourceRetrying[T](t, encodingClient(t, listwatch.EncodingAuto), resource, ns)
	wantAuto := listwatch.EncodingJSON
	if autoProto {
		wantAuto = listwatch.EncodingProtobuf
	}
	if jr.Encoding() != listwatch.EncodingJSON || pr.Encoding() != listwatch.EncodingProtobuf || ar.Encoding() != wantAuto {
		t.Errorf("the handles ask for %s (json), %s (protobuf), %s (auto, want %s)", jr.Encoding(), pr.Encoding(), ar.Encoding(), wantAuto)
	}

	t.Run("get", func(t *testing.T) {
		var js, pb, auto T
		var env kubeproto.Envelope
		for attempt := 0; ; attempt++ {
			var err error
			if js, err = jr.Get(ctx, name); err != nil {
				t.Fatalf("json: %v", err)
			}
			if pb, err = pr.Get(ctx, name); err != nil {
				t.Fatalf("protobuf: %v", err)
			}
			if auto, err = ar.Get(ctx, name); err != nil {
				t.Fatalf("auto: %v", err)
			}
			env = protobufGet(t, pr.Info().Path(ns, name, ""))
			sent, err := codec.DecodeProtobuf[T](env.Raw, object.DecodeOptions{})
			if err != nil {
				t.Fatalf("the server's protobuf does not decode: %v", err)
			}
			rv := js.Meta().ResourceVersion
			if pb.Meta().ResourceVersion == rv && auto.Meta().ResourceVersion == rv && sent.Meta().ResourceVersion == rv {
				break
			}
			if attempt == 3 {
				t.Fatalf("the object keeps changing between reads")
			}
		}
		checkUnknownsAre(t, "read in json", js, false)
		checkUnknownsAre(t, "read in protobuf", pb, true)
		checkUnknownsAre(t, "read in auto", auto, autoProto)
		if d := cmp.Diff(modelled.Of(js), modelled.Of(pb)); d != "" {
			t.Errorf("the modelled fields read in protobuf differ from JSON's (-json +protobuf):\n%s", d)
		}
		if d := cmp.Diff(modelled.Of(js), modelled.Of(auto)); d != "" {
			t.Errorf("the modelled fields read in auto differ from JSON's (-json +auto):\n%s", d)
		}
		if env.Kind == "" || env.APIVersion == "" {
			t.Errorf("the server's envelope has apiVersion %q kind %q", env.APIVersion, env.Kind)
		}
		out, err := object.MarshalProtobuf(pb)
		if err != nil {
			t.Fatalf("MarshalProtobuf: %v", err)
		}
		if !bytes.Equal(out, env.Raw) {
			t.Errorf("encoded again, the object read in protobuf is not what the server sent: %s", firstDifference(out, env.Raw))
		}
		// A JSON read holds JSON members: protobuf cannot carry them.
		if _, err := object.MarshalProtobuf(js); err == nil {
			t.Errorf("MarshalProtobuf of the object read in JSON: no error, want one (its members are JSON)")
		}
	})

	t.Run("list", func(t *testing.T) {
		find := func(r *listwatch.Resource[T]) (T, string) {
			t.Helper()
			l, err := r.List(ctx, listwatch.ListOptions{})
			if err != nil {
				t.Fatalf("list (%s): %v", r.Encoding(), err)
			}
			for _, o := range l.Items {
				if o.Meta().Name == name {
					return o, l.ResourceVersion
				}
			}
			t.Fatalf("list (%s): no %s among %d items", r.Encoding(), name, len(l.Items))
			var zero T
			return zero, ""
		}
		var js, pb T
		var items [][]byte
		for attempt := 0; ; attempt++ {
			js, _ = find(jr)
			pb, _ = find(pr)
			env := protobufGet(t, pr.Info().Path(ns, "", ""))
			items = nil
			if _, err := kubeproto.ParseList(env.Raw, func(obj []byte) error { items = append(items, bytes.Clone(obj)); return nil }); err != nil {
				t.Fatalf("the server's protobuf list: %v", err)
			}
			if js.Meta().ResourceVersion == pb.Meta().ResourceVersion {
				break
			}
			if attempt == 3 {
				t.Fatalf("the object keeps changing between lists")
			}
		}
		checkUnknownsAre(t, "listed in json", js, false)
		checkUnknownsAre(t, "listed in protobuf", pb, true)
		if d := cmp.Diff(modelled.Of(js), modelled.Of(pb)); d != "" {
			t.Errorf("the modelled fields listed in protobuf differ from JSON's (-json +protobuf):\n%s", d)
		}
		out, err := object.MarshalProtobuf(pb)
		if err != nil {
			t.Fatalf("MarshalProtobuf: %v", err)
		}
		if !slices.ContainsFunc(items, func(b []byte) bool { return bytes.Equal(b, out) }) {
			closest := items[0]
			for _, b := range items {
				if bytes.Contains(b, []byte(name)) {
					closest = b
				}
			}
			t.Errorf("encoded again, the item listed in protobuf is none of the server's %d items: %s", len(items), firstDifference(out, closest))
		}
	})
}

// resourceRetrying is resource, retried while discovery does not know the resource yet
// (a custom resource just established).
func resourceRetrying[T object.Object](t *testing.T, c *listwatch.Client, name, ns string) *listwatch.Resource[T] {
	t.Helper()
	var info listwatch.ResourceInfo
	var err error
	clusterPoll.Eventually(t, 30*time.Second, func() bool {
		info, err = c.Discover(testwait.Context(t, 10*time.Second), name)
		return err == nil
	}, "discovery of %s: %v", name, testwait.Lazy(func() any { return err }))
	return listwatch.For[T](c, info, ns)
}

// The pod and the deployment the update test writes back: each with fields the model
// does not hold (tolerations, env, probes, annotations, an initContainer, volumes).
const keepPodYAML = `apiVersion: v1
kind: Pod
metadata:
  name: keep
  labels: {app: keep}
  annotations: {note: kept, example.com/json: '{"a":[1,2]}'}
spec:
  terminationGracePeriodSeconds: 7
  initContainers:
  - {name: init, image: "busybox:1.36", command: [sh, -c, "true"]}
  containers:
  - name: web
    image: nginx:1.27
    ports: [{containerPort: 8080, name: http}]
    env: [{name: A, value: "1"}, {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
    readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 3}
    resources: {limits: {memory: 64Mi}, requests: {cpu: 100m}}
    volumeMounts: [{name: scratch, mountPath: /tmp}]
  volumes: [{name: scratch, emptyDir: {}}]
  tolerations: [{key: k, operator: Exists, effect: NoSchedule}, {key: t, operator: Equal, value: v, effect: NoExecute, tolerationSeconds: 30}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: keep
  labels: {app: keep}
  annotations: {note: kept}
spec:
  replicas: 2
  selector: {matchLabels: {app: keep}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: "25%", maxUnavailable: 1}}
  template:
    metadata: {labels: {app: keep}, annotations: {note: kept}}
    spec:
      initContainers:
      - {name: init, image: "busybox:1.36", command: [sh, -c, "true"]}
      containers:
      - name: web
        image: nginx:1.27
        env: [{name: A, value: "1"}]
        readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 3}
        volumeMounts: [{name: scratch, mountPath: /tmp}]
      volumes: [{name: scratch, emptyDir: {sizeLimit: 1Gi}}]
      tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
`

func TestProtobufUpdateKeepsUnknownFields(t *testing.T) {
	for _, enc := range []listwatch.Encoding{listwatch.EncodingJSON, listwatch.EncodingProtobuf} {
		t.Run(string(enc), func(t *testing.T) {
			proto := enc == listwatch.EncodingProtobuf
			ns := namespace(t)
			kubectlIn(t, keepPodYAML, "-n", ns, "create", "-f", "-")
			c := encodingClient(t, enc)
			ctx := testwait.Context(t, time.Minute)

			// writtenAs checks that obj, read in enc, is written back in it: as protobuf
			// (JSON cannot carry its unknown fields), or as JSON.
			writtenAs := func(t *testing.T, obj any) {
				t.Helper()
				checkUnknownsAre(t, "read", obj, proto)
				_, err := json.Marshal(obj)
				switch {
				case proto && !errors.Is(err, object.ErrProtobufMembers):
					t.Errorf("json.Marshal of an object read in protobuf: %v, want ErrProtobufMembers (its update would not go as protobuf)", err)
				case !proto && err != nil:
					t.Errorf("json.Marshal of an object read in JSON: %v", err)
				}
			}

			t.Run("pod: a label", func(t *testing.T) {
				before := kubectlJSON(t, ns, "pod", "keep")
				pods := resource[*object.Pod](t, c, "pods", ns)
				p, err := pods.Get(ctx, "keep")
				if err != nil {
					t.Fatal(err)
				}
				if p.ResourceVersion != before["metadata"].(map[string]any)["resourceVersion"] {
					t.Fatalf("the pod changed between kubectl's read and ours (rv %s)", p.ResourceVersion)
				}
				writtenAs(t, p)
				labels := maps.Clone(p.Labels)
				labels["changed"] = "yes"
				p.Labels = labels
				back, err := pods.Update(ctx, p)
				if err != nil {
					t.Fatalf("update: %v", err)
				}
				if back.Labels["changed"] != "yes" || back.ResourceVersion == p.ResourceVersion {
					t.Errorf("the update answered labels %v rv %s", back.Labels, back.ResourceVersion)
				}
				checkUnknownsAre(t, "the update's answer", back, proto)
				after := kubectlJSON(t, ns, "pod", "keep")
				wantLabels := cut(before, "metadata.labels").(map[string]any)
				wantLabels["changed"] = "yes"
				if d := cmp.Diff(wantLabels, cut(after, "metadata.labels")); d != "" {
					t.Errorf("labels after the update (-want +got):\n%s", d)
				}
				sameExcept(t, before, after, "metadata.resourceVersion", "metadata.managedFields", "metadata.generation")
			})

			t.Run("deployment: spec.replicas", func(t *testing.T) {
				before := kubectlJSON(t, ns, "deployment", "keep")
				deps := resource[*object.Deployment](t, c, "deployments.apps", ns)
				d, err := deps.Get(ctx, "keep")
				if err != nil {
					t.Fatal(err)
				}
				if d.ResourceVersion != before["metadata"].(map[string]any)["resourceVersion"] {
					t.Fatalf("the deployment changed between kubectl's read and ours (rv %s)", d.ResourceVersion)
				}
				writtenAs(t, d)
				if _, ok := d.Spec.Template.Spec.Unknown.Protobuf(); ok != proto {
					t.Errorf("the template's pod spec keeps its unknown fields as protobuf=%v, want %v", ok, proto)
				}
				five := int32(5)
				d.Spec.Replicas = &five
				back, err := deps.Update(ctx, d)
				if err != nil {
					t.Fatalf("update: %v", err)
				}
				if back.Spec.Replicas == nil || *back.Spec.Replicas != 5 {
					t.Errorf("the update answered spec.replicas %v", back.Spec.Replicas)
				}
				checkUnknownsAre(t, "the update's answer", back, proto)
				after := kubectlJSON(t, ns, "deployment", "keep")
				if got := cut(after, "spec.replicas"); got != float64(5) {
					t.Errorf("spec.replicas after the update: %v", got)
				}
				cut(before, "spec.replicas")
				sameExcept(t, before, after, "metadata.resourceVersion", "metadata.managedFields", "metadata.generation")
			})

			// What a controller does before it changes a cached object (the deployment
			// controller's sync, leader election's Lease): copy it, in its encoding.
			t.Run("object.DeepCopy", func(t *testing.T) {
				p, err := resource[*object.Pod](t, c, "pods", ns).Get(ctx, "keep")
				if err != nil {
					t.Fatal(err)
				}
				d, err := resource[*object.Deployment](t, c, "deployments.apps", ns).Get(ctx, "keep")
				if err != nil {
					t.Fatal(err)
				}
				checkDeepCopy(t, p, proto)
				checkDeepCopy(t, d, proto)
			})
		})
	}
}

// checkDeepCopy checks that object.DeepCopy copies obj whole, its unknown fields in
// their encoding, rather than panic.
func checkDeepCopy[P object.Object](t *testing.T, obj P, proto bool) {
	t.Helper()
	cp, ok := func() (_ P, ok bool) {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("object.DeepCopy(%T read in protobuf=%v) panicked: %v", obj, proto, r)
			}
		}()
		return object.DeepCopy(obj), true
	}()
	if !ok {
		return
	}
	if d := cmp.Diff(obj, cp); d != "" {
		t.Errorf("object.DeepCopy(%T) differs from the original (-original +copy):\n%s", obj, d)
	}
	checkUnknownsAre(t, "the copy", cp, proto)
}

// sameExcept fails t unless before and after are equal once the members at paths are
// removed from both.
func sameExcept(t *testing.T, before, after map[string]any, paths ...string) {
	t.Helper()
	for _, p := range paths {
		cut(before, p)
		cut(after, p)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("the update changed more than it was asked to (-before +after):\n%s", d)
	}
}

func TestControllersRolloutInEachEncoding(t *testing.T) {
	for _, enc := range []string{"json", "protobuf"} {
		t.Run(enc, func(t *testing.T) {
			ns := namespace(t)
			h := deployments(t, ns)
			startProc(t, "fake-kubelet", "--kubeconfig", shared.cluster.Kubeconfig, "--ready-after", "300ms", "--encoding", enc)
			m, _ := startManager(t, "--encoding", enc, "-v")
			rollout := func(step string) {
				t.Helper()
				out, err := kubectlErr(t, "rollout", "status", "-n", ns, "deployment/web", "--timeout=90s")
				if err != nil || !strings.Contains(out, "successfully rolled out") {
					t.Fatalf("%s: rollout status: %v\n%s", step, err, out)
				}
			}
			kubectl(t, "create", "deployment", "web", "-n", ns, "--image=nginx:1.27", "--replicas=3")
			rollout("create")
			kubectl(t, "set", "image", "-n", ns, "deployment/web", "nginx=nginx:1.28")
			rollout("set image")
			if n := len(h.owned(t, h.get(t, "web"))); n != 2 {
				t.Errorf("%d ReplicaSets after set image, want 2", n)
			}
			kubectl(t, "rollout", "undo", "-n", ns, "deployment/web")
			rollout("undo")
			d := h.get(t, "web")
			if got := containerImage(t, d.Spec.Template); got != "nginx:1.27" {
				t.Errorf("after undo the template has %s", got)
			}
			if n := len(h.owned(t, d)); n != 2 {
				t.Errorf("%d ReplicaSets after undo, want 2", n)
			}
			if d.Status.UpdatedReplicas != 3 || d.Status.AvailableReplicas != 3 || d.Status.ObservedGeneration != d.Generation {
				t.Errorf("status after undo: %+v (generation %d)", d.Status, d.Generation)
			}
			if pods := h.podsOf(t, d, true); len(pods) != 1 || slices.Collect(maps.Values(pods))[0] != 3 {
				t.Errorf("pods after undo: %v, want 3 of one ReplicaSet", pods)
			}
			if out := m.output(); strings.Contains(out, "encoding=") {
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, "encoding=") {
						t.Logf("controller-manager: %s", l)
						if !strings.Contains(l, "encoding="+enc) {
							t.Errorf("controller-manager --encoding %s says: %s", enc, l)
						}
					}
				}
			} else {
				t.Logf("the controller-manager's output does not mention the encoding")
			}
		})
	}
}

func TestCLIVerifyInEachEncoding(t *testing.T) {
	ns := namespace(t)
	for i := range 3 {
		kubectl(t, "-n", ns, "run", fmt.Sprint("p", i), "--image=nginx", "--restart=Never", "--labels=app=cli")
	}
	encodings := []struct{ flag, asks string }{{"json", "json"}, {"protobuf", "protobuf"}, {"auto", "json"}} // auto reads Raw as JSON
	dumps := map[string]string{}
	for _, e := range encodings {
		t.Run("cache "+e.flag, func(t *testing.T) {
			out, err := exec.Command(shared.bin, "cache", "verify", "pods", "-n", ns, "--kubeconfig", shared.cluster.Kubeconfig, "--encoding", e.flag).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "verified 3 objects") || !strings.Contains(string(out), ": 0 difference(s)") {
				t.Errorf("cache verify --encoding %s: %v\n%s", e.flag, err, out)
			}
			t.Logf("cache verify --encoding %s: %s", e.flag, strings.TrimSpace(string(out)))
			if strings.Contains(string(out), "encoding=") && !strings.Contains(string(out), "(encoding="+e.asks+")") {
				t.Errorf("cache verify --encoding %s: want encoding=%s in:\n%s", e.flag, e.asks, out)
			}
			cmd := exec.Command(shared.bin, "cache", "dump", "pods", "-n", ns, "--kubeconfig", shared.cluster.Kubeconfig, "--encoding", e.flag)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("cache dump --encoding %s: %v\n%s", e.flag, err, stderr.String())
			}
			if n := strings.Count(stdout.String(), "\n"); n != 3 {
				t.Errorf("cache dump --encoding %s: %d lines:\n%s", e.flag, n, stdout.String())
			}
			dumps[e.flag] = stdout.String()
		})
	}
	if d := cmp.Diff(dumps["json"], dumps["protobuf"]); d != "" {
		t.Errorf("cache dump (-json +protobuf):\n%s", d)
	}
	if d := cmp.Diff(dumps["json"], dumps["auto"]); d != "" {
		t.Errorf("cache dump (-json +auto):\n%s", d)
	}
	for _, e := range encodings {
		t.Run("watch "+e.flag, func(t *testing.T) {
			lw := startCLI(t, "watch", "pods", "-n", ns, "--kubeconfig", shared.cluster.Kubeconfig, "--encoding", e.flag)
			lw.waitFor(t, "ADD     "+ns+"/p0")
			lw.waitFor(t, "kinformer: synced ")
			if !strings.Contains(lw.String(), "(encoding="+e.asks+")") {
				t.Errorf("watch --encoding %s: want encoding=%s in:\n%s", e.flag, e.asks, lw)
			}
			t.Logf("watch --encoding %s:\n%s", e.flag, lw)
			kubectl(t, "-n", ns, "label", "pod", "p1", "seen-by="+e.flag, "--overwrite")
			lw.waitFor(t, "UPDATE  "+ns+"/p1")
		})
	}
}

// pbWidgetCRD is a custom resource of its own (informer_test.go's Widget is another
// group): custom resources have no protobuf.
const pbWidgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.pb.example.com}
spec:
  group: pb.example.com
  names: {plural: widgets, singular: widget, kind: Widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func pbWidget(i int) string {
	return fmt.Sprintf("apiVersion: pb.example.com/v1\nkind: Widget\nmetadata: {name: w%d}\nspec: {size: %d, color: blue, tags: [a, b], nested: {enabled: true}}\n", i, i)
}

func pbWidgetSpec(i int) string {
	return fmt.Sprintf(`{"size":%d,"color":"blue","tags":["a","b"],"nested":{"enabled":true}}`, i)
}

// checkWidgetSpec fails t unless w holds JSON members and its spec is widget i's.
func checkWidgetSpec(t *testing.T, w *object.Raw, i int) {
	t.Helper()
	if _, ok := w.Unknown.Protobuf(); ok {
		t.Errorf("%s: its members are protobuf, from a server that has none for custom resources", w.Name)
	}
	var got, want any
	spec := w.Unknown.Get("spec")
	if err := json.Unmarshal(spec, &got); err != nil {
		t.Errorf("%s: spec %q is not JSON: %v", w.Name, spec, err)
		return
	}
	_ = json.Unmarshal([]byte(pbWidgetSpec(i)), &want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: spec (-want +got):\n%s", w.Name, d)
	}
}

func TestCustomResourceFallsBackToJSON(t *testing.T) {
	ns := namespace(t)
	kubectlIn(t, pbWidgetCRD, "apply", "-f", "-")
	t.Cleanup(func() {
		if out, err := kubectlErr(t, "delete", "crd", "widgets.pb.example.com", "--timeout=60s"); err != nil {
			t.Logf("deleting the CRD: %v\n%s", err, out)
		}
	})
	kubectl(t, "wait", "--for=condition=Established", "crd/widgets.pb.example.com", "--timeout=60s")
	kubectlIn(t, pbWidget(0)+"---\n"+pbWidget(1)+"---\n"+pbWidget(2), "-n", ns, "create", "-f", "-")

	c := encodingClient(t, listwatch.EncodingProtobuf)
	widgets := resourceRetrying[*object.Raw](t, c, "widgets.pb.example.com", ns)
	if widgets.Encoding() != listwatch.EncodingProtobuf {
		t.Errorf("a Raw handle of a protobuf client asks for %s", widgets.Encoding())
	}
	// What the server answers the Accept header the client sends.
	body, ct := rawGet(t, widgets.Info().Path(ns, "", ""), "application/vnd.kubernetes.protobuf, application/json")
	if !strings.HasPrefix(ct, "application/json") {
		t.Errorf("the apiserver answers a custom resource's list in %q (%q), want JSON", ct, bodyHead(body))
	}
	ctx := testwait.Context(t, 2*time.Minute)

	t.Run("list, get, watch", func(t *testing.T) {
		list, err := widgets.List(ctx, listwatch.ListOptions{})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != 3 {
			t.Fatalf("%d widgets listed", len(list.Items))
		}
		for i, w := range list.Items {
			if w.Name != fmt.Sprint("w", i) {
				t.Errorf("item %d is %s", i, w.Name)
			}
			checkWidgetSpec(t, w, i)
		}
		w1, err := widgets.Get(ctx, "w1")
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if w1.Kind != "Widget" || w1.APIVersion != "pb.example.com/v1" {
			t.Errorf("get: kind %q apiVersion %q", w1.Kind, w1.APIVersion)
		}
		checkWidgetSpec(t, w1, 1)

		w, err := widgets.Watch(ctx, listwatch.WatchOptions{ResourceVersion: list.ResourceVersion, AllowBookmarks: true})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Close()
		kubectlIn(t, pbWidget(3), "-n", ns, "create", "-f", "-")
		ev := nextEvent(t, w)
		if ev.Type != listwatch.Added || ev.Object.Name != "w3" {
			t.Fatalf("event %s %s, want ADDED w3", ev.Type, ev.Object.Name)
		}
		checkWidgetSpec(t, ev.Object, 3)

		// An object read as JSON is written as JSON, by a protobuf client too.
		labels := maps.Clone(w1.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels["changed"] = "yes"
		w1.Labels = labels
		back, err := widgets.Update(ctx, w1)
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if back.Labels["changed"] != "yes" {
			t.Errorf("update answered labels %v", back.Labels)
		}
		checkWidgetSpec(t, back, 1)
		ev = nextEvent(t, w)
		if ev.Type != listwatch.Modified || ev.Object.Name != "w1" || ev.Object.Labels["changed"] != "yes" {
			t.Errorf("event %s %s %v, want MODIFIED w1 with the label", ev.Type, ev.Object.Name, ev.Object.Labels)
		}
	})

	t.Run("informer", func(t *testing.T) {
		ictx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f := informer.NewFactory(c, informer.FactoryOptions{})
		defer f.Shutdown()
		inf, err := informer.For[*object.Raw](ictx, f, "widgets.pb.example.com", informer.Selectors{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		f.Start(ictx)
		if err := f.WaitForSync(testwait.Context(t, 30*time.Second)); err != nil {
			t.Fatalf("sync: %v; status %+v", err, inf.Status())
		}
		if st := inf.Status(); st.Encoding != listwatch.EncodingProtobuf {
			t.Errorf("the informer's status says encoding %q", st.Encoding)
		}
		if n := len(inf.Lister().List(object.Everything())); n != 4 {
			t.Errorf("%d widgets cached after the sync, want 4", n)
		}
		kubectlIn(t, pbWidget(4), "-n", ns, "create", "-f", "-")
		var w4 *object.Raw
		clusterPoll.Eventually(t, 20*time.Second, func() bool {
			var ok bool
			w4, ok = inf.Lister().Get(ns + "/w4")
			return ok
		}, "w4 never reached the cache; status %+v", testwait.Lazy(func() any { return inf.Status() }))
		checkWidgetSpec(t, w4, 4)
		for _, w := range inf.Lister().List(object.Everything()) {
			var i int
			if _, err := fmt.Sscanf(w.Name, "w%d", &i); err != nil {
				t.Errorf("cached %s", w.Name)
				continue
			}
			checkWidgetSpec(t, w, i)
		}
		if st := inf.Status(); st.LastError != nil {
			t.Errorf("the informer's last error: %v", st.LastError)
		}
	})
}
