package listwatch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// A Guard vets every request that would change the cluster (POST, PUT, PATCH, DELETE) at
// the moment it is sent, each attempt of it: after the rate limiter's wait and any retry
// delay, right before it goes on the wire. A member of a shard group uses one to refuse
// writes in namespaces it no longer acts in, or once its renew deadline has passed
// (shardgroup.Member.Guard): a check made earlier, when the sync began, would not stop a
// process that was frozen between that check and the write.
type Guard interface {
	// Admit is asked before w is sent. An error refuses it: nothing is sent and the
	// caller gets the error, wrapped. Otherwise done must be called once the request is
	// over: the server has answered it or it has failed; and within, when above zero, is
	// how long the guard's leave lasts: the attempt is cancelled if it has not been
	// answered by then (a connection being set up, a server that hangs), so that it
	// cannot go on the wire later.
	Admit(w Write) (done func(), within time.Duration, err error)
}

// Write is a mutating request as a Guard sees it.
type Write struct {
	Method string
	// Namespace is the namespace of the object written, "" for a cluster-scoped one (a
	// Namespace itself included).
	Namespace string
	// Resource, Name and Subresource are the rest of the object's path ("pods",
	// "web-1", "status"), as far as it goes; Path is all of it.
	Resource, Name, Subresource string
	Path                        string
}

func (w Write) String() string {
	obj := w.Resource
	if w.Name != "" {
		obj += " " + w.Name
	}
	if w.Subresource != "" {
		obj += "/" + w.Subresource
	}
	if w.Namespace != "" {
		obj += " in namespace " + w.Namespace
	}
	return w.Method + " " + obj
}

// WithGuard returns a client that sends its mutating requests only when g admits them,
// and shares everything else with c: connections, credentials, rate limiter and
// discovery cache. c itself is unchanged.
func (c *Client) WithGuard(g Guard) *Client {
	d := *c
	d.guard = g
	return &d
}

// mutating reports whether method changes something.
func mutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// writeOf reads the object a request's path names: /api/v1/[namespaces/NS/]RES[/NAME[/SUB]]
// or /apis/GROUP/VERSION/[namespaces/NS/]RES[/NAME[/SUB]]. /api/v1/namespaces/NAME is
// the Namespace NAME, cluster-scoped.
func writeOf(method, path string) Write {
	w := Write{Method: method, Path: path}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return w
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		w.Namespace, parts = parts[1], parts[2:]
	}
	for i, p := range parts {
		switch i {
		case 0:
			w.Resource = p
		case 1:
			w.Name = p
		case 2:
			w.Subresource = p
		}
	}
	return w
}

// admit asks the client's guard about r, if it has one and r changes something, and
// returns what to call once the attempt is over and the context to send it with: req's,
// bounded by the guard's leave. cancel must be called once the answer has been read.
func (c *Client) admit(req *http.Request, r request) (sent *http.Request, done, cancel func(), err error) {
	if c.guard == nil || !mutating(r.method) {
		return req, func() {}, func() {}, nil
	}
	done, within, err := c.guard.Admit(writeOf(r.method, r.path))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s %s: not sent: %w", r.method, r.path, err)
	}
	if within <= 0 {
		return req, done, func() {}, nil
	}
	ctx, cancelCtx := context.WithTimeout(req.Context(), within)
	return req.WithContext(ctx), done, cancelCtx, nil
}

// cancelOnClose ends a request's own context once its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
