package apisim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
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
	sel, err := s.parseShard(q.Get("shardSelector"))
	if err != nil {
		return filter{}, err
	}
	return filter{namespace: req.namespace, labels: ls, fields: fs, shard: sel}, nil
}

// parseShard reads a shardSelector as kube-apiserver 1.36 with the ShardedListAndWatch
// gate does: "" is no selector; anything else must parse, or the request fails. The
// apiserver's registry returns the parse error as a plain Go error, which its handler
// turns into a 500 with no reason and the error as the message, so that is what a
// malformed selector gets here too, though it is the client's mistake. The message is
// "invalid shard selector: " and the parser's complaint, whose words (from shard.Parse,
// not from the server's CEL parser) differ. With Faults.IgnoreShardSelector the
// parameter is ignored, malformed or not, as without the gate.
func (s *Server) parseShard(text string) (shard.Selector, error) {
	if text == "" || s.faults.ignoringShards() {
		return shard.Selector{}, nil
	}
	sel, err := shard.Parse(text)
	if err != nil {
		return shard.Selector{}, object.NewStatusError(http.StatusInternalServerError, "", // the apiserver's StatusReasonUnknown
			"invalid shard selector: %s", strings.TrimPrefix(err.Error(), "shard: "))
	}
	return sel, nil
}

// serveList answers a list: from the current state, or from a past snapshot for
// resourceVersionMatch=Exact and for continue tokens, in pages when limit is set.
func (s *Server) serveList(w http.ResponseWriter, r *http.Request, req apiRequest) error {
	lq, err := s.parseList(r, req)
	if err != nil {
		return err
	}
	rev, items, err := s.listSnapshot(typeKey(req.typ.Group, req.typ.Resource), lq.at)
	if err != nil {
		return err
	}
	page, remaining := paginate(items, lq.filter, lq.at.after, lq.limit)
	writeRaw(w, http.StatusOK, encodeList(req.typ, lq.metaOnly, rev, page, remaining, lq.filter.shard))
	return nil
}

// listQuery is a list request's parameters, checked.
type listQuery struct {
	filter   filter
	limit    int64 // <= 0: no limit
	at       listPoint
	metaOnly bool // PartialObjectMetadataList instead of whole objects
}

// listPoint is the revision a list reads. Only the store can tell whether it is still
// there, or there yet, so it is checked under the store's lock (listSnapshot).
type listPoint struct {
	// pinned: the list reads the snapshot at rev (resourceVersionMatch=Exact, or a
	// continue token); otherwise it reads the current state, which must have reached
	// notOlderThan.
	pinned       bool
	rev          int64
	notOlderThan int64
	after        string // the last key of the previous page: this page starts after it
	continued    bool   // from a continue token, which expires with its own message
}

func (s *Server) parseList(r *http.Request, req apiRequest) (listQuery, error) {
	q := r.URL.Query()
	f, err := s.parseFilter(r, req)
	if err != nil {
		return listQuery{}, err
	}
	lq := listQuery{filter: f, metaOnly: wantsMetadata(r.Header.Get("Accept"))}
	lq.limit, _ = strconv.ParseInt(q.Get("limit"), 10, 64)
	rv, match := q.Get("resourceVersion"), q.Get("resourceVersionMatch")
	if match != "" && match != "Exact" && match != "NotOlderThan" {
		return listQuery{}, badRequest("invalid resourceVersionMatch %q", match)
	}
	if match != "" && rv == "" {
		return listQuery{}, badRequest("resourceVersionMatch is forbidden unless resourceVersion is provided")
	}
	lq.at, err = parseListPoint(rv, match, q.Get("continue"))
	return lq, err
}

func parseListPoint(rv, match, cont string) (listPoint, error) {
	switch {
	case cont != "":
		if rv != "" {
			return listPoint{}, badRequest("specifying resource version is not allowed when using continue")
		}
		tok, err := decodeContinue(cont)
		if err != nil {
			return listPoint{}, err
		}
		return listPoint{pinned: true, rev: tok.Rev, after: tok.Start, continued: true}, nil
	case match == "Exact":
		n, err := parseListRV(rv)
		return listPoint{pinned: true, rev: n}, err
	case rv != "" && rv != "0":
		n, err := parseListRV(rv)
		return listPoint{notOlderThan: n}, err
	}
	return listPoint{}, nil
}

func parseListRV(rv string) (int64, error) {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return 0, badRequest("invalid resourceVersion %q", rv)
	}
	return n, nil
}

// listSnapshot returns the revision the list is served at and the objects of resource at
// that revision, sorted by key, or why that revision cannot be served.
func (s *Server) listSnapshot(resource string, at listPoint) (int64, []keyed, error) {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	rev := st.rev
	if at.pinned {
		rev = at.rev
	} else if at.notOlderThan > rev {
		return 0, nil, tooLargeRV(at.notOlderThan, rev)
	}
	if rev > st.rev {
		return 0, nil, tooLargeRV(rev, st.rev)
	}
	if rev < st.compacted {
		if at.continued {
			return 0, nil, object.NewExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
		}
		return 0, nil, object.NewExpired("too old resource version: " + strconv.FormatInt(rev, 10) + " (" + strconv.FormatInt(st.compacted+1, 10) + ")")
	}
	return rev, st.snapshot(resource, rev), nil
}

// paginate keeps the items that pass f and come after the key after (the previous page's
// last), at most limit of them (limit <= 0: all), and counts the matching ones it leaves
// for later pages.
func paginate(items []keyed, f filter, after string, limit int64) (page []keyed, remaining int64) {
	for _, it := range items {
		if it.key <= after && after != "" || !f.matches(it.rec.obj) {
			continue
		}
		if limit > 0 && int64(len(page)) == limit {
			remaining++
			continue
		}
		page = append(page, it)
	}
	return page, remaining
}

// encodeList writes the list from the stored encodings of its items, so that a list
// costs no marshalling of objects. A page with items left after it carries the continue
// token for the rest, pinned to rev so that every page shows the same snapshot. Every
// page of a sharded list carries metadata.shardInfo, whose selector is sel re-written
// in canonical form, as the apiserver echoes it (not the text the request sent).
func encodeList(t ResourceType, metaOnly bool, rev int64, page []keyed, remaining int64, sel shard.Selector) []byte {
	kind, apiVersion := t.Kind+"List", t.groupVersion()
	if metaOnly {
		kind, apiVersion = "PartialObjectMetadataList", "meta.k8s.io/v1"
	}
	var buf bytes.Buffer
	buf.WriteString(`{"kind":"` + kind + `","apiVersion":"` + apiVersion + `","metadata":{"resourceVersion":"` + strconv.FormatInt(rev, 10) + `"`)
	if remaining > 0 {
		next := encodeContinue(continueToken{Rev: rev, Start: page[len(page)-1].key})
		buf.WriteString(`,"continue":"` + next + `","remainingItemCount":` + strconv.FormatInt(remaining, 10))
	}
	if !sel.IsZero() {
		echo, _ := json.Marshal(sel.String()) // a string always marshals
		buf.WriteString(`,"shardInfo":{"selector":`)
		buf.Write(echo)
		buf.WriteByte('}')
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
	return buf.Bytes()
}
