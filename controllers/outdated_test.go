package controllers

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kinformer/kinformer/object"
)

// A write refused with a Conflict is a skip, waiting for its resource's cache; any other
// error stays what it was.
func TestOutdatedIfConflict(t *testing.T) {
	conflict := object.NewConflict("deployments.apps", "web", "the object has been modified")
	err := fmt.Errorf("updating the status of ns/web: %w", OutdatedIfConflict("deployments.apps", conflict))
	if resource, ok := skippedFor(err); !ok || resource != "deployments.apps" {
		t.Errorf("skippedFor(%v) = %q, %v; want a skip for deployments.apps", err, resource, ok)
	}
	if !object.IsConflict(err) {
		t.Error("the Conflict is no longer in the chain")
	}
	other := errors.New("boom")
	if got := OutdatedIfConflict("deployments.apps", other); got != other {
		t.Errorf("OutdatedIfConflict(%v) = %v", other, got)
	}
	if _, ok := skippedFor(other); ok {
		t.Error("a plain error counts as a skip")
	}
}
