package controllers

import (
	"strings"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/object"
)

// Owners finds in an informer's cache the owners of a dependent object, as a controller's
// event handlers must to know which key to enqueue: the owner its ControllerRef names,
// or, for an orphan, every owner whose selector matches it (any of them may adopt it).
// The ReplicaSet controller finds the ReplicaSets of pods with it, the Deployment
// controller the Deployments of ReplicaSets.
type Owners[T object.Object] struct {
	// Lister reads the owners' cache.
	Lister informer.Lister[T]
	// Group and Kind are what a ControllerRef to an owner names ("apps", "ReplicaSet").
	Group, Kind string
	// Selector returns an owner's label selector.
	Selector func(T) *object.LabelSelector
}

// Resolve returns the cached owner a ControllerRef points to. It reports false when the
// ref names another kind, or an owner that no longer exists: one of the same name with
// another UID was deleted and created again, and the dependent is not its.
func (o Owners[T]) Resolve(ns string, ref *object.OwnerReference) (T, bool) {
	var none T
	if ref.Kind != o.Kind || apiGroup(ref.APIVersion) != o.Group {
		return none, false
	}
	owner, ok := o.Lister.Get(object.KeyFor(ns, ref.Name))
	if !ok || owner.Meta().UID != ref.UID {
		return none, false
	}
	return owner, true
}

// Selecting returns the owners in namespace ns whose selector matches labels. A nil,
// empty or invalid selector selects nothing: an owner must never adopt every object of
// its namespace.
func (o Owners[T]) Selecting(ns string, labels map[string]string) []T {
	var out []T
	for _, owner := range o.Lister.Namespace(ns).List(object.Everything()) {
		sel, err := o.Selector(owner).AsSelector()
		if err != nil || sel.Empty() || !sel.Matches(labels) {
			continue
		}
		out = append(out, owner)
	}
	return out
}

// apiGroup is the group of an apiVersion: "apps" of "apps/v1", "" of the core "v1".
func apiGroup(apiVersion string) string {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return ""
	}
	return group
}
