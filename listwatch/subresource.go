package listwatch

import (
	"context"
	"fmt"
	"net/http"
)

// CreateSubresource POSTs body to the subresource sub of the named object
// (.../NAME/SUB) and returns the response body. It is for the subresources that take an
// object of another kind than the resource's own and answer with yet another, such as a
// pod's "binding" (a Binding in, a Status out) or "eviction"; "status" and "scale" are
// written with Patch and UpdateStatus. API errors are *object.StatusError, as everywhere.
func (r *Resource[T]) CreateSubresource(ctx context.Context, name, sub string, body []byte) ([]byte, error) {
	// Without a name, a subresource or a namespace, the path would name something else
	// (the object, or the collection) and the server would answer for that.
	switch {
	case name == "" || sub == "":
		return nil, fmt.Errorf("POST %s: an object name and a subresource are required", r.info.Resource)
	case r.info.Namespaced && r.namespace == "":
		return nil, fmt.Errorf("POST %s %q/%s: a namespace is required", r.info.Resource, name, sub)
	}
	return r.client.do(ctx, request{method: http.MethodPost, path: r.info.Path(r.namespace, name, sub),
		body: body, contentType: "application/json"})
}
