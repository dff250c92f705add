package streamserver

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
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

// podDraw is one realistic pod's own values, drawn in order from the seed, so that the
// pods can then be built and encoded in parallel.
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

// drawPods spreads n pods over the Deployments by their weights (each at least one pod
// once there are as many pods as Deployments) and draws each pod's values.
func (c *rCluster) drawPods(g *gen, n int) []podDraw {
	counts := make([]int, len(c.deploys))
	total := 0.0
	for _, d := range c.deploys {
		total += d.weight
	}
	if n < len(c.deploys) {
		for range n {
			x := g.r.Float64() * total
			i := 0
			for ; i < len(c.deploys)-1 && x >= c.deploys[i].weight; i++ {
				x -= c.deploys[i].weight
			}
			counts[i]++
		}
	} else {
		rest, given := n-len(c.deploys), 0
		fracs := make([]int, len(c.deploys))
		share := make([]float64, len(c.deploys))
		for i, d := range c.deploys {
			q := float64(rest) * d.weight / total
			counts[i] = 1 + int(q)
			given += int(q)
			share[i], fracs[i] = q-math.Floor(q), i
		}
		slices.SortStableFunc(fracs, func(a, b int) int { return cmp.Compare(share[b], share[a]) })
		for _, i := range fracs[:rest-given] {
			counts[i]++
		}
	}
	order := make([]int, 0, n)
	for i, k := range counts {
		for range k {
			order = append(order, i)
		}
	}
	g.r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })

	var general []int // the nodes of every pool but the system one
	for _, p := range []string{"default-pool", "highmem-pool", "spot-pool"} {
		general = append(general, c.pools[p]...)
	}
	seen := map[string]bool{}
	pods := make([]podDraw, n)
	for i, di := range order {
		d := c.deploys[di]
		p := &pods[i]
		p.d = d
		for p.name == "" || seen[p.name] {
			p.name = d.rsName + "-" + g.suffix(5)
		}
		seen[p.name] = true
		p.uid = g.uid()
		p.vol = "kube-api-access-" + g.suffix(5)
		nodes := general
		if d.pool != "" {
			nodes = c.pools[d.pool]
		}
		p.node = &c.nodes[nodes[g.r.IntN(len(nodes))]]
		a := p.node.podBase + 2 + uint32(p.node.pods%1020)
		p.node.pods++
		p.podIP = fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&255, a>>8&255, a&255)

		// Most pods were made by their ReplicaSet's rollout, some later (rescheduled,
		// scaled up).
		p.created = d.rsCreated + int64(g.r.IntN(120))
		if g.r.Float64() < 0.25 {
			p.created = d.rsCreated + g.r.Int64N(max(realisticNow-3600-d.rsCreated, 1))
		}
		p.startTime = p.created + 1
		p.sandboxAt = p.created + 2 + int64(g.r.IntN(4))
		starts := make([]int64, len(d.containers)) // in the spec's order
		ready := int64(0)
		for j := range starts {
			starts[j] = p.sandboxAt + 1 + int64(g.r.IntN(30)) + int64(j)
			ready = max(ready, starts[j])
		}
		ready += int64(d.readyDelay)
		p.ks.ctrs = make([]ctrState, len(d.containers))
		for j, ci := range d.statusOrder {
			p.ks.ctrs[j] = ctrState{startedAt: starts[ci], id: g.hex(64)}
		}
		if g.r.Float64() < d.flaky {
			ci := 0 // mostly the application itself
			if g.r.IntN(10) >= 7 {
				ci = g.r.IntN(len(d.containers))
			}
			cs := &p.ks.ctrs[slices.Index(d.statusOrder, ci)]
			first := cs.startedAt
			cs.restarts = 1 + g.r.IntN(5)
			cs.startedAt = p.created + 3600 + g.r.Int64N(max(realisticNow-p.created-7200, 1))
			t := terminations[g.r.IntN(len(terminations))]
			last := &termState{exitCode: t.code, reason: t.reason, startedAt: first,
				finishedAt: cs.startedAt - 10 - int64(g.r.IntN(290)), id: g.hex(64)}
			if cs.restarts > 1 {
				last.startedAt = max(first, cs.startedAt-600-int64(g.r.IntN(86400)))
			}
			cs.last = last
			ready = max(ready, cs.startedAt+int64(d.readyDelay))
		}
		p.ks.readyAt, p.ks.updatedAt = ready, ready
	}
	return pods
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
	d := p.d
	owners := []obj{{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", d.rsName}, {"uid", d.rsUID},
		{"controller", true}, {"blockOwnerDeletion", true}}}
	var managed []obj
	if !o.NoManagedFields {
		managed = []obj{managedEntry("kube-controller-manager", at(p.created), d.kcmFields, ""), p.kubeletEntry(ks)}
	}
	md := metaFields(p.name, d.rsName+"-", d.ns, p.uid, at(p.created), d.labels, d.annotations, owners, managed)
	return md, []field{{"spec", d.spec(p.vol, p.node.name, false)}, {"status", p.status(ks)}}
}

// kubeletEntry is the kubelet's managedFields entry in state ks.
func (p *podDraw) kubeletEntry(ks *kubeletState) obj {
	return managedEntry("kubelet", at(ks.updatedAt), kubeletFields(p.podIP), "status")
}

// status is the pod's status in kubelet state ks.
func (p *podDraw) status(ks *kubeletState) obj {
	d := p.d
	cond := func(t string, sec int64) obj {
		return obj{{"type", t}, {"status", "True"}, {"lastProbeTime", nil}, {"lastTransitionTime", tsu(sec)}}
	}
	statuses := make([]obj, len(d.containers))
	for j, ci := range d.statusOrder {
		statuses[j] = d.containers[ci].status(d, p.vol, &ks.ctrs[j])
	}
	return obj{
		{"phase", "Running"},
		{"conditions", []obj{cond("PodReadyToStartContainers", p.sandboxAt), cond("Initialized", p.startTime),
			cond("Ready", ks.readyAt), cond("ContainersReady", ks.readyAt), cond("PodScheduled", p.created)}},
		{"hostIP", p.node.ip},
		{"hostIPs", []obj{{{"ip", p.node.ip}}}},
		{"podIP", p.podIP},
		{"podIPs", []obj{{{"ip", p.podIP}}}},
		{"startTime", tsu(p.startTime)},
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
	parts := []part{{statusAt, statusBase, func(ks *kubeletState) any { return p.status(ks) }}}
	if !o.NoManagedFields {
		entryAt, entryBase := pe.piece(it.full.buf, p.kubeletEntry(&p.ks))
		parts = append(parts, part{entryAt, entryBase, func(ks *kubeletState) any { return p.kubeletEntry(ks) }})
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

// genRealisticPods makes n pods of the realistic profile (see RealisticPods): drawn in
// order from the seed, then built and encoded in parallel.
func genRealisticPods(g *gen, n int) []item {
	c := realisticCluster(g)
	pods := c.drawPods(g, n)
	items := make([]item, n)
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			pe := &podEncoder{e: encoder{buf: make([]byte, 0, 64<<10)}}
			for i := w; i < n; i += workers {
				items[i] = pods[i].encode(g.opts, pe)
			}
		})
	}
	wg.Wait()
	return items
}
