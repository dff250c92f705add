package streamserver

import (
	"bufio"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/shard"
)

// LazyAbove is the number of pods above which New generates them as it serves them
// (Options.Lazy) rather than all up front: a million pre-encoded pods would take the
// server about 5 GB and ten seconds to make (realistic ones 20 GB and minutes).
const LazyAbove = 200_000

// MaxLazyPods is the most pods the lazy mode serves: their IPs, 10.x.y.z with x, y and z
// from 100 to 255 (three digits each, so that every pod's JSON has one length), run out
// there. The realistic profile's lazy mode has the same limit.
const MaxLazyPods = 156 * 156 * 156

// lazyTemplates is how many pod templates the lazy mode encodes; pod i takes one chosen
// by a hash of i. Each has its own ReplicaSet, node, times and volume name, as eager pods
// do, so that a million pods still spread over the 100 ReplicaSets and 50 nodes; the
// templates weigh about 5.7 KB each (whole and as metadata).
const lazyTemplates = 512

// Widths of the lazy pods' fixed-width holes (the namespace's and the resourceVersion's
// vary).
var holeWidth = [numHoles]int{holeStamp: stampWidth, holeName: 5, holeUID: 36, holePodIP: 14, holeContainerID: 64}

// nameSpace is how many name suffixes there are: 5 of the 27 safe characters.
const nameSpace = 27 * 27 * 27 * 27 * 27

// lazyPods is the population of the lazy mode: Options.Objects pods, pod i (from 0) in
// namespace i mod Options.Namespaces as in the eager mode, listed by namespace name and,
// within a namespace, by i. A pod is a template (lazyTemplates of them, pre-encoded with
// holes) whose holes are filled from i when it is written: its namespace, name suffix,
// uid, IP and container ID, resourceVersion (rvBase+1+i, as eager pod i has) and stamp.
// Nothing else is kept per pod.
type lazyPods struct {
	n        int
	k        int // namespaces, empty ones included
	tmpls    []lazyTemplate
	nss      []lazyNS // sorted by name, empty ones left out
	nsByName map[string]int
	nsByK    map[int]int // a namespace's index in nss by its own
	// The name suffix of pod i is the base-27 digits of (i*nameMul + nameAdd) mod
	// nameSpace, a bijection: names never repeat. nameInv undoes the multiplication.
	nameMul, nameAdd, nameInv uint64
	salt                      uint64 // seeds the uid, container ID and template choice
}

// lazyNS is one namespace of the lazy population.
type lazyNS struct {
	name     string
	bytes    []byte // name, for the writer
	k        int    // its index: it holds pods k, k+K, k+2K … (K namespaces)
	from, to int    // its pods' positions in list order
	hash     uint64 // shard.Hash(name)
}

// lazyTemplate is one pod shape, whole and as PartialObjectMetadata.
type lazyTemplate struct {
	full, meta holeyTemplate
	prefix     string // metadata.name before the suffix: the ReplicaSet's name and "-"
}

// holeyTemplate is a template with any holes, each filled from a table of values. It is
// the lazy mode's: the eager mode's hot path keeps template, whose two holes are unrolled.
type holeyTemplate struct {
	buf   []byte
	at    []int
	kinds []hole
	fixed int // len(buf) plus the widths of the fixed-width holes
}

func newHoleyTemplate(o obj) holeyTemplate {
	e := &encoder{buf: make([]byte, 0, 4096)}
	e.value(o)
	t := holeyTemplate{buf: append([]byte(nil), e.buf...), at: e.at, kinds: e.kinds, fixed: len(e.buf)}
	var seen [numHoles]int
	for _, k := range e.kinds {
		seen[k]++
		t.fixed += holeWidth[k]
	}
	if seen[holeRV] != 1 || seen[holeNS] != 1 || seen[holeStamp] != 1 {
		panic("streamserver: a lazy template needs one resourceVersion, one namespace and one stamp hole")
	}
	return t
}

// size is the template's length written with a namespace and resourceVersion that long.
func (t *holeyTemplate) size(nsLen, rvLen int) int { return t.fixed + nsLen + rvLen }

func (t *holeyTemplate) write(w *bufio.Writer, v *[numHoles][]byte) {
	writeFilled(w, t.buf, t.at, t.kinds, v[:])
}

// writeFilled writes a template, buf, with the value of kind kinds[i] at offset at[i].
func writeFilled(w *bufio.Writer, buf []byte, at []int, kinds []hole, values [][]byte) {
	prev := 0
	for i, off := range at {
		w.Write(buf[prev:off])
		w.Write(values[kinds[i]])
		prev = off
	}
	w.Write(buf[prev:])
}

// appendTo is write for a byte slice (get, tests).
func (t *holeyTemplate) appendTo(b []byte, v *[numHoles][]byte) []byte {
	prev := 0
	for i, at := range t.at {
		b = append(b, t.buf[prev:at]...)
		b = append(b, v[t.kinds[i]]...)
		prev = at
	}
	return append(b, t.buf[prev:]...)
}

func newLazyPods(opts Options) *lazyPods {
	g := &gen{r: rand.New(rand.NewPCG(uint64(opts.Seed), 0x6b696e666f726d65)), opts: opts}
	l := &lazyPods{n: opts.Objects, k: max(opts.Namespaces, 1), nsByName: map[string]int{}, nsByK: map[int]int{}}
	l.salt = g.r.Uint64()
	l.nameAdd = g.r.Uint64N(nameSpace)
	for l.nameMul = 1 + g.r.Uint64N(nameSpace-1); l.nameMul%3 == 0; l.nameMul++ { // coprime with 27⁵
	}
	l.nameInv = new(big.Int).ModInverse(new(big.Int).SetUint64(l.nameMul), big.NewInt(nameSpace)).Uint64()

	rss, nodes := podCluster(g)
	id := podID{name: nil, ns: holeNS, uid: holeUID, podIP: holePodIP,
		containerID: spliced{before: "containerd://", h: holeContainerID}}
	for range lazyTemplates {
		rs, nd := &rss[g.r.IntN(len(rss))], &nodes[g.r.IntN(len(nodes))]
		id.name = spliced{before: rs.name + "-", h: holeName}
		md, rest := podFields(g, 0, id, rs, nd)
		full, partial := wholeAndPartial("Pod", md, rest...)
		l.tmpls = append(l.tmpls, lazyTemplate{full: newHoleyTemplate(full), meta: newHoleyTemplate(partial), prefix: rs.name + "-"})
	}

	for j := range min(l.k, l.n) {
		name := opts.NamespaceOf(j)
		count := l.n / l.k
		if j < l.n%l.k {
			count++
		}
		l.nss = append(l.nss, lazyNS{name: name, bytes: []byte(name), k: j, to: count, hash: shard.Hash(name)})
	}
	slices.SortFunc(l.nss, func(a, b lazyNS) int { return strings.Compare(a.name, b.name) })
	from := 0
	for r := range l.nss {
		ns := &l.nss[r]
		ns.from, ns.to = from, from+ns.to
		from = ns.to
		l.nsByName[ns.name] = r
		l.nsByK[ns.k] = r
	}
	return l
}

// at is the namespace and the index of the pod at position p in list order.
func (l *lazyPods) at(p int) (*lazyNS, int) {
	r, found := slices.BinarySearchFunc(l.nss, p, func(ns lazyNS, p int) int {
		switch {
		case p < ns.from:
			return 1
		case p >= ns.to:
			return -1
		}
		return 0
	})
	if !found {
		panic(fmt.Sprintf("streamserver: position %d of %d pods", p, l.n))
	}
	ns := &l.nss[r]
	return ns, (p-ns.from)*l.k + ns.k
}

// span is the positions of namespace ns's pods ("" for every pod); ok is false if ns has
// none.
func (l *lazyPods) span(ns string) (from, to int, ok bool) {
	if ns == "" {
		return 0, l.n, true
	}
	r, ok := l.nsByName[ns]
	if !ok {
		return 0, 0, false
	}
	return l.nss[r].from, l.nss[r].to, true
}

func (l *lazyPods) template(i int) *lazyTemplate {
	return &l.tmpls[mix64(uint64(i)^l.salt)%uint64(len(l.tmpls))]
}

// podValues is the fill of one pod's holes, reused from pod to pod.
type podValues struct {
	v    [numHoles][]byte
	rv   [20]byte
	name [5]byte
	uid  [36]byte
	ip   [14]byte
	cid  [64]byte
}

// fill sets v to pod i of namespace ns at resourceVersion rv (its own, rvBase+1+i, when
// nil) with the given stamp (zeroStamp when nil).
func (l *lazyPods) fill(v *podValues, ns *lazyNS, i int, rv, stamp []byte) {
	if rv == nil {
		rv = strconv.AppendInt(v.rv[:0], rvBase+1+int64(i), 10)
	}
	if stamp == nil {
		stamp = zeroStamp
	}
	v.v[holeRV], v.v[holeStamp], v.v[holeNS] = rv, stamp, ns.bytes
	v.v[holeName], v.v[holeUID], v.v[holePodIP], v.v[holeContainerID] = v.name[:], v.uid[:], v.ip[:], v.cid[:]

	s := (uint64(i)*l.nameMul + l.nameAdd) % nameSpace
	for j := len(v.name) - 1; j >= 0; j-- {
		v.name[j] = safeChars[s%27]
		s /= 27
	}
	l.putUID(&v.uid, i)
	o := [3]int{i / (156 * 156), i / 156 % 156, i % 156}
	copy(v.ip[:], "10.")
	for j, d := range o {
		b := v.ip[3+4*j:]
		b[0], b[1], b[2] = byte('0'+(100+d)/100), byte('0'+(100+d)/10%10), byte('0'+(100+d)%10)
		if j < 2 {
			b[3] = '.'
		}
	}
	for j := range 4 {
		x := mix64(uint64(i)<<2 | uint64(j) ^ ^l.salt)
		for b := range 16 {
			v.cid[16*j+b] = hexDigits[x>>(60-4*b)&15]
		}
	}
}

// putUID writes pod i's uid.
func (l *lazyPods) putUID(u *[36]byte, i int) { putUID(u, i, l.salt) }

// putUID writes the uid of pod i of a population salted salt, a version-4 UUID whose
// first 64 random bits are a bijection of i: uids never repeat.
func putUID(u *[36]byte, i int, salt uint64) {
	var h [32]byte
	x, y := mix64(uint64(i)^salt), mix64(uint64(i)^salt^0x5bd1e9955bd1e995)
	hi := 0
	for _, p := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 17} {
		h[p] = hexDigits[x>>(60-4*hi)&15]
		hi++
	}
	lo := 0
	for p := 18; p < 32; p++ {
		h[p] = hexDigits[y>>(60-4*lo)&15]
		lo++
	}
	h[12], h[16] = '4', 'a'
	copy(u[0:8], h[0:8])
	u[8] = '-'
	copy(u[9:13], h[8:12])
	u[13] = '-'
	copy(u[14:18], h[12:16])
	u[18] = '-'
	copy(u[19:23], h[16:20])
	u[23] = '-'
	copy(u[24:36], h[20:32])
}

// size is the JSON length of pod i of namespace ns as listed.
func (l *lazyPods) size(ns *lazyNS, i int, metaOnly bool) int {
	t := l.template(i)
	rvLen := digits(rvBase + 1 + int64(i))
	if metaOnly {
		return t.meta.size(len(ns.bytes), rvLen)
	}
	return t.full.size(len(ns.bytes), rvLen)
}

// write writes the pod v was filled with, i.
func (l *lazyPods) write(w *bufio.Writer, v *podValues, i int, metaOnly bool) {
	t := l.template(i)
	if metaOnly {
		t.meta.write(w, &v.v)
	} else {
		t.full.write(w, &v.v)
	}
}

// keeps reports whether filter f selects pod i of namespace ns.
func (l *lazyPods) keeps(f *filter, ns *lazyNS, i int) bool {
	if f == nil {
		return true
	}
	var uidHash uint64
	if f.sel.Field == shard.UID && len(f.sel.Ranges) > 0 {
		var u [36]byte
		l.putUID(&u, i)
		uidHash = shard.Hash(string(u[:]))
	}
	return f.match(ns.name, ns.hash, uidHash)
}

// byName finds pod name of namespace ns ("" for any) by undoing its name suffix.
func (l *lazyPods) byName(ns, name string) (*lazyNS, int, bool) {
	if len(name) < 6 || name[len(name)-6] != '-' {
		return nil, 0, false
	}
	s := uint64(0)
	for _, c := range []byte(name[len(name)-5:]) {
		d := strings.IndexByte(safeChars, c)
		if d < 0 {
			return nil, 0, false
		}
		s = s*27 + uint64(d)
	}
	// i = (s - nameAdd) * nameInv mod nameSpace; nameSpace² fits in 64 bits.
	i := (s + nameSpace - l.nameAdd) % nameSpace * l.nameInv % nameSpace
	if i >= uint64(l.n) || l.template(int(i)).prefix != name[:len(name)-5] {
		return nil, 0, false
	}
	r := l.nsByK[int(i)%l.k]
	if ns != "" && l.nss[r].name != ns {
		return nil, 0, false
	}
	return &l.nss[r], int(i), true
}

// digits is the number of decimal digits of x > 0.
func digits(x int64) int {
	n := 1
	for ; x >= 10; x /= 10 {
		n++
	}
	return n
}
