package streamserver

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinformer/kinformer/selfsigned"
	"github.com/kinformer/kinformer/shard"
)

// Options configure a Server. The zero value serves 10,000 pods in namespace "bench".
type Options struct {
	// Profile is "pods" (default), "realistic-pods" (RealisticPods: pods too, as a
	// multi-tenant cluster's, in namespaces of their own), "secrets" or "configmaps".
	Profile string
	// Objects is how many objects to serve (default: 10,000 pods or configmaps, 400 secrets).
	Objects int
	// Namespace holds every object (default "bench"), unless Namespaces says otherwise.
	Namespace string
	// Namespaces, above 1, spreads the objects evenly over that many namespaces named
	// after Namespace (see NamespaceOf), for sharding by namespace. A list or watch of
	// one namespace gets its objects; a watch gets them out of the one sequence of
	// changes of every object (see EventAt), as would a watch of all namespaces with a
	// field selector: changes of other namespaces are skipped, not replaced.
	Namespaces int
	// IgnoreShardSelector makes the server ignore the shardSelector parameter, malformed
	// or not, as kube-apiserver 1.36 does without the ShardedListAndWatch feature gate
	// (its default): every object is sent and no list carries metadata.shardInfo. By
	// default the server honours it as the gate does (see ServeHTTP).
	IgnoreShardSelector bool
	// WatchEvents is how many events each watch connection gets before it only sends a
	// BOOKMARK a second (0 = unlimited, -1 = none: what a sync benchmark wants, so that
	// nothing churns the cache while it is weighed).
	WatchEvents int
	// Rate is the events per second of each watch (0 = full speed).
	Rate float64
	// PageLimitMax, if positive, caps a list page below the client's limit (the API lets
	// the server return fewer items than asked). 0 honours the client's limit.
	PageLimitMax int
	// Seed makes the generated objects (same seed, same bytes).
	Seed int64
	// Lazy generates the pods as they are served rather than all at New (see lazy.go):
	// New then takes milliseconds and a few MB for any number of pods, up to MaxLazyPods,
	// and writing a pod costs filling its holes (namespace, name suffix, uid, IP,
	// container ID) besides the copies. It is set by default above LazyAbove pods, serves
	// the pods and realistic-pods profiles only, and does not go with ProtobufObjects.
	// Lazy pods are listed by namespace, then in the order they were generated (not by
	// name). The pods profile's have the eager pods' shape and size but come from
	// lazyTemplates templates, so that their times, ReplicaSet and node repeat every few
	// hundred pods; the realistic profile's are the eager mode's pods, each made from the
	// seed and its index (realistic_lazy.go), and their watch events carry the same
	// kubelet variants.
	Lazy bool
	// TLS serves HTTPS (HTTP/2 or HTTP/1.1) with a self-signed certificate made at New;
	// CACertPEM returns it for clients to trust.
	TLS bool
	// DisableHTTP2 makes TLS connections HTTP/1.1 only. By default HTTPS offers HTTP/2 as
	// the apiserver does (and client-go takes it), which costs the server about twice the
	// CPU per event of HTTP/1.1 and caps one watch at roughly 130,000 4 KB events/s.
	DisableHTTP2 bool
	// NoManagedFields leaves metadata.managedFields out of the objects.
	NoManagedFields bool
	// SecretSize is the JSON size of each secret (default 1 MiB).
	SecretSize int
	// FlushEvery is how many events a full-speed watch writes between flushes (default
	// 64); the 256 KiB write buffer also goes out whenever it fills.
	FlushEvery int
	// ProtobufObjects, if set, is a file of the objects' protobuf encodings, made by
	// bench/clientgo/cmd/pbprep with the same options (see protofile.go). Lists and
	// watches are then served in protobuf to the clients that ask for it first in their
	// Accept header, as client-go does with ContentType application/vnd.kubernetes.protobuf
	// (see servesProtobuf); JSON is served as without it. New fails if the file does not
	// hold exactly the server's objects, and in the lazy mode.
	ProtobufObjects string
	// Logf, if set, receives a line per connection error and per finished watch.
	Logf func(format string, args ...any)
}

func (o *Options) defaults() error {
	if o.Profile == "" {
		o.Profile = "pods"
	}
	if _, ok := kinds[resourceOf(o.Profile)]; !ok {
		return fmt.Errorf("streamserver: unknown profile %q (pods, %s, secrets or configmaps)", o.Profile, RealisticPods)
	}
	if o.Profile == RealisticPods && o.Namespaces > 1 {
		return fmt.Errorf("streamserver: the %s profile has its own namespaces: no -namespaces", RealisticPods)
	}
	if o.Objects == 0 {
		o.Objects = 10000
		if o.Profile == "secrets" {
			o.Objects = 400
		}
	}
	if o.Objects < 0 || o.Namespaces < 0 || o.WatchEvents < -1 || o.Rate < 0 || o.PageLimitMax < 0 || o.SecretSize < 0 || o.FlushEvery < 0 {
		return errors.New("streamserver: negative option")
	}
	if o.Namespace == "" {
		o.Namespace = "bench"
	}
	if resourceOf(o.Profile) == "pods" && o.Objects > LazyAbove {
		o.Lazy = true
	}
	if o.Lazy && resourceOf(o.Profile) != "pods" {
		return fmt.Errorf("streamserver: the lazy mode serves pods only (pods, %s), not %s", RealisticPods, o.Profile)
	}
	if o.Lazy && o.Objects > MaxLazyPods {
		return fmt.Errorf("streamserver: %d pods: the lazy mode serves at most %d", o.Objects, MaxLazyPods)
	}
	if o.Lazy && o.ProtobufObjects != "" {
		return fmt.Errorf("streamserver: %d pods in the lazy mode (-lazy, the default above %d pods) cannot be served in protobuf (-protobuf-objects): they are generated as served, not read from a file", o.Objects, LazyAbove)
	}
	if o.SecretSize == 0 {
		o.SecretSize = 1 << 20
	}
	if o.FlushEvery == 0 {
		o.FlushEvery = 64
	}
	return nil
}

// Stats are the server's counters since New.
type Stats struct {
	Events  int64 // watch events written, bookmarks included
	Bytes   int64 // bytes of list and watch bodies written
	Lists   int64 // list requests served
	Watches int64 // watch requests served
}

// Server serves one profile's pre-encoded objects. Make it with New.
type Server struct {
	opts   Options
	kind   string
	items  []item
	lazy   *lazyPods // the lazy mode's pods, instead of items
	rlazy  *realLazy // the realistic profile's lazy pods, instead of items
	byName map[string]int
	byNS   map[string][2]int // each namespace's objects: items[from:to]
	r0     int64             // the list resourceVersion: every object's creation, no change since

	// pbTypeMeta and pbListTypeMeta are the typeMeta field (1) of the runtime.Unknown
	// wrapping an object and a list in protobuf; nil without Options.ProtobufObjects.
	pbTypeMeta, pbListTypeMeta []byte

	cert  tls.Certificate
	caPEM []byte

	events, bytes, lists, watches atomic.Int64

	mu     sync.Mutex
	srv    *http.Server
	ln     net.Listener
	url    string
	closed bool
}

// New generates and encodes the objects of opts.Profile. It takes about a second per
// 100,000 pods or per 400 MB of secrets (15 s per 100,000 realistic pods), and
// milliseconds in the lazy mode.
func New(opts Options) (*Server, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, kind: kinds[resourceOf(opts.Profile)], byName: map[string]int{}, byNS: map[string][2]int{}}
	switch {
	case opts.Lazy && opts.Profile == RealisticPods:
		s.rlazy = newRealLazy(opts)
		s.r0 = rvBase + int64(s.rlazy.l.n)
	case opts.Lazy:
		s.lazy = newLazyPods(opts)
		s.r0 = rvBase + int64(s.lazy.n)
	default:
		s.items = generate(opts)
		s.r0 = rvBase + int64(len(s.items))
	}
	for i, it := range s.items {
		s.byName[it.name] = i
		r, ok := s.byNS[it.ns] // items are sorted by namespace: each one's are contiguous
		if !ok {
			r[0] = i
		}
		r[1] = i + 1
		s.byNS[it.ns] = r
	}
	if opts.ProtobufObjects != "" {
		if err := s.loadProtobuf(opts.ProtobufObjects); err != nil {
			return nil, err
		}
	}
	if opts.TLS {
		var err error
		if s.cert, s.caPEM, err = selfsigned.New("kinformer-streamserver"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ListResourceVersion is the resourceVersion of every list (R0); watch event k (from 0)
// has resourceVersion R0+1+k.
func (s *Server) ListResourceVersion() int64 { return s.r0 }

// Len is the number of objects served.
func (s *Server) Len() int {
	switch {
	case s.lazy != nil:
		return s.lazy.n
	case s.rlazy != nil:
		return s.rlazy.l.n
	}
	return len(s.items)
}

// Lazy reports whether the server generates its objects as it serves them.
func (s *Server) Lazy() bool { return s.lazy != nil || s.rlazy != nil }

// Kind is the kind of the objects served: "Pod", "Secret" or "ConfigMap".
func (s *Server) Kind() string { return s.kind }

// ObjectJSON is the i-th object in list order (from 0), as a list carries it: its own
// resourceVersion and the stamp "0000000000000000000". bench/clientgo/cmd/pbprep encodes
// it in protobuf for Options.ProtobufObjects. Not in the lazy mode (see Lazy), which has
// no protobuf.
func (s *Server) ObjectJSON(i int) []byte {
	it := &s.items[i]
	return it.full.appendTo(nil, it.rvs, zeroStamp)
}

// ObjectBytes is the mean JSON size of one object as listed, whole and as
// PartialObjectMetadata.
func (s *Server) ObjectBytes() (full, metadata float64) {
	switch {
	case s.lazy != nil:
		return s.lazy.objectBytes()
	case s.rlazy != nil:
		return s.rlazy.objectBytes()
	}
	if len(s.items) == 0 {
		return 0, 0
	}
	var f, m int
	for i := range s.items {
		it := &s.items[i]
		f += it.full.size(len(it.rvs))
		m += it.meta.size(len(it.rvs))
	}
	return float64(f) / float64(len(s.items)), float64(m) / float64(len(s.items))
}

// CACertPEM is the self-signed certificate clients must trust (nil without TLS).
func (s *Server) CACertPEM() []byte { return s.caPEM }

// Stats returns the counters. Watches add theirs at every flush.
func (s *Server) Stats() Stats {
	return Stats{Events: s.events.Load(), Bytes: s.bytes.Load(), Lists: s.lists.Load(), Watches: s.watches.Load()}
}

// Start listens on addr ("127.0.0.1:0" for any free port) and serves in the background.
// It returns the base URL (http://... or https://...).
func (s *Server) Start(addr string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil || s.closed {
		return "", errors.New("streamserver: already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	if s.opts.TLS {
		scheme = "https"
		s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{s.cert}, MinVersion: tls.VersionTLS12}
		if s.opts.DisableHTTP2 {
			s.srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // non-nil: no h2
		}
		go func() { s.serveDone(s.srv.ServeTLS(ln, "", "")) }()
	} else {
		go func() { s.serveDone(s.srv.Serve(ln)) }()
	}
	s.url = scheme + "://" + ln.Addr().String()
	return s.url, nil
}

func (s *Server) serveDone(err error) {
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.logf("serve: %v", err)
	}
}

// URL is the base URL Start returned.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Close stops listening and ends every connection, watches included.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// WriteKubeconfig writes a kubeconfig pointing at the started server, trusting its
// certificate, with the objects' namespace as the context's.
func (s *Server) WriteKubeconfig(path string) error {
	ca := ""
	if s.caPEM != nil {
		ca = ", certificate-authority-data: " + base64.StdEncoding.EncodeToString(s.caPEM)
	}
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: streamserver
clusters:
- name: streamserver
  cluster: {server: %q%s}
users:
- name: streamserver
  user: {}
contexts:
- name: streamserver
  context: {cluster: streamserver, user: streamserver, namespace: %s}
`, s.URL(), ca, s.opts.Namespace)
	return os.WriteFile(path, []byte(doc), 0o600)
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// writerPool holds the 256 KiB buffers lists and watches write through.
var writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}

// ServeHTTP routes the discovery, list, get and watch requests.
//
// A list or watch with a shardSelector parameter is served as kube-apiserver 1.36 with
// the ShardedListAndWatch feature gate serves it (unless Options.IgnoreShardSelector):
// the selector is read with shard.Parse, and one that does not parse fails the request
// with a 500 "invalid shard selector: …" (the apiserver's answer, though it is the
// client's mistake); the list or watch then has only the objects whose namespace or uid
// hashes into one of its ranges, and every page of a list carries
// metadata.shardInfo.selector, the selector as shard.Selector.String writes it.
// Sharded list pages have no remainingItemCount, as the apiserver gives none for a
// filtered list.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeStatus(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method+" is not supported: this server only lists and watches")
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch path {
	case "/version":
		writeRaw(w, `{"major":"1","minor":"33","gitVersion":"v1.33.0-kinformer-streamserver","gitCommit":"0000000000000000000000000000000000000000","gitTreeState":"clean","buildDate":"2025-03-01T08:00:00Z","goVersion":"go1.26","compiler":"gc","platform":"linux/amd64"}`)
		return
	case "/api":
		writeRaw(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"`+r.Host+`"}]}`)
		return
	case "/apis":
		writeRaw(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		return
	case "/api/v1":
		writeRaw(w, resourceList)
		return
	}
	rest, ok := strings.CutPrefix(path, "/api/v1/")
	if !ok {
		writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	parts := strings.Split(rest, "/")
	ns, resource, name := "", "", ""
	switch {
	case len(parts) == 1:
		resource = parts[0]
	case len(parts) == 3 && parts[0] == "namespaces":
		ns, resource = parts[1], parts[2]
	case len(parts) == 4 && parts[0] == "namespaces":
		ns, resource, name = parts[1], parts[2], parts[3]
	default:
		writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	kind, ok := kinds[resource]
	if !ok {
		writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	switch {
	case s.lazy != nil:
		s.serveLazy(w, r, kind, resource, ns, name)
		return
	case s.rlazy != nil:
		s.serveRealLazy(w, r, kind, resource, ns, name)
		return
	}
	// Only the profile's resource in its namespaces has objects; the others are empty.
	var items []item
	if resource == resourceOf(s.opts.Profile) {
		items = s.inNamespace(ns)
	}
	q := r.URL.Query()
	accept := r.Header.Get("Accept")
	metaOnly := strings.Contains(accept, "as=PartialObjectMetadata")
	pb := s.servesProtobuf(accept, metaOnly)
	if name != "" {
		s.serveGet(w, items, ns, resource, name, metaOnly)
		return
	}
	sel, err := s.shardSelector(q.Get("shardSelector"))
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	if q.Get("watch") == "1" || q.Get("watch") == "true" {
		// A watch follows the changes of every object, and sends those of the ones it
		// selects.
		var f *filter
		if len(items) < len(s.items) || !sel.IsZero() {
			f = &filter{sel: sel}
			if len(items) < len(s.items) {
				f.ns, f.oneNS = ns, true
			}
		}
		if len(items) > 0 {
			items = s.items
		}
		s.serveWatch(w, r, &watcher{kind: kind, items: items, n: len(items), filter: f, metaOnly: metaOnly, pb: pb})
		return
	}
	s.serveList(w, r, kind, eagerObjects(items), sel, metaOnly, pb)
}

// inNamespace is the objects of namespace ns ("" for all namespaces), nil if it has none.
func (s *Server) inNamespace(ns string) []item {
	if ns == "" {
		return s.items
	}
	r, ok := s.byNS[ns]
	if !ok {
		return nil
	}
	return s.items[r[0]:r[1]]
}

// shardSelector reads a request's shardSelector parameter: the zero Selector (no
// filtering) for none, or when the server ignores the parameter.
func (s *Server) shardSelector(text string) (shard.Selector, error) {
	if text == "" || s.opts.IgnoreShardSelector {
		return shard.Selector{}, nil
	}
	sel, err := shard.Parse(text)
	if err != nil {
		return shard.Selector{}, fmt.Errorf("invalid shard selector: %s", strings.TrimPrefix(err.Error(), "shard: "))
	}
	return sel, nil
}

// filter is what a request selects besides its resource: one namespace of several, and a
// shard.
type filter struct {
	ns    string
	oneNS bool
	sel   shard.Selector // zero: every object
}

// keeps reports whether the request selects it.
func (f *filter) keeps(it *item) bool { return f.match(it.ns, it.nsHash, it.uidHash) }

// match reports whether the request selects the object of namespace ns whose namespace
// and uid hash to nsHash and uidHash (uidHash is only read by a selector of uids).
func (f *filter) match(ns string, nsHash, uidHash uint64) bool {
	if f.oneNS && ns != f.ns {
		return false
	}
	if len(f.sel.Ranges) == 0 {
		return true
	}
	h := nsHash
	if f.sel.Field == shard.UID {
		h = uidHash
	}
	for _, r := range f.sel.Ranges {
		if r.Contains(h) {
			return true
		}
	}
	return false
}

const resourceList = `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"v1","resources":[` +
	`{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list","watch"],"shortNames":["cm"]},` +
	`{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get","list","watch"],"shortNames":["po"],"categories":["all"]},` +
	`{"name":"secrets","singularName":"secret","namespaced":true,"kind":"Secret","verbs":["get","list","watch"]}]}`

func writeRaw(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write([]byte(body))
}

func writeStatus(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`+"\n", msg, reason, code)
}

func (s *Server) serveGet(w http.ResponseWriter, items []item, ns, resource, name string, metaOnly bool) {
	i, ok := s.byName[name]
	if !ok || len(items) == 0 || ns != "" && s.items[i].ns != ns {
		writeStatus(w, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", resource, name))
		return
	}
	it := &s.items[i]
	t := &it.full
	if metaOnly {
		t = &it.meta
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(t.size(len(it.rvs))))
	_, _ = w.Write(t.appendTo(nil, it.rvs, zeroStamp))
}

// serveList writes one page of items (pre-encoded, or lazy pods generated as they are
// written), in JSON or with pb in protobuf. The continue token is the base64 of
// "<list rv>/<offset>", the offset in items where the next page starts. Every list
// reads the state at R0. A sharded list (sel not zero) has the selected objects only,
// metadata.shardInfo on every page and no remainingItemCount.
func (s *Server) serveList(w http.ResponseWriter, r *http.Request, kind string, items listed, sel shard.Selector, metaOnly, pb bool) {
	q := r.URL.Query()
	if rv := q.Get("resourceVersion"); rv != "" {
		if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "invalid resourceVersion "+strconv.Quote(rv))
			return
		}
	}
	off := 0
	if c := q.Get("continue"); c != "" {
		off = decodeContinue(c)
		if off < 0 || off > items.len() {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "invalid continue token")
			return
		}
	}
	limit := items.len() - off
	if l, err := strconv.ParseInt(q.Get("limit"), 10, 64); err == nil && l > 0 && l < int64(limit) {
		limit = int(l)
	}
	if m := s.opts.PageLimitMax; m > 0 && limit > m {
		limit = m
	}
	// The page: items[off:end] whole, or the selected ones among them; next is where the
	// next page starts, len(items) if there is none.
	var page []int
	end, next := off+limit, off+limit
	if sel.IsZero() {
		page = make([]int, limit)
		for i := range page {
			page[i] = off + i
		}
	} else {
		f := &filter{sel: sel}
		end = off
		for ; end < items.len() && len(page) < limit; end++ {
			if items.keeps(f, end) {
				page = append(page, end)
			}
		}
		// Skip to the next selected object, so that a page is never followed by an empty one.
		for next = end; next < items.len() && !items.keeps(f, next); next++ {
		}
	}
	if pb {
		cont, remaining, selector := "", -1, ""
		if next < items.len() {
			cont = encodeContinue(s.r0, next)
			if sel.IsZero() {
				remaining = items.len() - end
			}
		}
		if !sel.IsZero() {
			selector = sel.String()
		}
		// Only eager objects have protobuf encodings: New refuses ProtobufObjects with Lazy.
		s.serveProtobufList(w, items.(eagerObjects), page, cont, remaining, selector)
		return
	}
	listKind, apiVersion := kind+"List", "v1"
	if metaOnly {
		listKind, apiVersion = "PartialObjectMetadataList", "meta.k8s.io/v1"
	}
	head := `{"kind":"` + listKind + `","apiVersion":"` + apiVersion + `","metadata":{"resourceVersion":"` + strconv.FormatInt(s.r0, 10) + `"`
	if next < items.len() {
		head += `,"continue":"` + encodeContinue(s.r0, next) + `"`
		if sel.IsZero() {
			head += `,"remainingItemCount":` + strconv.Itoa(items.len()-end)
		}
	}
	if !sel.IsZero() {
		echo, _ := json.Marshal(sel.String()) // a string always marshals
		head += `,"shardInfo":{"selector":` + string(echo) + `}`
	}
	head += `},"items":[`
	const tail = "]}\n"
	n := len(head) + len(tail)
	for i, j := range page {
		if i > 0 {
			n++
		}
		n += items.size(j, metaOnly)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(n))
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() { bw.Reset(nil); writerPool.Put(bw) }()
	bw.WriteString(head)
	for i, j := range page {
		if i > 0 {
			bw.WriteByte(',')
		}
		items.write(bw, j, metaOnly)
	}
	bw.WriteString(tail)
	if err := bw.Flush(); err != nil {
		s.logf("list: %v", err)
	}
	s.lists.Add(1)
	s.bytes.Add(int64(n))
}

func encodeContinue(rv int64, off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(rv, 10) + "/" + strconv.Itoa(off)))
}

func decodeContinue(tok string) int {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return -1
	}
	_, off, ok := strings.Cut(string(b), "/")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(off)
	if err != nil {
		return -1
	}
	return n
}
