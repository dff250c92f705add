package streamserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

var corpusStats = flag.Int("corpus-stats", 0, "print the realistic corpus's mean JSON sizes over this many pods (TestRealisticCorpusStats; 10000 is the figure quoted)")

// realisticPod is what the tests read of a realistic pod.
type realisticPod struct {
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		UID             string            `json:"uid"`
		Labels          map[string]string `json:"labels"`
		Annotations     map[string]string `json:"annotations"`
		OwnerReferences []struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"ownerReferences"`
		ManagedFields []struct {
			Manager     string `json:"manager"`
			Time        string `json:"time"`
			Subresource string `json:"subresource"`
		} `json:"managedFields"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
		Volumes  []struct {
			Name string `json:"name"`
		} `json:"volumes"`
		Containers []struct {
			Name         string            `json:"name"`
			Image        string            `json:"image"`
			Env          []json.RawMessage `json:"env"`
			VolumeMounts []struct {
				Name string `json:"name"`
			} `json:"volumeMounts"`
		} `json:"containers"`
		Tolerations []json.RawMessage `json:"tolerations"`
		Priority    *int              `json:"priority"`
	} `json:"spec"`
	Status struct {
		PodIP      string `json:"podIP"`
		HostIP     string `json:"hostIP"`
		QOSClass   string `json:"qosClass"`
		Conditions []struct {
			Type               string `json:"type"`
			LastTransitionTime string `json:"lastTransitionTime"`
		} `json:"conditions"`
		ContainerStatuses []struct {
			Name         string `json:"name"`
			RestartCount int    `json:"restartCount"`
			ContainerID  string `json:"containerID"`
			ImageID      string `json:"imageID"`
			State        struct {
				Running struct {
					StartedAt string `json:"startedAt"`
				} `json:"running"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
	raw []byte
}

func readRealistic(t *testing.T, raw []byte) *realisticPod {
	t.Helper()
	p := &realisticPod{raw: raw}
	if err := json.Unmarshal(raw, p); err != nil {
		t.Fatalf("not a pod: %v: %.300s", err, raw)
	}
	return p
}

// apiVolume is the pod's kube-api-access volume's name.
func (p *realisticPod) apiVolume() string {
	for _, v := range p.Spec.Volumes {
		if strings.HasPrefix(v.Name, "kube-api-access-") {
			return v.Name
		}
	}
	return ""
}

// template is the pod's spec as its Deployment's template makes it: without its node, its
// kube-api-access volume's name replaced by one for all pods.
func (p *realisticPod) template(t *testing.T) string {
	var whole struct {
		Spec map[string]json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(p.raw, &whole); err != nil {
		t.Fatal(err)
	}
	delete(whole.Spec, "nodeName")
	b, err := json.Marshal(whole.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), p.apiVolume(), "kube-api-access-?????")
}

func realisticServer(t testing.TB, n int) *Server {
	t.Helper()
	s, err := New(Options{Profile: RealisticPods, Objects: n})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The same seed makes the same bytes, kubelet variants included; another seed others.
func TestRealisticDeterministic(t *testing.T) {
	a, b := realisticServer(t, 200), realisticServer(t, 200)
	c, err := New(Options{Profile: RealisticPods, Objects: 200, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range a.items {
		x, y := &a.items[i], &b.items[i]
		if !bytes.Equal(a.ObjectJSON(i), b.ObjectJSON(i)) || !bytes.Equal(x.meta.buf, y.meta.buf) ||
			!cmp.Equal(x.kubelet.full, y.kubelet.full, cmp.AllowUnexported(patchSet{}, patchSpan{})) ||
			!cmp.Equal(x.kubelet.meta, y.kubelet.meta, cmp.AllowUnexported(patchSet{}, patchSpan{})) {
			t.Fatalf("pod %d differs between two servers of one seed", i)
		}
		if bytes.Equal(a.ObjectJSON(i), c.ObjectJSON(i)) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d pods are the same with seed 2", same)
	}
}

// The corpus looks like a multi-tenant cluster: many namespaces, numbered and named,
// Deployments holding their pods unevenly, each pod with its template's spec but for
// its own kube-api-access volume and node, 1 to 4 containers, per-pod identities.
func TestRealisticCorpus(t *testing.T) {
	const n = 1000
	s := realisticServer(t, n)
	namespaces, nodes, sidecars := map[string]bool{}, map[string]bool{}, map[string]int{}
	templates := map[string]string{}                 // a spec per ReplicaSet uid
	perDeploy := map[string]int{}                    // pods per ReplicaSet uid
	seen := map[string]string{}                      // pod names, uids, IPs and volumes, by value
	containers, envs := map[int]int{}, map[int]int{} // pods by container count, env lists by length
	qos := map[string]int{}
	restarted := 0
	tenant := regexp.MustCompile(`^tenant-\d\d$`)
	numbered := 0
	for i := range s.Len() {
		p := readRealistic(t, s.ObjectJSON(i))
		md := p.Metadata
		if !namespaces[md.Namespace] && tenant.MatchString(md.Namespace) {
			numbered++
		}
		namespaces[md.Namespace] = true
		nodes[p.Spec.NodeName] = true
		qos[p.Status.QOSClass]++
		vol := p.apiVolume()
		for _, v := range []string{md.Name, md.UID, vol, p.Status.PodIP} {
			if other, dup := seen[v]; dup || v == "" {
				t.Fatalf("pod %s: %q is also %s's", md.Name, v, other)
			}
			seen[v] = md.Name
		}
		if len(md.OwnerReferences) != 1 || !strings.HasPrefix(md.Name, md.OwnerReferences[0].Name+"-") ||
			len(md.Name) != len(md.OwnerReferences[0].Name)+6 || !regexp.MustCompile(`^kube-api-access-[a-z0-9]{5}$`).MatchString(vol) {
			t.Fatalf("pod %s of %+v, volume %s", md.Name, md.OwnerReferences, vol)
		}
		rs := md.OwnerReferences[0].UID
		perDeploy[rs]++
		if tmpl, ok := templates[rs]; !ok {
			templates[rs] = p.template(t)
		} else if got := p.template(t); got != tmpl {
			t.Fatalf("pod %s's spec is not its ReplicaSet's template:\n%s", md.Name, cmp.Diff(tmpl, got))
		}
		nc := len(p.Spec.Containers)
		containers[nc]++
		if nc < 1 || nc > 4 || len(p.Status.ContainerStatuses) != nc {
			t.Fatalf("pod %s has %d containers, %d statuses", md.Name, nc, len(p.Status.ContainerStatuses))
		}
		for _, c := range p.Spec.Containers {
			if !slices.ContainsFunc(c.VolumeMounts, func(m struct {
				Name string `json:"name"`
			}) bool {
				return m.Name == vol
			}) {
				t.Fatalf("pod %s's container %s does not mount %s", md.Name, c.Name, vol)
			}
			if c.Env != nil {
				envs[len(c.Env)]++
				if len(c.Env) < 3 || len(c.Env) > 30 {
					t.Fatalf("pod %s's container %s has %d env entries", md.Name, c.Name, len(c.Env))
				}
			}
			if c.Name != p.Spec.Containers[0].Name {
				sidecars[c.Name]++
			}
		}
		for _, c := range p.Status.ContainerStatuses {
			if !regexp.MustCompile(`^containerd://[0-9a-f]{64}$`).MatchString(c.ContainerID) || !strings.Contains(c.ImageID, "@sha256:") ||
				c.State.Running.StartedAt == "" {
				t.Fatalf("pod %s's container status %+v", md.Name, c)
			}
			if c.RestartCount > 0 {
				restarted++
			}
		}
		if len(p.Spec.Tolerations) != 2 || p.Spec.Priority == nil || p.Status.HostIP == "" || p.Status.QOSClass == "" ||
			len(p.Status.Conditions) != 5 {
			t.Fatalf("pod %s: tolerations %s, priority %v, hostIP %q, qosClass %q, %d conditions", md.Name, p.Spec.Tolerations,
				p.Spec.Priority, p.Status.HostIP, p.Status.QOSClass, len(p.Status.Conditions))
		}
		if mf := md.ManagedFields; len(mf) != 2 || mf[0].Manager != "kube-controller-manager" || mf[1].Manager != "kubelet" ||
			mf[1].Subresource != "status" {
			t.Fatalf("pod %s's managedFields %+v", md.Name, mf)
		}
	}
	counts := make([]int, 0, len(perDeploy))
	for _, k := range perDeploy {
		counts = append(counts, k)
	}
	slices.Sort(counts)
	median := counts[len(counts)/2]
	t.Logf("%d pods: %d namespaces (%d numbered), %d Deployments (pods each: min %d, median %d, max %d), %d nodes; pods by containers %v; "+
		"env lists by length %v; sidecars %v; QoS %v; %d restarted containers",
		s.Len(), len(namespaces), numbered, len(perDeploy), counts[0], median, counts[len(counts)-1], len(nodes), containers,
		envs, sidecars, qos, restarted)
	switch {
	case len(namespaces) < 50 || numbered < 10 || len(namespaces)-numbered < 10:
		t.Errorf("%d namespaces, %d numbered", len(namespaces), numbered)
	case len(perDeploy) < 150:
		t.Errorf("%d Deployments", len(perDeploy))
	case len(nodes) < 250:
		t.Errorf("%d nodes", len(nodes))
	case counts[0] > 2 || counts[len(counts)-1] < 10*median:
		t.Errorf("pods per Deployment: min %d, median %d, max %d: not uneven", counts[0], median, counts[len(counts)-1])
	case containers[1] == 0 || containers[2] == 0 || containers[3] == 0 || containers[4] == 0:
		t.Errorf("pods by container count: %v", containers)
	case sidecars["istio-proxy"] == 0 || sidecars["fluent-bit"] == 0 || sidecars["statsd-exporter"]+sidecars["redis-exporter"]+sidecars["nginx-exporter"] == 0:
		t.Errorf("sidecars %v: no mesh proxy, log shipper or metrics exporter", sidecars)
	case restarted == 0 || qos["Burstable"] == 0 || qos["Guaranteed"]+qos["BestEffort"] == 0:
		t.Errorf("%d restarted containers, QoS classes %v", restarted, qos)
	}
}

// Every realistic pod, as listed and in each of its kubelet variants, decodes into the
// engine's object.Pod and encodes back to the same JSON.
func TestRealisticPodsLossless(t *testing.T) {
	s := realisticServer(t, 250) // pods of every Deployment
	for i := range s.items {
		it := &s.items[i]
		docs := [][]byte{s.ObjectJSON(i)}
		if i%10 == 0 {
			for v := range kubeletVariants {
				docs = append(docs, it.full.appendPatched(nil, it.rvs, zeroStamp, it.kubelet.full.spans[v], it.kubelet.full.data[v]))
			}
		}
		for _, doc := range docs {
			var p object.Pod
			if err := json.Unmarshal(doc, &p); err != nil {
				t.Fatalf("pod %d: %v", i, err)
			}
			back, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			if err := json.Unmarshal(doc, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(back, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("pod %d through object.Pod (-sent +re-encoded):\n%s", i, diff)
			}
			if p.Spec.NodeName == "" || p.Status.Phase != object.PodRunning || !p.IsReady() || len(p.Status.ContainerStatuses) == 0 {
				t.Fatalf("pod %d read as %+v", i, p)
			}
		}
	}
}

// A kubelet variant, patched into the pod's template, is the pod encoded whole in that
// state; its PartialObjectMetadata is the whole variant's metadata.
func TestRealisticVariantsArePatches(t *testing.T) {
	const n = 300
	o := Options{Profile: RealisticPods, Objects: n}
	s := realisticServer(t, n)
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	l := newRealisticLayout(newGen(o), n)
	byName := map[string]*item{}
	for i := range s.items {
		byName[s.items[i].name] = &s.items[i]
	}
	pr := newPodRand()
	for i := range n {
		var p podDraw
		l.draw(&p, i, pr)
		it := byName[p.name]
		for v := range kubeletVariants {
			ks := p.ks.variant(it.uidHash, v+1)
			md, rest := p.fields(o, &ks)
			full, partial := wholeAndPartial("Pod", md, rest...)
			wt, wm := newTemplate(full), newTemplate(partial)
			want, wantMeta := wt.appendTo(nil, it.rvs, zeroStamp), wm.appendTo(nil, it.rvs, zeroStamp)
			kv := it.kubelet
			if got := it.full.appendPatched(nil, it.rvs, zeroStamp, kv.full.spans[v], kv.full.data[v]); !bytes.Equal(got, want) {
				t.Fatalf("pod %s variant %d:\n%s\nwant\n%s", p.name, v, got, want)
			}
			if got := it.meta.appendPatched(nil, it.rvs, zeroStamp, kv.meta.spans[v], kv.meta.data[v]); !bytes.Equal(got, wantMeta) {
				t.Fatalf("pod %s variant %d as metadata:\n%s\nwant\n%s", p.name, v, got, wantMeta)
			}
			if bytes.Equal(want, it.full.appendTo(nil, it.rvs, zeroStamp)) || len(kv.meta.spans[v]) != 1 {
				t.Fatalf("pod %s variant %d is the pod (%d spans in its metadata)", p.name, v, len(kv.meta.spans[v]))
			}
		}
	}
}

// watchAllPods watches every namespace's pods.
func watchAllPods(t *testing.T, u string, q url.Values, accept string) (next func() (event, []byte), closeFn func()) {
	t.Helper()
	q.Set("watch", "1")
	req, _ := http.NewRequest(http.MethodGet, u+"/api/v1/pods?"+q.Encode(), nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %s", resp.Status)
	}
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	return func() (event, []byte) {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("event is not JSON: %v: %.200s", err, line)
		}
		return ev, line
	}, func() { resp.Body.Close() }
}

// The realistic pods' watch events change what the kubelet writes: the condition times
// and the kubelet's managedFields time, and for a pod with a restarting container its
// restart count, state and IDs; not the spec. The changes of one pod differ one from the
// next; a metadata-only watch sees the managedFields time change.
func TestRealisticWatch(t *testing.T) {
	const n, events = 150, 600
	s, u := start(t, Options{Profile: RealisticPods, Objects: n, WatchEvents: events})
	listed := map[string]*realisticPod{}
	var page listPage
	if err := json.Unmarshal(get(t, nil, u+"/api/v1/pods", ""), &page); err != nil || len(page.Items) != n {
		t.Fatalf("list: %v, %d items", err, len(page.Items))
	}
	for _, raw := range page.Items {
		p := readRealistic(t, raw)
		listed[p.Metadata.Name] = p
	}
	stripped := func(p *realisticPod) string { // the pod without its kubelet fields and resourceVersion
		var m map[string]any
		if err := json.Unmarshal(p.raw, &m); err != nil {
			t.Fatal(err)
		}
		md := m["metadata"].(map[string]any)
		delete(md, "resourceVersion")
		delete(md, "annotations")
		delete(md["managedFields"].([]any)[1].(map[string]any), "time")
		delete(m, "status")
		b, _ := json.Marshal(m)
		return string(b)
	}
	q := url.Values{"resourceVersion": {strconv.FormatInt(s.ListResourceVersion(), 10)}}
	next, closeFn := watchAllPods(t, u, q, "")
	defer closeFn()
	last := map[string]*realisticPod{}
	restarts := 0
	for k := range events {
		ev, line := next()
		typ, i := EventAt(int64(k), n)
		raw := json.RawMessage(line[bytes.Index(line, []byte(`"object":`))+9 : len(line)-2])
		p := readRealistic(t, raw)
		l := listed[p.Metadata.Name]
		if ev.Type != typ || p.Metadata.Name != s.items[i].name || l == nil {
			t.Fatalf("event %d: %s %s, want %s %s", k, ev.Type, p.Metadata.Name, typ, s.items[i].name)
		}
		if stripped(p) != stripped(l) {
			t.Fatalf("event %d changes more than the kubelet's fields:\n%s", k, cmp.Diff(stripped(l), stripped(p)))
		}
		if p.Metadata.ManagedFields[1].Time <= l.Metadata.ManagedFields[1].Time ||
			p.Status.Conditions[2].LastTransitionTime <= l.Status.Conditions[2].LastTransitionTime {
			t.Fatalf("event %d: kubelet time %s, Ready since %s; listed %s, %s", k, p.Metadata.ManagedFields[1].Time,
				p.Status.Conditions[2].LastTransitionTime, l.Metadata.ManagedFields[1].Time, l.Status.Conditions[2].LastTransitionTime)
		}
		for j, c := range p.Status.ContainerStatuses {
			if lc := l.Status.ContainerStatuses[j]; c.RestartCount != lc.RestartCount {
				restarts++
				if c.RestartCount < lc.RestartCount || c.ContainerID == lc.ContainerID || c.State.Running.StartedAt <= lc.State.Running.StartedAt {
					t.Fatalf("event %d: container %s restarted from %+v to %+v", k, c.Name, lc, c)
				}
			}
		}
		if prev := last[p.Metadata.Name]; prev != nil && ev.Type == "MODIFIED" &&
			cmp.Equal(prev.Status.Conditions, p.Status.Conditions) {
			t.Fatalf("event %d: pod %s's status is its previous change's", k, p.Metadata.Name)
		}
		last[p.Metadata.Name] = p
	}
	if restarts == 0 {
		t.Error("no container restarted")
	}

	meta, closeMeta := watchAllPods(t, u, q, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	defer closeMeta()
	for k := range 50 {
		_, line := meta()
		p := readRealistic(t, json.RawMessage(line[bytes.Index(line, []byte(`"object":`))+9:len(line)-2]))
		if l := listed[p.Metadata.Name]; p.Metadata.ManagedFields[1].Time == l.Metadata.ManagedFields[1].Time || len(p.Spec.Containers) > 0 {
			t.Fatalf("metadata event %d: %s", k, line)
		}
	}
}

// The realistic pods' events cost the hot path no allocation either, in JSON and as
// metadata.
func TestRealisticEmitAllocatesNothing(t *testing.T) {
	s := realisticServer(t, 100)
	for _, meta := range []bool{false, true} {
		w := &watcher{s: s, items: s.items, kind: "Pod", metaOnly: meta, bw: bufio.NewWriterSize(io.Discard, 256<<10)}
		k := int64(0)
		if n := testing.AllocsPerRun(1000, func() { w.change(k); k++ }); n != 0 {
			t.Fatalf("metadata only %v: %v allocations per event", meta, n)
		}
	}
}

// BenchmarkEmitRealistic is BenchmarkEmit's hot path for the realistic pods, whose
// events are their kubelet variants (patched templates):
//
//	go test -run - -bench EmitRealistic ./bench/internal/streamserver/
func BenchmarkEmitRealistic(b *testing.B) {
	s := realisticServer(b, 10000)
	for _, meta := range []bool{false, true} {
		b.Run(fmt.Sprintf("metadata-only=%v", meta), func(b *testing.B) { emitEvents(b, s, meta) })
	}
}

// The profile takes the pods resource, in its own namespaces only; lazily (see
// realistic_lazy_test.go) up to MaxLazyPods and without protobuf.
func TestRealisticOptions(t *testing.T) {
	for _, o := range []Options{{Profile: RealisticPods, Namespaces: 10}, {Profile: "realistic"},
		{Profile: RealisticPods, Lazy: true, ProtobufObjects: "pods.pb"}, {Profile: RealisticPods, Objects: LazyAbove + 1, ProtobufObjects: "pods.pb"},
		{Profile: RealisticPods, Objects: MaxLazyPods + 1}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	s, u := start(t, Options{Profile: RealisticPods, Objects: 20})
	if s.Kind() != "Pod" {
		t.Errorf("kind %s", s.Kind())
	}
	var page listPage
	if err := json.Unmarshal(get(t, nil, u+"/api/v1/configmaps", ""), &page); err != nil || len(page.Items) != 0 {
		t.Errorf("configmaps: %v, %d items", err, len(page.Items))
	}
	ns := s.items[0].ns
	if err := json.Unmarshal(get(t, nil, u+"/api/v1/namespaces/"+ns+"/pods", ""), &page); err != nil || len(page.Items) == 0 {
		t.Fatalf("pods of %s: %v, %d items", ns, err, len(page.Items))
	}
	for _, raw := range page.Items {
		if p := readRealistic(t, raw); p.Metadata.Namespace != ns {
			t.Errorf("listed %s/%s in namespace %s", p.Metadata.Namespace, p.Metadata.Name, ns)
		}
	}
}

// TestRealisticCorpusStats prints the realistic corpus's mean JSON size per pod, whole,
// without managedFields and as PartialObjectMetadata, over -corpus-stats pods:
//
//	go test -run RealisticCorpusStats -v ./bench/internal/streamserver/ -corpus-stats 10000
//
// with seed 1, the stream server's default. bench/clientgo's
// TestRealisticPodsInKubernetesTypes prints the JSON and protobuf sizes over 10,000 pods
// (the main module cannot encode protobuf).
func TestRealisticCorpusStats(t *testing.T) {
	if *corpusStats <= 0 {
		t.Skip("no -corpus-stats N")
	}
	began := time.Now()
	s, err := New(Options{Profile: RealisticPods, Objects: *corpusStats, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	full, meta := s.ObjectBytes()
	bare, err := New(Options{Profile: RealisticPods, Objects: *corpusStats, Seed: 1, NoManagedFields: true})
	if err != nil {
		t.Fatal(err)
	}
	withoutMF, _ := bare.ObjectBytes()
	t.Logf("realistic corpus, %d pods made in %v: %.0f bytes of JSON per pod (%.0f without managedFields), %.0f as PartialObjectMetadata",
		s.Len(), took.Round(time.Millisecond), full, withoutMF, meta)
}
