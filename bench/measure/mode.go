package measure

import (
	"net/http"
	"path"
	"sync/atomic"
)

// ModeObserver tells from the requests an engine sends which initial-state mode it used,
// for an engine that does not say so itself (client-go falls back from a streaming list
// to a list quietly). Put it in the client's transport (Wrap) and read Mode once synced.
type ModeObserver struct {
	resource  string
	list      atomic.Bool
	streaming atomic.Bool
}

// NewModeObserver observes the requests for resource ("pods", ...).
func NewModeObserver(resource string) *ModeObserver { return &ModeObserver{resource: resource} }

// Observe classifies one request: a GET of the resource's collection without watch is a
// list; a watch with sendInitialEvents=true is a streaming list. Others are ignored.
func (o *ModeObserver) Observe(r *http.Request) {
	if r.Method != http.MethodGet || path.Base(r.URL.Path) != o.resource {
		return
	}
	q := r.URL.Query()
	switch w := q.Get("watch"); {
	case w != "1" && w != "true":
		o.list.Store(true)
	case q.Get("sendInitialEvents") == "true":
		o.streaming.Store(true)
	}
}

// Mode is ModeListWatch if a list was sent (so also after a streaming list fell back),
// else ModeStreamingList if a streaming list was, else "".
func (o *ModeObserver) Mode() string {
	switch {
	case o.list.Load():
		return ModeListWatch
	case o.streaming.Load():
		return ModeStreamingList
	}
	return ""
}

// Wrap returns rt observing every request first; its signature is that of client-go's
// rest.Config.WrapTransport.
func (o *ModeObserver) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		o.Observe(r)
		return rt.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
