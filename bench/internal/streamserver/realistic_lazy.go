package streamserver

import (
	"bufio"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kinformer/kinformer/shard"
)

// The lazy mode of the realistic profile: pod i is made as it is written, from the seed
// and i (see rLayout), into a template of its Deployment whose holes are every value of
// the pod's own (podText): a pod costs drawing its values and copying its template, and
// the server holds a template per Deployment (a few MB) whatever the number of pods.

// The holes of a realistic lazy template, after the uniform ones (encode.go): each of
// the pod's values in podText.
const (
	rhName    hole = numHoles + iota // metadata.name's 5-character suffix
	rhUID                            // metadata.uid
	rhVol                            // the kube-api-access volume's 5-character suffix
	rhPodIP                          // status.podIP, podIPs and the kubelet's managedFields key
	rhNode                           // spec.nodeName
	rhHostIP                         // status.hostIP and hostIPs
	rhCreated                        // creationTimestamp, the controller manager's time, PodScheduled
	rhStart                          // startTime, Initialized
	rhSandbox                        // PodReadyToStartContainers
	rhReady                          // Ready and ContainersReady
	rhUpdated                        // the kubelet's managedFields time
	// Then, for container j in the kubelet's order (from 0): its running state's start,
	// its containerd ID's hex, its restartCount and its lastState, at rhStarted+j ….
	rhStarted
	rhCtrID    = rhStarted + maxContainers
	rhRestarts = rhCtrID + maxContainers
	rhLast     = rhRestarts + maxContainers
	rhEnd      = rhLast + maxContainers
)

// rTemplate is a realistic lazy template: bytes around any number of holes.
type rTemplate struct {
	buf   []byte
	at    []int
	kinds []hole
	fixed int          // len(buf) and the widths (rWidth) of its holes of one width
	count [rhEnd]uint8 // its holes of each kind
}

// rWidth is the width of each hole that has one (0: it varies from pod to pod).
var rWidth = func() (w [rhEnd]int) {
	const timeWidth = len("2025-03-01T08:00:00Z")
	w[holeStamp], w[rhName], w[rhUID], w[rhVol] = stampWidth, 5, 36, 5
	for _, h := range []hole{rhCreated, rhStart, rhSandbox, rhReady, rhUpdated} {
		w[h] = timeWidth
	}
	for j := range hole(maxContainers) {
		w[rhStarted+j], w[rhCtrID+j], w[rhRestarts+j] = timeWidth, 64, 1 // restartCount stays below 10
	}
	return w
}()

// rValues are the bytes of every hole of one pod.
type rValues [rhEnd][]byte

func newRTemplate(o obj) rTemplate {
	e := &encoder{buf: make([]byte, 0, 32<<10)}
	e.value(o)
	t := rTemplate{buf: slices.Clone(e.buf), at: e.at, kinds: e.kinds, fixed: len(e.buf)}
	for _, k := range t.kinds {
		t.count[k]++
		t.fixed += rWidth[k]
	}
	if t.count[holeRV] != 1 || t.count[holeStamp] != 1 || t.count[rhName] != 1 {
		panic("streamserver: a realistic lazy template needs one resourceVersion, one stamp and one name hole")
	}
	return t
}

// size is the template's length filled with v.
func (t *rTemplate) size(v *rValues) int {
	n := len(t.buf)
	for _, k := range t.kinds {
		n += len(v[k])
	}
	return n
}

func (t *rTemplate) write(w *bufio.Writer, v *rValues) { writeFilled(w, t.buf, t.at, t.kinds, v[:]) }

// appendTo is write for a byte slice (get, tests).
func (t *rTemplate) appendTo(b []byte, v *rValues) []byte {
	prev := 0
	for i, at := range t.at {
		b = append(b, t.buf[prev:at]...)
		b = append(b, v[t.kinds[i]]...)
		prev = at
	}
	return append(b, t.buf[prev:]...)
}

// realLazy is the realistic profile's lazy population: its layout, each Deployment's
// templates (by rDeploy.pos), and its namespaces.
type realLazy struct {
	l          *rLayout
	full, meta []rTemplate
	termLen    []int    // the length of a lastState of each of terminations
	nss        []realNS // the namespaces with pods, by name: list order
	nsByName   map[string]int
}

// realNS is the span of one namespace's pods.
type realNS struct {
	name     string
	from, to int
}

func newRealLazy(opts Options) *realLazy {
	g := newGen(opts)
	rl := &realLazy{l: newRealisticLayout(g, opts.Objects), nsByName: map[string]int{}}
	for _, t := range terminations {
		e := &encoder{}
		e.value(lastState(&ctrState{last: &termState{exitCode: t.code, reason: t.reason, id: strings.Repeat("0", 64)}}))
		rl.termLen = append(rl.termLen, len(e.buf))
	}
	for j, d := range rl.l.deploys {
		t := holeText(d)
		md, rest := d.podFields(opts, &t)
		full, partial := wholeAndPartial("Pod", md, rest...)
		rl.full, rl.meta = append(rl.full, newRTemplate(full)), append(rl.meta, newRTemplate(partial))
		from, to := rl.l.start[j], rl.l.start[j+1]
		if from == to {
			continue
		}
		if k := len(rl.nss) - 1; k >= 0 && rl.nss[k].name == d.ns {
			rl.nss[k].to = to
			continue
		}
		rl.nsByName[d.ns] = len(rl.nss)
		rl.nss = append(rl.nss, realNS{name: d.ns, from: from, to: to})
	}
	return rl
}

// span is the positions (indexes) of namespace ns's pods ("" for every pod); ok is false
// if ns has none.
func (rl *realLazy) span(ns string) (from, to int, ok bool) {
	if ns == "" {
		return 0, rl.l.n, true
	}
	r, ok := rl.nsByName[ns]
	if !ok {
		return 0, 0, false
	}
	return rl.nss[r].from, rl.nss[r].to, true
}

// keeps reports whether filter f selects pod i.
func (rl *realLazy) keeps(f *filter, i int) bool {
	if f == nil {
		return true
	}
	d := rl.l.deploys[rl.l.deployOf(i)]
	var uidHash uint64
	if f.sel.Field == shard.UID && len(f.sel.Ranges) > 0 {
		uidHash = shard.Hash(rl.l.uidOf(i))
	}
	return f.match(d.ns, d.nsHash, uidHash)
}

// size is the JSON length of pod i as listed, whole or as metadata, found without
// drawing it: its template's fixed length and the lengths of its values that vary (its
// resourceVersion, address, node and last termination).
func (rl *realLazy) size(i int, metaOnly bool) int {
	l := rl.l
	d, node, a := l.where(i)
	t := rl.template(d.pos, metaOnly)
	ipLen := 3
	for k := 0; k < 32; k += 8 {
		ipLen += digits(int64(max(a>>k&255, 1)))
	}
	n := t.fixed + int(t.count[holeRV])*digits(rvBase+1+int64(i)) + int(t.count[rhPodIP])*ipLen +
		int(t.count[rhNode])*len(node.name) + int(t.count[rhHostIP])*len(node.ip)
	rj, term, restarts := l.restarting(i, d)
	for j := range len(d.containers) {
		last := len("{}")
		if restarts && j == rj {
			last = rl.termLen[term]
		}
		n += int(t.count[rhLast+hole(j)]) * last
	}
	return n
}

// rFill is the fill of one pod's holes, its buffers reused from pod to pod: one per list
// or watch being written.
type rFill struct {
	v   rValues
	buf []byte
	off [rhEnd][2]int // where each value is in buf
	set []hole        // the values in buf
	rv  [20]byte
	p   podDraw
	pr  *podRand
	e   encoder // for lastStates
}

func newRFill() *rFill {
	return &rFill{buf: make([]byte, 0, 4096), set: make([]hole, 0, rhEnd), pr: newPodRand(), e: encoder{buf: make([]byte, 0, 1024)}}
}

// fill sets f to pod i after the k-th change after the list, in the kubelet variant that
// change carries (k < 0: as listed), at resourceVersion rv (its own, rvBase+1+i, when nil)
// with stamp (zeroStamp when nil). It returns the pod's Deployment's position.
func (rl *realLazy) fill(f *rFill, i int, k int64, rv, stamp []byte) int {
	l := rl.l
	l.draw(&f.p, i, f.pr)
	p := &f.p
	ks := &p.ks
	if k >= 0 {
		vs := ks.variant(shard.Hash(p.uid), kubeletVariant(k, l.n)+1)
		ks = &vs
	}
	if rv == nil {
		rv = strconv.AppendInt(f.rv[:0], rvBase+1+int64(i), 10)
	}
	if stamp == nil {
		stamp = zeroStamp
	}
	f.buf, f.set = f.buf[:0], f.set[:0]
	n := 0
	put := func(h hole) { // the bytes appended since n are h's
		f.off[h] = [2]int{n, len(f.buf)}
		f.set = append(f.set, h)
		n = len(f.buf)
	}
	f.buf = append(f.buf, p.name[len(p.name)-5:]...)
	put(rhName)
	f.buf = append(f.buf, p.uid...)
	put(rhUID)
	f.buf = append(f.buf, p.vol[len(p.vol)-5:]...)
	put(rhVol)
	f.buf = append(f.buf, p.podIP...)
	put(rhPodIP)
	f.buf = append(f.buf, p.node.name...)
	put(rhNode)
	f.buf = append(f.buf, p.node.ip...)
	put(rhHostIP)
	for _, t := range [...]struct {
		h   hole
		sec int64
	}{{rhCreated, p.created}, {rhStart, p.startTime}, {rhSandbox, p.sandboxAt}, {rhReady, ks.readyAt}, {rhUpdated, ks.updatedAt}} {
		f.buf = at(t.sec).AppendFormat(f.buf, time.RFC3339)
		put(t.h)
	}
	for j := range ks.ctrs {
		s, h := &ks.ctrs[j], hole(j)
		f.buf = at(s.startedAt).AppendFormat(f.buf, time.RFC3339)
		put(rhStarted + h)
		f.buf = append(f.buf, s.id...)
		put(rhCtrID + h)
		f.buf = strconv.AppendInt(f.buf, int64(s.restarts), 10)
		put(rhRestarts + h)
		if s.last == nil {
			f.buf = append(f.buf, "{}"...)
		} else {
			f.e.buf, f.e.at, f.e.kinds = f.e.buf[:0], f.e.at[:0], f.e.kinds[:0]
			f.e.value(lastState(s))
			f.buf = append(f.buf, f.e.buf...)
		}
		put(rhLast + h)
	}
	for _, h := range f.set { // buf has its final backing array now
		f.v[h] = f.buf[f.off[h][0]:f.off[h][1]]
	}
	f.v[holeRV], f.v[holeStamp] = rv, stamp
	return p.d.pos
}

// template is the template of Deployment pos, whole or as metadata.
func (rl *realLazy) template(pos int, metaOnly bool) *rTemplate {
	if metaOnly {
		return &rl.meta[pos]
	}
	return &rl.full[pos]
}

// realSpan is the realistic lazy pods from to to-1 (indexes and positions both), made
// as they are written.
type realSpan struct {
	rl       *realLazy
	from, to int
	f        *rFill
}

func (s *realSpan) len() int                    { return s.to - s.from }
func (s *realSpan) keeps(f *filter, j int) bool { return s.rl.keeps(f, s.from+j) }

func (s *realSpan) size(j int, metaOnly bool) int { return s.rl.size(s.from+j, metaOnly) }

func (s *realSpan) write(w *bufio.Writer, j int, metaOnly bool) {
	pos := s.rl.fill(s.f, s.from+j, -1, nil, nil)
	s.rl.template(pos, metaOnly).write(w, &s.f.v)
}

// emit writes the event of pod i, the k-th change after the list at resourceVersion rv
// (k < 0: an initial event, at its own), unless the watch's filter leaves it out.
func (rl *realLazy) emit(w *watcher, typ, i int, k int64, rv []byte) {
	if w.filter != nil && !rl.keeps(w.filter, i) {
		return
	}
	if w.rfill == nil {
		w.rfill = newRFill()
	}
	putStamp(&w.stamp, time.Now().UnixNano())
	pos := rl.fill(w.rfill, i, k, rv, w.stamp[:])
	w.bw.WriteString(eventPrefix[typ])
	rl.template(pos, w.metaOnly).write(w.bw, &w.rfill.v)
	w.bw.WriteString(eventSuffix)
	w.events++
}

// serveRealLazy is serveLazy for the realistic lazy pods.
func (s *Server) serveRealLazy(w http.ResponseWriter, r *http.Request, kind, resource, ns, name string) {
	rl := s.rlazy
	from, to, ok := rl.span(ns)
	if !ok || resource != "pods" {
		from, to = 0, 0
	}
	metaOnly := strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata")
	if name != "" {
		i, found := rl.l.byName(name)
		if !found || i < from || i >= to {
			writeStatus(w, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", resource, name))
			return
		}
		f := newRFill()
		pos := rl.fill(f, i, -1, nil, nil)
		b := rl.template(pos, metaOnly).appendTo(nil, &f.v)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
		return
	}
	q := r.URL.Query()
	sel, err := s.shardSelector(q.Get("shardSelector"))
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	if q.Get("watch") == "1" || q.Get("watch") == "true" {
		wt := &watcher{kind: kind, metaOnly: metaOnly}
		if from < to {
			wt.rlazy, wt.n = rl, rl.l.n
		}
		if to-from < rl.l.n || !sel.IsZero() {
			wt.filter = &filter{sel: sel}
			if to-from < rl.l.n {
				wt.filter.ns, wt.filter.oneNS = ns, true
			}
		}
		s.serveWatch(w, r, wt)
		return
	}
	s.serveList(w, r, kind, &realSpan{rl: rl, from: from, to: to, f: newRFill()}, sel, metaOnly, false) // no protobuf: New refuses it
}

// objectBytes is Server.ObjectBytes of the realistic lazy pods: the mean over every pod.
func (rl *realLazy) objectBytes() (full, metadata float64) {
	n := rl.l.n
	if n == 0 {
		return 0, 0
	}
	var f, m int
	for i := range n {
		f += rl.size(i, false)
		m += rl.size(i, true)
	}
	return float64(f) / float64(n), float64(m) / float64(n)
}
