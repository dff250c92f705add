package streamserver

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// rLayout is where the realistic profile's n pods are, so that pod i (from 0) can be made
// from the seed and i alone, by the eager mode (all of them, at New) and by the lazy mode
// (each as it is served) alike. The Deployments' pods are contiguous, the Deployments in
// the order of their namespaces' names (then as drawn): pod i is the i-th of a lazy list,
// and each namespace's pods are a span. A Deployment's pods go round its pool's nodes,
// shuffled, as the scheduler spreads a ReplicaSet's; each takes the next address of its
// node's range, so pod IPs never repeat. The rest of pod i (times, container IDs,
// restarts) comes from a random stream seeded from the seed and i (draw); its name
// suffix, uid and kube-api-access volume suffix are bijections of i, so that they never
// repeat either and a get can find i from the name.
type rLayout struct {
	c       *rCluster
	n       int
	deploys []*rDeploy // in list order; rDeploy.pos is the index here
	start   []int      // deploys[j]'s pods are start[j] to start[j+1]-1
	place   []rPlace   // by deploys
	// Node k's pods have the addresses from nodeBase+k*block+2 on.
	nodeBase, block uint32
	// The name suffix of pod i is the base-27 digits of (i*nameMul + nameAdd) mod
	// nameSpace (nameInv undoes the multiplication); its volume's, of i*volMul + volAdd.
	nameMul, nameAdd, nameInv, volMul, volAdd uint64
	salt                                      uint64 // seeds the uids and the pods' random streams
}

// rPlace is where a Deployment's pods run: pod q of it (from 0) on node
// nodes[q%len(nodes)], at slot slot[q%len(nodes)] + q/len(nodes) of the node's range.
type rPlace struct {
	nodes []int32 // the pool's nodes, shuffled
	slot  []int32 // the slots the earlier Deployments took on each
}

// newRealisticLayout draws the cluster and where its n pods are.
func newRealisticLayout(g *gen, n int) *rLayout {
	c := realisticCluster(g)
	l := &rLayout{c: c, n: n}

	// Pods per Deployment, by weight: each at least one once there are as many pods.
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

	order := make([]int, len(c.deploys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(c.deploys[a].ns, c.deploys[b].ns) })
	l.start = make([]int, 1, len(order)+1)
	for j, di := range order {
		d := c.deploys[di]
		d.pos = j
		l.deploys = append(l.deploys, d)
		l.start = append(l.start, l.start[j]+counts[di])
	}

	l.salt = g.r.Uint64()
	l.nameMul, l.nameAdd = coprimeTo3(g), g.r.Uint64N(nameSpace)
	l.nameInv = new(big.Int).ModInverse(new(big.Int).SetUint64(l.nameMul), big.NewInt(nameSpace)).Uint64()
	l.volMul, l.volAdd = coprimeTo3(g), g.r.Uint64N(nameSpace)

	var general []int // the nodes of every pool but the system one
	for _, p := range []string{"default-pool", "highmem-pool", "spot-pool"} {
		general = append(general, c.pools[p]...)
	}
	used := make([]int32, len(c.nodes)) // slots taken on each node
	l.place = make([]rPlace, len(l.deploys))
	for j, d := range l.deploys {
		pool := general
		if d.pool != "" {
			pool = c.pools[d.pool]
		}
		count, pl := l.start[j+1]-l.start[j], &l.place[j]
		for k, x := range g.r.Perm(len(pool)) {
			node := pool[x]
			pl.nodes = append(pl.nodes, int32(node))
			pl.slot = append(pl.slot, used[node])
			used[node] += int32(count / len(pool))
			if k < count%len(pool) {
				used[node]++
			}
		}
	}
	// Each node's range holds its pods and the two addresses before them (a /22 up to
	// 1,022 pods a node, as GKE gives), from 10.64.0.0, or from 10.0.0.0 when that would
	// reach 10.128.0.0; nodes are 10.132.x.y.
	l.block = 1024 * ((uint32(slices.Max(used)) + 2 + 1023) / 1024)
	l.nodeBase = 10<<24 | 64<<16
	if end := uint64(64<<16) + uint64(len(c.nodes))*uint64(l.block); end > 128<<16 {
		l.nodeBase = 10 << 24
		if end-64<<16 > 132<<16 {
			panic(fmt.Sprintf("streamserver: %d realistic pods do not fit in the pod address ranges", n))
		}
	}
	return l
}

// coprimeTo3 draws a multiplier of the name bijections: coprime with 27⁵.
func coprimeTo3(g *gen) uint64 {
	m := 1 + g.r.Uint64N(nameSpace-1)
	for ; m%3 == 0; m++ {
	}
	return m
}

// deployOf is the index in list order of pod i's Deployment.
func (l *rLayout) deployOf(i int) int {
	return sort.Search(len(l.deploys), func(j int) bool { return l.start[j+1] > i })
}

// podRand is a pod's random stream, reseeded for each pod.
type podRand struct {
	pcg rand.PCG
	g   gen
}

func newPodRand() *podRand {
	pr := &podRand{}
	pr.g.r = rand.New(&pr.pcg)
	return pr
}

// draw sets p to pod i, its values drawn from pr reseeded from the seed and i (p's
// container slice is reused).
func (l *rLayout) draw(p *podDraw, i int, pr *podRand) {
	d, node, a := l.where(i)
	p.d, p.node = d, node
	p.podIP = fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&255, a>>8&255, a&255)
	var suffix [5]byte
	l.putSuffix(&suffix, i, l.nameMul, l.nameAdd)
	p.name = d.rsName + "-" + string(suffix[:])
	l.putSuffix(&suffix, i, l.volMul, l.volAdd)
	p.vol = "kube-api-access-" + string(suffix[:])
	var u [36]byte
	putUID(&u, i, l.salt)
	p.uid = string(u[:])

	pr.pcg.Seed(mix64(l.salt^uint64(i)), mix64(^l.salt+uint64(i)))
	g := &pr.g
	// Most pods were made by their ReplicaSet's rollout, some later (rescheduled,
	// scaled up).
	p.created = d.rsCreated + int64(g.r.IntN(120))
	if g.r.Float64() < 0.25 {
		p.created = d.rsCreated + g.r.Int64N(max(realisticNow-3600-d.rsCreated, 1))
	}
	p.startTime = p.created + 1
	p.sandboxAt = p.created + 2 + int64(g.r.IntN(4))
	var starts [maxContainers]int64 // in the spec's order
	ready := int64(0)
	for j := range d.containers {
		starts[j] = p.sandboxAt + 1 + int64(g.r.IntN(30)) + int64(j)
		ready = max(ready, starts[j])
	}
	ready += int64(d.readyDelay)
	p.ks.ctrs = p.ks.ctrs[:0]
	for _, ci := range d.statusOrder {
		p.ks.ctrs = append(p.ks.ctrs, ctrState{startedAt: starts[ci], id: g.containerID()})
	}
	if j, term, ok := l.restarting(i, d); ok {
		cs := &p.ks.ctrs[j]
		first := cs.startedAt
		cs.restarts = 1 + g.r.IntN(5)
		cs.startedAt = p.created + 3600 + g.r.Int64N(max(realisticNow-p.created-7200, 1))
		t := terminations[term]
		last := &termState{exitCode: t.code, reason: t.reason, startedAt: first,
			finishedAt: cs.startedAt - 10 - int64(g.r.IntN(290)), id: g.containerID()}
		if cs.restarts > 1 {
			last.startedAt = max(first, cs.startedAt-600-int64(g.r.IntN(86400)))
		}
		cs.last = last
		ready = max(ready, cs.startedAt+int64(d.readyDelay))
	}
	p.ks.readyAt, p.ks.updatedAt = ready, ready
}

// where is pod i's Deployment, its node and its address.
func (l *rLayout) where(i int) (*rDeploy, *rNode, uint32) {
	j := l.deployOf(i)
	pl, q := &l.place[j], i-l.start[j]
	k := q % len(pl.nodes)
	node := int(pl.nodes[k])
	return l.deploys[j], &l.c.nodes[node], l.nodeBase + uint32(node)*l.block + 2 + uint32(int(pl.slot[k])+q/len(pl.nodes))
}

// restarting reports whether pod i of Deployment d has a restarting container (the
// share d.flaky of its pods do), which one (in the kubelet's order) and its last
// termination (in terminations). It is a hash of i, not drawn from the pod's random
// stream, so that the lazy mode knows a pod's size without drawing it (realLazy.size).
func (l *rLayout) restarting(i int, d *rDeploy) (j, term int, ok bool) {
	h := mix64(uint64(i) ^ l.salt ^ 0x2545f4914f6cdd1d)
	if float64(h>>11)/(1<<53) >= d.flaky {
		return 0, 0, false
	}
	h = mix64(h)
	ci := 0 // mostly the application itself
	if h%10 >= 7 {
		ci = int(h / 10 % uint64(len(d.containers)))
	}
	return slices.Index(d.statusOrder, ci), int(h >> 40 % uint64(len(terminations))), true
}

// containerID is 64 random hex digits.
func (g *gen) containerID() string {
	var b [64]byte
	for w := range 4 {
		x := g.r.Uint64()
		for k := range 16 {
			b[16*w+k] = hexDigits[x>>(60-4*k)&15]
		}
	}
	return string(b[:])
}

// putSuffix writes the base-27 digits of (i*mul + add) mod nameSpace: a bijection of i.
func (l *rLayout) putSuffix(b *[5]byte, i int, mul, add uint64) {
	s := (uint64(i)*mul + add) % nameSpace
	for j := len(b) - 1; j >= 0; j-- {
		b[j] = safeChars[s%27]
		s /= 27
	}
}

// byName is the index of the pod named name, if there is one.
func (l *rLayout) byName(name string) (int, bool) {
	if len(name) < 6 || name[len(name)-6] != '-' {
		return 0, false
	}
	s := uint64(0)
	for _, c := range []byte(name[len(name)-5:]) {
		d := strings.IndexByte(safeChars, c)
		if d < 0 {
			return 0, false
		}
		s = s*27 + uint64(d)
	}
	// i = (s - nameAdd) * nameInv mod nameSpace; nameSpace² fits in 64 bits.
	i := (s + nameSpace - l.nameAdd) % nameSpace * l.nameInv % nameSpace
	if i >= uint64(l.n) || l.deploys[l.deployOf(int(i))].rsName != name[:len(name)-6] {
		return 0, false
	}
	return int(i), true
}

// uidOf is pod i's uid.
func (l *rLayout) uidOf(i int) string {
	var u [36]byte
	putUID(&u, i, l.salt)
	return string(u[:])
}
