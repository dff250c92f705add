package apisim

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/kinformer/kinformer/object"
)

// parseFilter reads the namespace and the label and field selectors of a list or watch.
func (s *Server) parseFilter(r *http.Request, req apiRequest) (filter, error) {
	q := r.URL.Query()
	ls, err := object.ParseSelector(q.Get("labelSelector"))
	if err != nil {
		return filter{}, badRequest("%v", err)
	}
	fs, err := parseFieldSelector(q.Get("fieldSelector"), req.typ)
	if err != nil {
		return filter{}, err
	}
	for i := range fs {
		if path, ok := req.typ.FieldPaths[fs[i].field]; ok {
			fs[i].field = path
		}
	}
	return filter{namespace: req.namespace, labels: ls, fields: fs}, nil
}

// serveList answers a list: from the current state, or from a past snapshot for
// resourceVersionMatch=Exact and for continue tokens, in pages when limit is set.
func (s *Server) serveList(w http.ResponseWriter, r *http.Request, req apiRequest) error {
	q := r.URL.Query()
	f, err := s.parseFilter(r, req)
	if err != nil {
		return err
	}
	limit, _ := strconv.ParseInt(q.Get("limit"), 10, 64)
	rvParam, match := q.Get("resourceVersion"), q.Get("resourceVersionMatch")
	if match != "" && match != "Exact" && match != "NotOlderThan" {
		return badRequest("invalid resourceVersionMatch %q", match)
	}
	if match != "" && rvParam == "" {
		return badRequest("resourceVersionMatch is forbidden unless resourceVersion is provided")
	}
	tk := typeKey(req.typ.Group, req.typ.Resource)

	s.store.mu.Lock()
	rev := s.store.rev
	start := ""
	switch {
	case q.Get("continue") != "":
		if rvParam != "" {
			s.store.mu.Unlock()
			return badRequest("specifying resource version is not allowed when using continue")
		}
		tok, err := decodeContinue(q.Get("continue"))
		if err != nil {
			s.store.mu.Unlock()
			return err
		}
		rev, start = tok.Rev, tok.Start
	case match == "Exact":
		n, err := strconv.ParseInt(rvParam, 10, 64)
		if err != nil {
			s.store.mu.Unlock()
			return badRequest("invalid resourceVersion %q", rvParam)
		}
		rev = n
	case rvParam != "" && rvParam != "0":
		n, err := strconv.ParseInt(rvParam, 10, 64)
		if err != nil {
			s.store.mu.Unlock()
			return badRequest("invalid resourceVersion %q", rvParam)
		}
		if n > rev {
			s.store.mu.Unlock()
			return tooLargeRV(n, rev)
		}
	}
	if rev > s.store.rev {
		s.store.mu.Unlock()
		return tooLargeRV(rev, s.store.rev)
	}
	if rev < s.store.compacted {
		s.store.mu.Unlock()
		if q.Get("continue") != "" {
			return object.NewExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
		}
		return object.NewExpired("too old resource version: " + strconv.FormatInt(rev, 10) + " (" + strconv.FormatInt(s.store.compacted+1, 10) + ")")
	}
	items := s.store.snapshot(tk, rev)
	s.store.mu.Unlock()

	metaOnly := wantsMetadata(r.Header.Get("Accept"))
	kind, apiVersion := req.typ.Kind+"List", req.typ.groupVersion()
	if metaOnly {
		kind, apiVersion = "PartialObjectMetadataList", "meta.k8s.io/v1"
	}
	var buf bytes.Buffer
	buf.WriteString(`{"kind":"` + kind + `","apiVersion":"` + apiVersion + `","metadata":{"resourceVersion":"` + strconv.FormatInt(rev, 10) + `"`)
	var page []keyed
	next := ""
	remaining := int64(0)
	for _, it := range items {
		if it.key <= start && start != "" || !f.matches(it.rec.obj) {
			continue
		}
		if limit > 0 && int64(len(page)) == limit {
			remaining++
			continue
		}
		page = append(page, it)
	}
	if remaining > 0 {
		next = encodeContinue(continueToken{Rev: rev, Start: page[len(page)-1].key})
		buf.WriteString(`,"continue":"` + next + `","remainingItemCount":` + strconv.FormatInt(remaining, 10))
	}
	buf.WriteString(`},"items":[`)
	for i, it := range page {
		if i > 0 {
			buf.WriteByte(',')
		}
		if metaOnly {
			buf.Write(metadataOf(it.rec))
		} else {
			buf.Write(it.rec.item)
		}
	}
	buf.WriteString("]}")
	writeRaw(w, http.StatusOK, buf.Bytes())
	return nil
}
