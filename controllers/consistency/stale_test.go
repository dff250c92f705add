package consistency_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kinformer/kinformer/controllers"
	"github.com/kinformer/kinformer/controllers/consistency"
)

// A StaleError, also wrapped in a sync's context, is what a controllers.WorkerPool takes
// for a skipped sync, waiting for the cache of its resource.
func TestStaleErrorIsASkip(t *testing.T) {
	err := fmt.Errorf("syncing ns/web: %w", &consistency.StaleError{Owner: "ns/web", Resource: "pods", Wrote: "12", Read: "10"})
	var skipped controllers.Skipped
	if !errors.As(err, &skipped) {
		t.Fatalf("%v is not a controllers.Skipped", err)
	}
	if got := skipped.SkippedFor(); got != "pods" {
		t.Errorf("SkippedFor = %q, want the cache that is behind, pods", got)
	}
}
