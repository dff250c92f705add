package object

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/testrig/memtest"
)

// realisticPod returns pod i of a cluster as kube-apiserver 1.3x serves it, managedFields
// included (about 4 KB, 3.1 KB without them): pods of 100 ReplicaSets in 10 namespaces on 200 nodes, each
// with its own name, uid, IPs, container ID, service-account volume suffix and times.
func realisticPod(i int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	const letters = "bcdfghjklmnpqrstvwxz2456789"
	suffix := func(n int) string {
		b := make([]byte, n)
		for j := range b {
			b[j] = letters[r.IntN(len(letters))]
		}
		return string(b)
	}
	hex := func(n int) string {
		b := make([]byte, n)
		for j := range b {
			b[j] = "0123456789abcdef"[r.IntN(16)]
		}
		return string(b)
	}
	uid := func() string { return hex(8) + "-" + hex(4) + "-4" + hex(3) + "-8" + hex(3) + "-" + hex(12) }
	rsN := i % 100
	rr := rand.New(rand.NewPCG(uint64(rsN), 11)) // what pods of one ReplicaSet share
	rsHash := fmt.Sprintf("%x", rr.Uint32()>>4)
	app := []string{"web", "api", "worker", "cache", "frontend", "auth", "billing", "search", "mailer", "gateway"}[rsN%10]
	rsUID := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rr.Uint32(), rr.IntN(1<<16), rr.IntN(1<<12), rr.IntN(1<<12), rr.Uint64()>>16)
	ns := fmt.Sprintf("team-%d", rsN%10)
	node := fmt.Sprintf("node-%d", r.IntN(200))
	hostIP := fmt.Sprintf("172.18.%d.%d", r.IntN(4), 2+r.IntN(250))
	podIP := fmt.Sprintf("10.244.%d.%d", r.IntN(200), 2+r.IntN(250))
	image := fmt.Sprintf("registry.example.com/%s/%s:1.%d.%d", ns, app, rsN%7, rsN%13)
	imageID := fmt.Sprintf("registry.example.com/%s/%s@sha256:%064x", ns, app, rr.Uint64())
	created := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(86400)) * time.Second)
	ts := func(d int) string { return created.Add(time.Duration(d) * time.Second).Format(time.RFC3339) }
	name := app + "-" + rsHash + "-" + suffix(5)
	vol := "kube-api-access-" + suffix(5)
	doc := fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":%[1]q,"generateName":%[2]q,"namespace":%[3]q,"uid":%[4]q,"resourceVersion":"%[5]d","creationTimestamp":%[6]q,
"labels":{"app":%[7]q,"pod-template-hash":%[8]q},
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":%[9]q,"uid":%[10]q,"controller":true,"blockOwnerDeletion":true}],
"managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":%[6]q,"fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"%[10]s\"}":{}}}}},
{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":%[11]q,"fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"%[12]s\"}":{".":{},"f:ip":{}}},"f:startTime":{}}},"subresource":"status"}]},
"spec":{"volumes":[{"name":%[13]q,"projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],
"containers":[{"name":%[7]q,"image":%[14]q,"ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{"limits":{"memory":"256Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},"volumeMounts":[{"name":%[13]q,"readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],
"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default","nodeName":%[15]q,"securityContext":{},"schedulerName":"default-scheduler",
"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],
"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},
"status":{"phase":"Running","conditions":[{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":%[16]q},{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":%[6]q},{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":%[11]q},{"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":%[11]q},{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":%[6]q}],
"hostIP":%[17]q,"hostIPs":[{"ip":%[17]q}],"podIP":%[12]q,"podIPs":[{"ip":%[12]q}],"startTime":%[6]q,
"containerStatuses":[{"name":%[7]q,"state":{"running":{"startedAt":%[16]q}},"lastState":{},"ready":true,"restartCount":0,"image":%[14]q,"imageID":%[18]q,"containerID":"containerd://%[19]s","started":true,"volumeMounts":[{"name":%[13]q,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true,"recursiveReadOnly":"Disabled"}]}],
"qosClass":"Burstable"}}`,
		name, app+"-"+rsHash+"-", ns, uid(), 100000+i*3, ts(0),
		app, rsHash,
		app+"-"+rsHash, rsUID,
		ts(5), podIP, vol, image, node, ts(2), hostIP, imageID, hex(64))
	var out bytes.Buffer
	if err := json.Compact(&out, []byte(doc)); err != nil {
		panic(err)
	}
	return out.Bytes()
}

// partialMetadata is pod i as a metadata-only (PartialObjectMetadata) list item.
func partialMetadata(i int) []byte {
	var p struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(realisticPod(i), &p); err != nil {
		panic(err)
	}
	return []byte(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":` + string(p.Metadata) + `}`)
}

const retainedObjects = 10000

// retained holds the objects of the last BenchmarkDecodePodRetained run, so that a heap
// profile (go test -memprofile, then pprof -sample_index=inuse_space) shows them.
var retained any

// BenchmarkDecodePodRetained measures what a cache pays per object: heap-B/pod is the live
// heap of retainedObjects distinct decoded objects (managedFields dropped, as the informer
// does by default) after the frames they came from are gone; ns/op and MB/s are per object.
func BenchmarkDecodePodRetained(b *testing.B) {
	b.Run("pod", func(b *testing.B) {
		benchRetained[*Pod](b, realisticPod, func() DecodeOptions { return DecodeOptions{} })
	})
	b.Run("raw-metadata", func(b *testing.B) {
		benchRetained[*Raw](b, partialMetadata, func() DecodeOptions { return DecodeOptions{} })
	})
	// As an informer decodes: managedFields dropped, and the cache's own table of shared parts.
	b.Run("pod-cache", func(b *testing.B) {
		benchRetained[*Pod](b, realisticPod, func() DecodeOptions {
			return DecodeOptions{DropManagedFields: true, Maps: NewMapTable()}
		})
	})
}

func benchRetained[T Object](b *testing.B, gen func(int) []byte, options func() DecodeOptions) {
	frames := make([][]byte, retainedObjects)
	size := 0
	for i := range frames {
		frames[i] = gen(i)
		size += len(frames[i])
	}
	opts := options()
	decode := func(f []byte) T {
		obj, err := codec.DecodeUnvalidated[T](f, opts)
		if err != nil {
			b.Fatal(err)
		}
		obj.Meta().Unknown.Delete("managedFields")
		return obj
	}

	// Heap: decode every frame, then replace the frames by fresh copies (for the timing
	// loop). The live heap grows by what the objects hold, and by any frame that one of
	// them still refers to.
	keep := make([]T, len(frames))
	before := memtest.AfterGC().HeapAlloc
	for i, f := range frames {
		keep[i] = decode(f)
	}
	inputs := frames
	frames = nil
	for i := range inputs {
		inputs[i] = gen(i)
	}
	after := memtest.AfterGC().HeapAlloc
	runtime.KeepAlive(keep)
	heap := float64(after-before) / float64(len(keep))
	retained = keep // for -memprofile, written when the benchmarks are done

	b.SetBytes(int64(size / len(inputs)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = decode(inputs[i])
		if i++; i == len(inputs) {
			i = 0
		}
	}
	// Reported after the loop: b.Loop resets user metrics when it starts timing.
	b.ReportMetric(heap, "heap-B/pod")
	b.ReportMetric(float64(size)/float64(len(inputs)), "json-B/pod")
}
