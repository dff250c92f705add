package claim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kinformer/kinformer/object"
)

// Owner describes the controller object that claims dependents.
type Owner struct {
	// Meta is the owner as cached (name, namespace, UID, deletionTimestamp).
	Meta *object.ObjectMeta
	// APIVersion and Kind go into the ControllerRef ("apps/v1", "ReplicaSet").
	APIVersion, Kind string
	// Selector picks the dependents it should own.
	Selector object.Selector
	// Fresh reads the owner from the server, uncached.
	Fresh func(ctx context.Context) (*object.ObjectMeta, error)
}

// Patcher applies a JSON merge patch to the named dependent in the owner's namespace.
type Patcher func(ctx context.Context, name string, patch []byte) error

// Claim returns the candidates the owner controls after adopting matching orphans and
// releasing owned objects that no longer match. Candidates must be in the owner's
// namespace. Errors of individual adoptions or releases are joined; objects that could
// not be adopted are not returned.
func Claim[T object.Object](ctx context.Context, owner Owner, candidates []T, patch Patcher) ([]T, error) {
	var (
		claimed  []T
		errs     []error
		checked  bool
		checkErr error
	)
	canAdopt := func() error {
		if !checked {
			checked, checkErr = true, recheck(ctx, owner)
		}
		return checkErr
	}
	for _, obj := range candidates {
		m := obj.Meta()
		ref := object.ControllerRef(m)
		matches := owner.Selector.Matches(m.Labels)
		switch {
		case ref != nil && ref.UID != owner.Meta.UID:
			continue // another controller's: never touched
		case ref != nil && matches:
			claimed = append(claimed, obj)
		case ref != nil:
			if owner.Meta.DeletionTimestamp != nil {
				continue // an owner being deleted keeps its dependents for the garbage collector
			}
			if err := patch(ctx, m.Name, releasePatch(m, owner.Meta.UID)); err != nil && !object.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("releasing %s: %w", object.Key(obj), err))
			}
		case !matches || owner.Meta.DeletionTimestamp != nil || m.DeletionTimestamp != nil:
			continue
		default:
			if err := canAdopt(); err != nil {
				errs = append(errs, fmt.Errorf("cannot adopt %s: %w", object.Key(obj), err))
				continue
			}
			err := patch(ctx, m.Name, adoptPatch(m, object.NewControllerRef(owner.Meta, owner.APIVersion, owner.Kind)))
			switch {
			case err == nil:
				claimed = append(claimed, obj)
			case !object.IsNotFound(err): // gone: nothing to adopt
				errs = append(errs, fmt.Errorf("adopting %s: %w", object.Key(obj), err))
			}
		}
	}
	return claimed, errors.Join(errs...)
}

// recheck reads the owner afresh and refuses adoption when it is being deleted or is no
// longer the object the cache knew.
func recheck(ctx context.Context, owner Owner) error {
	fresh, err := owner.Fresh(ctx)
	if err != nil {
		return err
	}
	if fresh.UID != owner.Meta.UID {
		return fmt.Errorf("original %s %s is gone: got uid %s, wanted %s", owner.Kind, object.KeyFor(owner.Meta.Namespace, owner.Meta.Name), fresh.UID, owner.Meta.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("%s %s has just been deleted at %s", owner.Kind, object.KeyFor(owner.Meta.Namespace, owner.Meta.Name), fresh.DeletionTimestamp)
	}
	return nil
}

// ownerPatch is a merge patch replacing metadata.ownerReferences, valid only while the
// dependent still has the uid and resourceVersion it was read with.
type ownerPatch struct {
	Metadata struct {
		UID             string                   `json:"uid"`
		ResourceVersion string                   `json:"resourceVersion"`
		OwnerReferences *[]object.OwnerReference `json:"ownerReferences"` // nil: null, removing the member
	} `json:"metadata"`
}

func encodePatch(m *object.ObjectMeta, refs []object.OwnerReference) []byte {
	var p ownerPatch
	p.Metadata.UID, p.Metadata.ResourceVersion = m.UID, m.ResourceVersion
	if len(refs) > 0 {
		p.Metadata.OwnerReferences = &refs
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // plain strings and bools always encode
	}
	return b
}

func adoptPatch(m *object.ObjectMeta, ref object.OwnerReference) []byte {
	refs := append(append([]object.OwnerReference(nil), m.OwnerReferences...), ref)
	return encodePatch(m, refs)
}

func releasePatch(m *object.ObjectMeta, ownerUID string) []byte {
	var refs []object.OwnerReference
	for _, r := range m.OwnerReferences {
		if r.UID != ownerUID {
			refs = append(refs, r)
		}
	}
	return encodePatch(m, refs)
}
