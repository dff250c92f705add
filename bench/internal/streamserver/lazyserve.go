package streamserver

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// serveLazy is ServeHTTP's list, get and watch in the lazy mode: the same answers as the
// eager mode's, from lazyPods.
func (s *Server) serveLazy(w http.ResponseWriter, r *http.Request, kind, resource, ns, name string) {
	l := s.lazy
	from, to, ok := l.span(ns)
	if !ok || resource != s.opts.Profile { // only the profile's resource in its namespaces has objects
		from, to = 0, 0
	}
	metaOnly := strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata")
	if name != "" {
		s.serveLazyGet(w, from < to, ns, resource, name, metaOnly)
		return
	}
	q := r.URL.Query()
	sel, err := s.shardSelector(q.Get("shardSelector"))
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	if q.Get("watch") == "1" || q.Get("watch") == "true" {
		// As in the eager mode, a watch follows the changes of every pod and sends those
		// of the ones it selects.
		wt := &watcher{kind: kind, metaOnly: metaOnly}
		if from < to {
			wt.lazy, wt.n = l, l.n
		}
		if to-from < l.n || !sel.IsZero() {
			wt.filter = &filter{sel: sel}
			if to-from < l.n {
				wt.filter.ns, wt.filter.oneNS = ns, true
			}
		}
		s.serveWatch(w, r, wt)
		return
	}
	s.serveList(w, r, kind, &lazySpan{l: l, from: from, to: to}, sel, metaOnly, false) // no protobuf: New refuses it
}

func (s *Server) serveLazyGet(w http.ResponseWriter, has bool, ns, resource, name string, metaOnly bool) {
	l := s.lazy
	pns, i, ok := l.byName(ns, name)
	if !ok || !has {
		writeStatus(w, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", resource, name))
		return
	}
	var v podValues
	l.fill(&v, pns, i, nil, nil)
	t := &l.template(i).full
	if metaOnly {
		t = &l.template(i).meta
	}
	b := t.appendTo(nil, &v.v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// objectBytes is Server.ObjectBytes of the lazy pods: the mean over every pod.
func (l *lazyPods) objectBytes() (full, metadata float64) {
	if l.n == 0 {
		return 0, 0
	}
	var f, m int
	for r := range l.nss {
		ns := &l.nss[r]
		for p := ns.from; p < ns.to; p++ {
			i := (p-ns.from)*l.k + ns.k
			f += l.size(ns, i, false)
			m += l.size(ns, i, true)
		}
	}
	return float64(f) / float64(l.n), float64(m) / float64(l.n)
}
