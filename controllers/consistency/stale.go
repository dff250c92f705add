package consistency

import "fmt"

// StaleError is Ready's answer while a cache has not seen one of the owner's writes.
// controllers.WorkerPool recognises it (errors.As): it requeues the key with its rate
// limit and counts a stale sync rather than a failed one.
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
