package apisim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/object"
)

// A DELETE does one of three things to an object, as in kube-apiserver's registry:
//
//   - removes it at once;
//   - marks it (metadata.deletionTimestamp) and leaves it to its finalizers, which others
//     remove; the last one gone removes the object;
//   - for a pod that may be running on a node, marks it with a grace period and leaves it
//     to the node's kubelet (see graceful.go).
//
// Its propagation policy decides what happens to the object's dependents, the objects
// whose metadata.ownerReferences name it. Two of the three policies are carried out by
// finalizers that the garbage collector (gc.go) owns: Foreground adds
// "foregroundDeletion", so the owner stays until its dependents are gone; Orphan adds
// "orphan", so the owner stays until the references to it are removed from its
// dependents. Background adds none: the owner goes now and its dependents follow.

// propagation is a DeleteOptions.propagationPolicy.
type propagation string

const (
	propagateBackground propagation = "Background"
	propagateForeground propagation = "Foreground"
	propagateOrphan     propagation = "Orphan"
)

// The finalizers by which the garbage collector carries out Foreground and Orphan.
const (
	finalizerForeground = "foregroundDeletion"
	finalizerOrphan     = "orphan"
)

// deleteOptions is what the simulator reads of a metav1.DeleteOptions.
type deleteOptions struct {
	Preconditions *struct {
		UID             string `json:"uid"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"preconditions"`
	GracePeriodSeconds *int64  `json:"gracePeriodSeconds"`
	PropagationPolicy  *string `json:"propagationPolicy"`
	// OrphanDependents is the deprecated predecessor of PropagationPolicy: true is Orphan,
	// false is Background.
	OrphanDependents *bool `json:"orphanDependents"`
}

// readDeleteOptions reads the DeleteOptions of a DELETE. Like the apiserver, it reads the
// body when there is one, or else the query parameters, never a mix of the two.
func readDeleteOptions(r *http.Request) (deleteOptions, error) {
	var opts deleteOptions
	if err := requireJSON(r); err != nil {
		return opts, err
	}
	if b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20)); len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &opts); err != nil {
			return opts, badRequest("invalid DeleteOptions: %v", err)
		}
	} else if err := opts.readQuery(r.URL.Query()); err != nil {
		return opts, err
	}
	return opts, opts.validate()
}

func (o *deleteOptions) readQuery(q url.Values) error {
	if g := q.Get("gracePeriodSeconds"); g != "" {
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil {
			return badRequest("invalid gracePeriodSeconds %q", g)
		}
		o.GracePeriodSeconds = &n
	}
	if p := q.Get("propagationPolicy"); p != "" {
		o.PropagationPolicy = &p
	}
	if v := q.Get("orphanDependents"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return badRequest("invalid orphanDependents %q", v)
		}
		o.OrphanDependents = &b
	}
	return nil
}

// validate refuses what kube-apiserver refuses, with its messages.
func (o deleteOptions) validate() error {
	if o.OrphanDependents != nil && o.PropagationPolicy != nil {
		return invalid(`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: %q: orphanDependents and deletionPropagation cannot be both set`, *o.PropagationPolicy)
	}
	if p := o.PropagationPolicy; p != nil {
		switch propagation(*p) {
		case propagateBackground, propagateForeground, propagateOrphan:
		default:
			return invalid(`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: %q: supported values: "Foreground", "Background", "Orphan", "nil"`, *p)
		}
	}
	return nil
}

// checkPreconditions answers 409 when the stored object is not the one the delete names.
func (o deleteOptions) checkPreconditions(req apiRequest, obj map[string]any) error {
	p, m := o.Preconditions, meta(obj)
	switch {
	case p == nil:
	case p.UID != "" && p.UID != str(m, "uid"):
		return object.NewConflict(req.typ.Resource, req.name, fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", p.UID, str(m, "uid")))
	case p.ResourceVersion != "" && p.ResourceVersion != str(m, "resourceVersion"):
		return object.NewConflict(req.typ.Resource, req.name, fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", p.ResourceVersion, str(m, "resourceVersion")))
	}
	return nil
}

// propagationFor decides what a delete of obj, a tk, does to its dependents. An explicit
// option wins; then a garbage-collection finalizer the object already carries (set when it
// was created, or by an earlier delete); then the resource's default. The default is
// Background for everything the simulator serves: kube-apiserver 1.36 defaults apps/v1
// workloads to DeleteDependents (only the retired extensions/v1beta1 and apps/v1beta2
// orphaned), and resources without a policy of their own, such as pods and configmaps, to
// Background. Events opt out of garbage collection: their deletes never wait for it.
func propagationFor(tk string, obj map[string]any, opts deleteOptions) propagation {
	switch {
	case tk == typeKey("", "events"):
		return propagateBackground
	case opts.OrphanDependents != nil && *opts.OrphanDependents:
		return propagateOrphan
	case opts.OrphanDependents != nil:
		return propagateBackground
	case opts.PropagationPolicy != nil:
		return propagation(*opts.PropagationPolicy)
	}
	for _, f := range finalizers(obj) {
		switch f {
		case finalizerOrphan:
			return propagateOrphan
		case finalizerForeground:
			return propagateForeground
		}
	}
	return propagateBackground
}

// finalizersFor is the finalizer list a delete with policy p leaves on an object that has
// have: the other finalizers as they are, and the one garbage-collection finalizer p
// needs, if any.
func finalizersFor(p propagation, have []any) []any {
	var out []any
	for _, f := range have {
		if f != finalizerOrphan && f != finalizerForeground {
			out = append(out, f)
		}
	}
	switch p {
	case propagateOrphan:
		out = append(out, finalizerOrphan)
	case propagateForeground:
		out = append(out, finalizerForeground)
	}
	return out
}

// setFinalizers replaces an object's finalizers; an empty list leaves no member behind.
func setFinalizers(m map[string]any, fs []any) {
	if len(fs) == 0 {
		delete(m, "finalizers")
		return
	}
	m["finalizers"] = fs
}

// markDeleting marks an object that finalizers hold, as the registry does: the deletion is
// due now (grace 0; an earlier mark's time stays) and, on the first mark, the generation
// grows.
func markDeleting(m map[string]any, now time.Time) {
	if m["deletionTimestamp"] == nil {
		if g, ok := int64Field(m, "generation"); ok && g > 0 {
			m["generation"] = json.Number(strconv.FormatInt(g+1, 10))
		}
	}
	if was, err := time.Parse(time.RFC3339, str(m, "deletionTimestamp")); err != nil || was.After(now) {
		m["deletionTimestamp"] = now.UTC().Format(time.RFC3339)
	}
	m["deletionGracePeriodSeconds"] = json.Number("0")
}

// deleteObject carries out a delete of cur, the stored object at key of resource tk
// (caller holds st.mu). Both a client's DELETE and the garbage collector come here, so a
// dependent the collector deletes is treated as a client's would be: a running pod is
// deleted gracefully, finalizers hold what they hold, and the dependent's own dependents
// are treated by the policy in opts. It returns the HTTP status and the object to answer
// with: 200 when the object is gone or in its grace period, 202 when finalizers hold it.
func deleteObject(st *store, tk, key string, cur *record, opts deleteOptions, now time.Time) (int, *record) {
	next := copyObject(cur.obj)
	m := meta(next)
	graceful := false
	if tk == typeKey("", "pods") {
		plan := planPodDeletion(cur.obj, opts.GracePeriodSeconds, now)
		if plan.pending {
			// A graceful deletion under way may only be shortened; a delete that does not
			// shorten it changes nothing, not even the finalizers.
			return http.StatusOK, cur
		}
		if plan.graceful {
			plan.mark(m)
			graceful = true
		}
	}
	setFinalizers(m, finalizersFor(propagationFor(tk, cur.obj, opts), finalizers(cur.obj)))
	switch {
	case graceful:
		// Stays for its kubelet, unless the grace was shortened to nothing and no
		// finalizer holds it: the commit removes it then.
		return http.StatusOK, st.commit(tk, key, cur, next, commitPut)
	case len(finalizers(next)) > 0:
		markDeleting(m, now)
		if equalJSON(next, cur.obj) {
			return http.StatusAccepted, cur // already marked so: nothing to write
		}
		return http.StatusAccepted, st.commit(tk, key, cur, next, commitPut)
	}
	return http.StatusOK, st.commit(tk, key, cur, next, commitRemove)
}

// serveDelete answers a DELETE of one object.
func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request, req apiRequest) error {
	opts, err := readDeleteOptions(r)
	if err != nil {
		return err
	}
	return s.withObject(req, func(tk, key string, cur *record) error {
		if err := opts.checkPreconditions(req, cur.obj); err != nil {
			return err
		}
		code, rec := deleteObject(s.store, tk, key, cur, opts, s.opts.Now().UTC())
		writeRaw(w, code, rec.data)
		return nil
	})
}
