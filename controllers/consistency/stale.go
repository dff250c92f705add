package consistency

import "fmt"

// StaleError is Ready's answer while a cache has not seen one of the owner's writes. It is
// a controllers.Skipped: a controllers.WorkerPool retries the key with its skip backoff,
// apart from its failures, and counts a stale sync in
// kinformer_controller_stale_syncs_total{resource=Resource}.
type StaleError struct {
	Owner    string // the owner's key
	Resource string // the cache that is behind
	Wrote    string // the resourceVersion of the newest write of that resource
	Read     string // the resourceVersion the cache holds
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s: the %s cache is at resourceVersion %s, older than this controller's write at %s",
		e.Owner, e.Resource, e.Read, e.Wrote)
}

// SkippedFor is the resource whose cache is behind: what makes a StaleError a
// controllers.Skipped, without this package importing controllers (which imports it).
func (e *StaleError) SkippedFor() string { return e.Resource }
