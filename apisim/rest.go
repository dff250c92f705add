package apisim

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/object"
)

func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, req apiRequest) {
	q := r.URL.Query()
	var err error
	switch {
	case req.sub == "binding":
		err = s.serveBinding(w, r, req)
	case r.Method == http.MethodGet && req.name == "" && (q.Get("watch") == "1" || q.Get("watch") == "true"):
		err = s.serveWatch(w, r, req)
	case r.Method == http.MethodGet && req.name == "":
		err = s.serveList(w, r, req)
	case r.Method == http.MethodGet:
		err = s.serveGet(w, req, r.Header.Get("Accept"))
	case r.Method == http.MethodPost && req.name == "":
		err = s.serveCreate(w, r, req)
	case r.Method == http.MethodPut && req.name != "":
		err = s.serveWrite(w, r, req, false)
	case r.Method == http.MethodPatch && req.name != "":
		err = s.serveWrite(w, r, req, true)
	case r.Method == http.MethodDelete && req.name != "":
		err = s.serveDelete(w, r, req)
	default:
		err = object.NewStatusError(http.StatusMethodNotAllowed, object.ReasonMethodNotAllowed,
			"the server does not allow this method on the requested resource")
	}
	if err != nil {
		writeError(w, err)
	}
}

func (s *Server) key(req apiRequest) string { return object.KeyFor(req.namespace, req.name) }

// withObject calls fn with the request's object as stored (cur), its resource's key in
// the store (tk, see typeKey) and its own key, under the store's lock: a write that fn
// commits is then made on the state fn read. An object that is not there is a 404, and
// fn is not called.
func (s *Server) withObject(req apiRequest, fn func(tk, key string, cur *record) error) error {
	tk, key := typeKey(req.typ.Group, req.typ.Resource), s.key(req)
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	cur := s.store.objects[tk][key]
	if cur == nil {
		return object.NewNotFound(req.typ.Resource, req.name)
	}
	return fn(tk, key, cur)
}

func (s *Server) serveGet(w http.ResponseWriter, req apiRequest, accept string) error {
	var rec *record // read-only once stored, so it may be sent after the lock is released
	if err := s.withObject(req, func(_, _ string, cur *record) error { rec = cur; return nil }); err != nil {
		return err
	}
	switch {
	case req.sub == "scale":
		writeJSON(w, http.StatusOK, scaleOf(req.typ, rec.obj))
	case wantsMetadata(accept):
		writeRaw(w, http.StatusOK, metadataOf(rec))
	default:
		writeRaw(w, http.StatusOK, rec.data)
	}
	return nil
}

func readBody(r *http.Request) (map[string]any, error) {
	if err := requireJSON(r); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		return nil, badRequest("reading the request body: %v", err)
	}
	return decodeObject(b)
}

func (s *Server) serveCreate(w http.ResponseWriter, r *http.Request, req apiRequest) error {
	obj, err := readBody(r)
	if err != nil {
		return err
	}
	m := meta(obj)
	if ns := str(m, "namespace"); ns != "" && req.namespace != "" && ns != req.namespace {
		return badRequest("the namespace of the provided object (%s) does not match the namespace of the request (%s)", ns, req.namespace)
	}
	if req.typ.Namespaced {
		if req.namespace == "" {
			return badRequest("a namespace is required to create %s", req.typ.Resource)
		}
		m["namespace"] = req.namespace
	} else {
		delete(m, "namespace")
	}
	if str(m, "name") == "" && str(m, "generateName") != "" {
		m["name"] = str(m, "generateName") + randomSuffix()
	}
	name := str(m, "name")
	if err := validateName(name); err != nil {
		return invalid("%s %q is invalid: metadata.name: %v", req.typ.Kind, name, err)
	}
	obj["kind"], obj["apiVersion"] = req.typ.Kind, req.typ.groupVersion()
	m["uid"] = s.newUID()
	m["creationTimestamp"] = s.opts.Now().UTC().Format("2006-01-02T15:04:05Z")
	m["generation"] = json.Number("1")
	delete(m, "deletionTimestamp")
	// A kubelet registers its Node Ready in one request: kube-apiserver keeps the status
	// a Node is created with, and resets that of the other kinds served here.
	if req.typ.Status && req.typ.Kind != "Node" {
		delete(obj, "status")
		if req.typ.Kind == "Pod" {
			obj["status"] = map[string]any{"phase": "Pending"}
		}
	}
	key := object.KeyFor(str(m, "namespace"), name)
	tk := typeKey(req.typ.Group, req.typ.Resource)
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	if s.store.objects[tk][key] != nil {
		return object.NewAlreadyExists(req.typ.Resource, name)
	}
	rec := s.store.commit(tk, key, nil, obj, commitPut)
	writeRaw(w, http.StatusCreated, rec.data)
	return nil
}

// serveWrite handles PUT and PATCH on an object, its /status or its /scale.
func (s *Server) serveWrite(w http.ResponseWriter, r *http.Request, req apiRequest, patch bool) error {
	if patch {
		ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
		switch ct {
		case "application/merge-patch+json", "application/strategic-merge-patch+json":
			// Strategic merge is served as a plain merge patch: lists are replaced whole.
		default:
			return object.NewStatusError(http.StatusUnsupportedMediaType, object.ReasonUnsupportedMedia,
				"the simulator accepts merge patches only, not %q", ct)
		}
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return s.withObject(req, func(tk, key string, cur *record) error {
		var (
			next map[string]any
			err  error
		)
		switch {
		case req.sub == "scale":
			next, err = applyScale(req.typ, cur.obj, body, patch)
		case patch:
			next = mergePatch(cur.obj, body).(map[string]any)
		default:
			next = body
		}
		if err != nil {
			return err
		}
		nm, cm := meta(next), meta(cur.obj)
		if rv := str(nm, "resourceVersion"); rv != "" && rv != str(cm, "resourceVersion") {
			return object.NewConflict(req.typ.Resource, req.name, "the object has been modified; please apply your changes to the latest version and try again")
		}
		if uid := str(nm, "uid"); uid != "" && uid != str(cm, "uid") {
			return object.NewConflict(req.typ.Resource, req.name, "the UID in the object does not match the stored object")
		}
		if n := str(nm, "name"); n != "" && n != req.name {
			return badRequest("the name of the object (%s) does not match the name on the URL (%s)", n, req.name)
		}
		next = s.prepareUpdate(req, cur.obj, next)
		if equalJSON(next, cur.obj) { // a no-op write keeps the resourceVersion, as in Kubernetes
			s.serveWritten(w, req, cur)
			return nil
		}
		// Removing the last finalizer of an object marked for deletion completes the delete.
		s.serveWritten(w, req, s.store.commit(tk, key, cur, next, commitPut))
		return nil
	})
}

func (s *Server) serveWritten(w http.ResponseWriter, req apiRequest, rec *record) {
	if req.sub == "scale" {
		writeJSON(w, http.StatusOK, scaleOf(req.typ, rec.obj))
		return
	}
	writeRaw(w, http.StatusOK, rec.data)
}

// prepareUpdate applies the server-owned rules to an update: identity and system metadata
// stay, a main-resource write keeps the status and a /status write changes only the
// status, and the generation grows when the spec changes.
func (s *Server) prepareUpdate(req apiRequest, cur, next map[string]any) map[string]any {
	next = copyObject(next)
	nm, cm := meta(next), meta(cur)
	for _, k := range []string{"uid", "creationTimestamp", "namespace", "name", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		if v, ok := cm[k]; ok {
			nm[k] = v
		} else {
			delete(nm, k)
		}
	}
	next["kind"], next["apiVersion"] = cur["kind"], cur["apiVersion"]
	if req.typ.Status {
		if req.sub == "status" {
			status := next["status"]
			next = copyObject(cur)
			if status == nil {
				delete(next, "status")
			} else {
				next["status"] = status
			}
			return next
		}
		if st, ok := cur["status"]; ok {
			next["status"] = st
		} else {
			delete(next, "status")
		}
	}
	if !equalJSON(withoutMetaStatus(cur), withoutMetaStatus(next)) {
		g, _ := strconv.ParseInt(fmt.Sprint(cm["generation"]), 10, 64)
		nm["generation"] = json.Number(strconv.FormatInt(g+1, 10))
	}
	return next
}

func withoutMetaStatus(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "metadata" && k != "status" {
			out[k] = v
		}
	}
	return out
}

func finalizers(obj map[string]any) []any {
	f, _ := meta(obj)["finalizers"].([]any)
	return f
}

func (s *Server) newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	var b [5]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// validateName checks a DNS-1123 subdomain, what most resources require.
func validateName(name string) error {
	if name == "" {
		return fmt.Errorf("name or generateName is required")
	}
	if len(name) > 253 {
		return fmt.Errorf("must be no more than 253 characters")
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (c == '-' || c == '.') && i > 0 && i < len(name)-1
		if !ok {
			return fmt.Errorf("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character")
		}
	}
	return nil
}

// requireJSON refuses request bodies in other encodings (kubectl sends protobuf for
// built-in types): the simulator speaks JSON only, and says so instead of misreading them.
func requireJSON(r *http.Request) error {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	switch strings.TrimSpace(ct) {
	case "", "application/json", "application/merge-patch+json", "application/strategic-merge-patch+json":
		return nil
	}
	return object.NewStatusError(http.StatusUnsupportedMediaType, object.ReasonUnsupportedMedia,
		"the simulator accepts JSON bodies only, not %q", ct)
}

// continueToken is the opaque continue parameter: the snapshot revision and the last key
// served.
type continueToken struct {
	Rev   int64  `json:"rv"`
	Start string `json:"start"`
}

func encodeContinue(t continueToken) string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil || t.Rev <= 0 {
		return t, badRequest("invalid continue token")
	}
	return t, nil
}
