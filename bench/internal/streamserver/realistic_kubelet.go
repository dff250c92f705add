package streamserver

import (
	"bytes"
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/kinformer/kinformer/shard"
)

// A pod's kubelet-written state, what its watch events change.

// termState is a container's last termination.
type termState struct {
	exitCode              int
	reason                string
	startedAt, finishedAt int64 // seconds after epoch
	id                    string
}

// ctrState is a container's running state.
type ctrState struct {
	restarts  int
	startedAt int64
	id        string     // 64 hex digits, the containerd ID
	last      *termState // nil: it never terminated
}

// kubeletState is what the kubelet writes of a pod and its watch events change: its
// containers' states (in the kubelet's order, by name), when it last became ready (the
// Ready and ContainersReady conditions' lastTransitionTime) and the time of the kubelet's
// managedFields entry. A pod has at most one restarting container (last not nil), whose
// restartCount stays below 7 so that kubeletVariants more restarts keep its width.
type kubeletState struct {
	ctrs               []ctrState
	readyAt, updatedAt int64
}

// variant is the state after the pod's v-th change (v from 1 to kubeletVariants), for the
// pod whose uid hashes to seed (shard.Hash): a pod with a restarting container sees it
// restart v more times, gap seconds apart (a new container ID, the previous one's
// termination as lastState, the pod ready again a few seconds later); any other pod
// turns unready and ready again v times (new condition times). Every value keeps its
// width in JSON and in protobuf, so a variant is its pod's encoding with a few bytes
// replaced. It depends only on the values it changes and seed, so that the server finds
// the same variant from a pod's protobuf message (loadProtobuf) as from its generator.
func (ks *kubeletState) variant(seed uint64, v int) kubeletState {
	out := kubeletState{ctrs: slices.Clone(ks.ctrs), readyAt: ks.readyAt + int64(v)*kubeletGap(seed)}
	gap := kubeletGap(seed)
	for j := range out.ctrs {
		b := &ks.ctrs[j]
		if b.last == nil {
			continue
		}
		start := func(u int) int64 { return b.startedAt + int64(u)*gap }
		id := func(u int) string {
			if u == 0 {
				return b.id
			}
			return variantID(seed, j, u)
		}
		out.ctrs[j] = ctrState{restarts: b.restarts + v, startedAt: start(v), id: id(v),
			last: &termState{exitCode: b.last.exitCode, reason: b.last.reason, startedAt: start(v - 1),
				finishedAt: start(v) - 10 - int64(seed>>24%50), id: id(v - 1)}}
		out.readyAt = start(v) + 3 + int64(seed>>16%20)
	}
	out.updatedAt = out.readyAt
	return out
}

// kubeletGap is the seconds between a pod's changes: 10 to 60 minutes.
func kubeletGap(seed uint64) int64 { return int64(600 + seed%3000) }

// variantID is the ID of container j (in the kubelet's order) after the pod's u-th change.
func variantID(seed uint64, j, u int) string {
	b := make([]byte, 64)
	for w := range 4 {
		x := mix64(seed ^ uint64(j)<<40 ^ uint64(u)<<48 ^ uint64(w)<<56)
		for k := range 16 {
			b[16*w+k] = hexDigits[x>>(60-4*k)&15]
		}
	}
	return string(b)
}

// kubeletVariant is the variant (from 0) that the k-th change after the list carries
// (see EventAt), on n objects: the object's changes take the variants in turn, and an
// object deleted and added back keeps its last one.
func kubeletVariant(k int64, n int) int {
	if k%10 == 0 && k > 0 { // the ADDED after a DELETED
		k--
	}
	return int(k / int64(n) % kubeletVariants)
}

// podDraw is one realistic pod's own values: pod i of the layout (see rLayout.draw),
// drawn from the seed and i alone.
type podDraw struct {
	d                             *rDeploy
	name, uid, vol, podIP         string
	node                          *rNode
	created, startTime, sandboxAt int64 // seconds after epoch
	ks                            kubeletState
}

var terminations = []struct {
	code   int
	reason string
}{{1, "Error"}, {137, "OOMKilled"}, {137, "Error"}, {143, "Error"}, {2, "Error"}, {0, "Completed"}}

// maxContainers is the most containers a realistic pod has.
const maxContainers = 4

// podText is what a realistic pod's JSON writes of its own values (its podDraw in a
// kubelet state): strings, but for its containers' restartCounts (ints) and lastStates
// (objs). A lazy template's podText (holeText) has holes instead: markers in the
// strings, rawHoles for the rest.
type podText struct {
	name, uid, vol, podIP, node, hostIP     string
	created, start, sandbox, ready, updated string    // RFC 3339 times
	ctrs                                    []ctrText // in the kubelet's order
}

// ctrText is a containerStatus's own values.
type ctrText struct {
	started, id    string // the running state's start; the containerd ID's hex
	restarts, last any    // restartCount, lastState
}

// text is the pod's values in kubelet state ks.
func (p *podDraw) text(ks *kubeletState) podText {
	t := podText{name: p.name, uid: p.uid, vol: p.vol, podIP: p.podIP, node: p.node.name, hostIP: p.node.ip,
		created: tsu(p.created), start: tsu(p.startTime), sandbox: tsu(p.sandboxAt), ready: tsu(ks.readyAt),
		updated: tsu(ks.updatedAt), ctrs: make([]ctrText, len(ks.ctrs))}
	for j := range ks.ctrs {
		s := &ks.ctrs[j]
		t.ctrs[j] = ctrText{started: tsu(s.startedAt), id: s.id, restarts: s.restarts, last: lastState(s)}
	}
	return t
}

// holeText is the podText of Deployment d's lazy template: a hole for every value (see
// the rh holes).
func holeText(d *rDeploy) podText {
	if len(d.containers) > maxContainers {
		panic(fmt.Sprintf("streamserver: %s has %d containers", d.name, len(d.containers)))
	}
	t := podText{name: d.rsName + "-" + marker(rhName), uid: marker(rhUID), vol: "kube-api-access-" + marker(rhVol),
		podIP: marker(rhPodIP), node: marker(rhNode), hostIP: marker(rhHostIP), created: marker(rhCreated),
		start: marker(rhStart), sandbox: marker(rhSandbox), ready: marker(rhReady), updated: marker(rhUpdated),
		ctrs: make([]ctrText, len(d.containers))}
	for j := range t.ctrs {
		h := hole(j)
		t.ctrs[j] = ctrText{started: marker(rhStarted + h), id: marker(rhCtrID + h), restarts: rawHole(rhRestarts + h), last: rawHole(rhLast + h)}
	}
	return t
}

// at is the time sec seconds after epoch.
func at(sec int64) time.Time { return epoch.Add(time.Duration(sec) * time.Second) }

// kubeletFields is the fieldsV1 of the kubelet's status Update of a pod of IP podIP.
func kubeletFields(podIP string) obj {
	cond := fset(".", "f:lastProbeTime", "f:lastTransitionTime", "f:status", "f:type")
	return obj{{"f:status", obj{
		{"f:conditions", obj{{`k:{"type":"ContainersReady"}`, cond}, {`k:{"type":"Initialized"}`, cond},
			{`k:{"type":"PodReadyToStartContainers"}`, cond}, {`k:{"type":"Ready"}`, cond}}},
		{"f:containerStatuses", leaf}, {"f:hostIP", leaf}, {"f:hostIPs", leaf}, {"f:phase", leaf}, {"f:podIP", leaf},
		{"f:podIPs", obj{{".", leaf}, {`k:{"ip":"` + podIP + `"}`, fset(".", "f:ip")}}},
		{"f:startTime", leaf}}}}
}

// fields is the realistic pod's metadata and the fields after it (spec, status), in
// kubelet state ks.
func (p *podDraw) fields(o Options, ks *kubeletState) (obj, []field) {
	t := p.text(ks)
	return p.d.podFields(o, &t)
}

// podFields is the metadata and the fields after it (spec, status) of the Deployment's
// pod of values t.
func (d *rDeploy) podFields(o Options, t *podText) (obj, []field) {
	owners := []obj{{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", d.rsName}, {"uid", d.rsUID},
		{"controller", true}, {"blockOwnerDeletion", true}}}
	var managed []obj
	if !o.NoManagedFields {
		managed = []obj{managedEntry("kube-controller-manager", t.created, d.kcmFields, ""), kubeletEntry(t)}
	}
	md := metaFields(t.name, d.rsName+"-", d.ns, t.uid, t.created, d.labels, d.annotations, owners, managed)
	return md, []field{{"spec", d.spec(t.vol, t.node, false)}, {"status", d.podStatus(t)}}
}

// kubeletEntry is the kubelet's managedFields entry of the pod of values t.
func kubeletEntry(t *podText) obj {
	return managedEntry("kubelet", t.updated, kubeletFields(t.podIP), "status")
}

// podStatus is the status of the Deployment's pod of values t.
func (d *rDeploy) podStatus(t *podText) obj {
	cond := func(typ, at string) obj {
		return obj{{"type", typ}, {"status", "True"}, {"lastProbeTime", nil}, {"lastTransitionTime", at}}
	}
	statuses := make([]obj, len(d.containers))
	for j, ci := range d.statusOrder {
		statuses[j] = d.containers[ci].status(d, t.vol, &t.ctrs[j])
	}
	return obj{
		{"phase", "Running"},
		{"conditions", []obj{cond("PodReadyToStartContainers", t.sandbox), cond("Initialized", t.start),
			cond("Ready", t.ready), cond("ContainersReady", t.ready), cond("PodScheduled", t.created)}},
		{"hostIP", t.hostIP},
		{"hostIPs", []obj{{{"ip", t.hostIP}}}},
		{"podIP", t.podIP},
		{"podIPs", []obj{{{"ip", t.podIP}}}},
		{"startTime", t.start},
		{"containerStatuses", statuses},
		{"qosClass", d.qos},
	}
}

// The JSON that comes before an object's metadata, whole and as PartialObjectMetadata.
const (
	podJSONPrefix     = `{"kind":"Pod","apiVersion":"v1","metadata":`
	partialJSONPrefix = `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":`
)

// podEncoder encodes realistic pods into buffers it reuses.
type podEncoder struct{ e encoder }

// bytes is v encoded, valid until the next call.
func (pe *podEncoder) bytes(v any) []byte {
	pe.e.buf, pe.e.at, pe.e.kinds = pe.e.buf[:0], pe.e.at[:0], pe.e.kinds[:0]
	pe.e.value(v)
	return pe.e.buf
}

// template is newTemplate's, encoded in the reused buffer.
func (pe *podEncoder) template(o obj) template {
	b := pe.bytes(o)
	e := &pe.e
	if len(e.kinds) != 2 || e.kinds[0] == e.kinds[1] || max(e.kinds[0], e.kinds[1]) > holeStamp {
		panic("streamserver: an object must have exactly one resourceVersion and one stamp hole")
	}
	return template{buf: bytes.Clone(b), at: [2]int{e.at[0], e.at[1]}, kinds: [2]hole{e.kinds[0], e.kinds[1]}}
}

// piece is where the encoding of a part of the pod is in its template's buf: the
// kubelet's managedFields entry or the status, which variants change.
func (pe *podEncoder) piece(buf []byte, part any) (int, []byte) {
	b := bytes.Clone(pe.bytes(part))
	i := bytes.Index(buf, b)
	if i < 0 || bytes.Contains(buf[i+1:], b) {
		panic("streamserver: a realistic pod's kubelet fields are not found once in its encoding")
	}
	return i, b
}

// encode makes the pod's item: its templates and its kubelet variants, found by
// encoding the parts of the pod that a variant changes (its status and the kubelet's
// managedFields entry) and comparing them with the pod's.
func (p *podDraw) encode(o Options, pe *podEncoder) item {
	md, rest := p.fields(o, &p.ks)
	full, partial := wholeAndPartial("Pod", md, rest...)
	it := item{name: p.name, ns: p.d.ns, nsHash: p.d.nsHash, uidHash: shard.Hash(p.uid),
		full: pe.template(full), meta: pe.template(partial)}
	if !bytes.HasPrefix(it.full.buf, []byte(podJSONPrefix)) || !bytes.HasPrefix(it.meta.buf, []byte(partialJSONPrefix)) {
		panic("streamserver: a pod's JSON does not start as expected")
	}
	type part struct {
		at   int
		base []byte
		of   func(ks *kubeletState) any
	}
	statusAt, statusBase := pe.piece(it.full.buf, rest[1].v)
	parts := []part{{statusAt, statusBase, func(ks *kubeletState) any { t := p.text(ks); return p.d.podStatus(&t) }}}
	if !o.NoManagedFields {
		t := p.text(&p.ks)
		entryAt, entryBase := pe.piece(it.full.buf, kubeletEntry(&t))
		parts = append(parts, part{entryAt, entryBase, func(ks *kubeletState) any { t := p.text(ks); return kubeletEntry(&t) }})
	}
	metaFrom, metaTo := len(podJSONPrefix), len(podJSONPrefix)+len(it.meta.buf)-len(partialJSONPrefix)-1
	kv := &podVariants{}
	for v := range kubeletVariants {
		ks := p.ks.variant(it.uidHash, v+1)
		type change struct {
			s patchSpan
			b []byte
		}
		var changes []change
		for _, pt := range parts {
			b := pe.bytes(pt.of(&ks))
			if len(b) != len(pt.base) {
				panic(fmt.Sprintf("streamserver: pod %s's kubelet variant %d changes a part's length", p.name, v))
			}
			for _, s := range diffSpans(pt.base, b, [2]int{-1, -1}) {
				changes = append(changes, change{patchSpan{s.at + uint32(pt.at), s.n}, bytes.Clone(b[s.at : s.at+s.n])})
			}
		}
		slices.SortFunc(changes, func(a, b change) int { return cmp.Compare(a.s.at, b.s.at) })
		spans := make([]patchSpan, len(changes))
		var data []byte
		for i, c := range changes {
			spans[i] = c.s
			data = append(data, c.b...)
		}
		kv.full.set(v, spans, it.full.buf, data, 0)
		var inMeta []patchSpan
		for _, s := range spans {
			if int(s.at) >= metaFrom && int(s.at+s.n) <= metaTo {
				inMeta = append(inMeta, s)
			}
		}
		kv.meta.set(v, inMeta, it.full.buf, data, len(partialJSONPrefix)-len(podJSONPrefix))
	}
	it.kubelet = kv
	return it
}

// genRealisticPods makes n pods of the realistic profile (see RealisticPods): pod i of
// the layout drawn and encoded in parallel, each from the seed and i alone.
func genRealisticPods(g *gen, n int) []item {
	l := newRealisticLayout(g, n)
	items := make([]item, n)
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			pe := &podEncoder{e: encoder{buf: make([]byte, 0, 64<<10)}}
			pr := newPodRand()
			var p podDraw
			for i := w; i < n; i += workers {
				l.draw(&p, i, pr)
				items[i] = p.encode(g.opts, pe)
			}
		})
	}
	wg.Wait()
	return items
}
