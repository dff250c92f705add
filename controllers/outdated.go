package controllers

import (
	"fmt"

	"github.com/kinformer/kinformer/object"
)

// Outdated is a write the server refused with a Conflict: it named the resourceVersion
// the cache held, and the object has changed since (another writer, or this controller's
// own write the cache has not shown yet). Like a Skipped sync it is no failure: the sync
// is asked again, on the skip backoff, once the cache can have caught up.
//
// Writes name the resourceVersion they read so that one landing late cannot overwrite a
// newer state: a process frozen mid-request in a sharded controller manager wakes after
// another member has taken the namespace, and its write must fail.
type Outdated struct {
	Resource string // "deployments"
	Err      error  // the Conflict
}

func (e *Outdated) Error() string {
	return fmt.Sprintf("the %s object changed since the cache read it: %v", e.Resource, e.Err)
}

func (e *Outdated) Unwrap() error { return e.Err }

// SkippedFor makes an Outdated a Skipped: the sync waits for the resource's cache.
func (e *Outdated) SkippedFor() string { return e.Resource }

// OutdatedIfConflict returns err as an *Outdated when it is a Conflict, else err.
func OutdatedIfConflict(resource string, err error) error {
	if object.IsConflict(err) {
		return &Outdated{Resource: resource, Err: err}
	}
	return err
}
