package listwatch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/kinformer/kinformer/object"
)

// Resource is a typed handle on one resource in one namespace ("" means all namespaces,
// or a cluster-scoped resource). T is the pointer type objects decode into, such as
// *object.Pod or *object.Raw.
type Resource[T object.Object] struct {
	client       *Client
	info         ResourceInfo
	namespace    string
	metadataOnly bool
}

// Media types asking the apiserver for metadata only (PartialObjectMetadata).
const (
	metadataListAccept   = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	metadataObjectAccept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
)

// MetadataOnly returns a handle whose List, Watch and Get ask for metadata only: each
// object arrives as a PartialObjectMetadata (kind, apiVersion meta.k8s.io/v1, metadata),
// which is what an informer that reads only names, labels and owners needs, at a
// fraction of the bytes. Use it with T = *object.Raw.
func (r *Resource[T]) MetadataOnly() *Resource[T] {
	c := *r
	c.metadataOnly = true
	return &c
}

func (r *Resource[T]) accept(list bool) string {
	switch {
	case !r.metadataOnly:
		return ""
	case list:
		return metadataListAccept
	}
	return metadataObjectAccept
}

// For returns the typed handle of info in namespace.
func For[T object.Object](c *Client, info ResourceInfo, namespace string) *Resource[T] {
	if !info.Namespaced {
		namespace = ""
	}
	return &Resource[T]{client: c, info: info, namespace: namespace}
}

// Info returns what discovery said about the resource.
func (r *Resource[T]) Info() ResourceInfo { return r.info }

// Namespace returns the namespace the handle is bound to.
func (r *Resource[T]) Namespace() string { return r.namespace }

// List fetches one page. Follow Continue in the returned metadata for the next one; a
// 410 (object.IsGone) means the continue token expired and the list must start over.
func (r *Resource[T]) List(ctx context.Context, opts ListOptions) (*object.List[T], error) {
	b, err := r.client.do(ctx, request{method: http.MethodGet, path: r.info.Path(r.namespace, "", ""), query: opts.query(), accept: r.accept(true)})
	if err != nil {
		return nil, err
	}
	var list object.List[T]
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("decoding %s list: %w", r.info.Resource, err)
	}
	return &list, nil
}

// ListAll follows continue tokens until the last page, calling fn for each page, and
// returns the resourceVersion of the first page (the snapshot every page belongs to).
func (r *Resource[T]) ListAll(ctx context.Context, opts ListOptions, fn func(*object.List[T]) error) (string, error) {
	rv := ""
	for {
		page, err := r.List(ctx, opts)
		if err != nil {
			return "", err
		}
		if rv == "" {
			rv = page.ResourceVersion
		}
		if err := fn(page); err != nil {
			return "", err
		}
		if page.Continue == "" {
			return rv, nil
		}
		// The continue token carries the snapshot; resourceVersion must not be repeated.
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = page.Continue, "", ""
	}
}

// Get fetches one object.
func (r *Resource[T]) Get(ctx context.Context, name string) (T, error) {
	return r.call(ctx, http.MethodGet, name, "", nil, "")
}

// Create creates obj in its namespace (or the handle's, when obj has none).
func (r *Resource[T]) Create(ctx context.Context, obj T) (T, error) {
	ns := obj.Meta().Namespace
	if ns == "" {
		ns = r.namespace
	}
	body, err := json.Marshal(obj)
	if err != nil {
		var zero T
		return zero, err
	}
	b, err := r.client.do(ctx, request{method: http.MethodPost, path: r.info.Path(ns, "", ""), body: body, contentType: "application/json"})
	if err != nil {
		var zero T
		return zero, err
	}
	return decode[T](b)
}

// Update replaces obj (PUT). With metadata.resourceVersion set it fails with a Conflict
// when the object changed since it was read. Fields T does not model are sent back as
// they were read, so nothing is dropped.
func (r *Resource[T]) Update(ctx context.Context, obj T) (T, error) {
	return r.put(ctx, obj, "")
}

// UpdateStatus replaces obj's status through the /status subresource.
func (r *Resource[T]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	return r.put(ctx, obj, "status")
}

func (r *Resource[T]) put(ctx context.Context, obj T, sub string) (T, error) {
	body, err := json.Marshal(obj)
	if err != nil {
		var zero T
		return zero, err
	}
	m := obj.Meta()
	return r.callNS(ctx, m.Namespace, http.MethodPut, m.Name, sub, body, "application/json")
}

// Patch applies patch to the named object; sub is "" or a subresource such as "status".
// A merge patch that sets metadata.resourceVersion is applied only at that version.
func (r *Resource[T]) Patch(ctx context.Context, name string, pt PatchType, patch []byte, sub string) (T, error) {
	return r.call(ctx, http.MethodPatch, name, sub, patch, string(pt))
}

// Delete deletes the named object.
func (r *Resource[T]) Delete(ctx context.Context, name string, opts DeleteOptions) error {
	body, err := json.Marshal(opts)
	if err != nil {
		return err
	}
	_, err = r.client.do(ctx, request{method: http.MethodDelete, path: r.info.Path(r.namespace, name, ""), body: body, contentType: "application/json"})
	return err
}

func (r *Resource[T]) call(ctx context.Context, method, name, sub string, body []byte, ct string) (T, error) {
	return r.callNS(ctx, r.namespace, method, name, sub, body, ct)
}

func (r *Resource[T]) callNS(ctx context.Context, ns, method, name, sub string, body []byte, ct string) (T, error) {
	if ns == "" {
		ns = r.namespace
	}
	var zero T
	if name == "" {
		return zero, fmt.Errorf("%s %s: an object name is required", method, r.info.Resource)
	}
	if r.info.Namespaced && ns == "" {
		return zero, fmt.Errorf("%s %s %q: a namespace is required", method, r.info.Resource, name)
	}
	accept := ""
	if method == http.MethodGet {
		accept = r.accept(false)
	}
	b, err := r.client.do(ctx, request{method: method, path: r.info.Path(ns, name, sub), body: body, contentType: ct, accept: accept})
	if err != nil {
		return zero, err
	}
	return decode[T](b)
}

func decode[T any](b []byte) (T, error) {
	var obj T
	if err := json.Unmarshal(b, &obj); err != nil {
		return obj, fmt.Errorf("decoding response: %w", err)
	}
	return obj, nil
}

// Watch opens a watch stream. Errors before the stream starts (403, 410 answered as a
// status, a refused connection) are returned here; errors on the stream come from Next.
func (r *Resource[T]) Watch(ctx context.Context, opts WatchOptions) (*Watch[T], error) {
	path := r.info.Path(r.namespace, "", "")
	var (
		src frameSource
		err error
	)
	if opts.WebSocket {
		src, err = r.client.openWebSocket(ctx, path, opts, r.accept(false))
	} else {
		src, err = r.client.openStream(ctx, path, opts, r.accept(false))
	}
	if err != nil {
		return nil, err
	}
	return newWatch[T](ctx, src, opts), nil
}

// openStream starts a chunked HTTP watch. Watches skip the rate limiter: they are long
// lived and their number is bounded by the informers, not by a loop.
func (c *Client) openStream(ctx context.Context, path string, opts WatchOptions, accept string) (frameSource, error) {
	sctx, cancel := context.WithCancel(ctx)
	resp, err := c.send(sctx, request{method: http.MethodGet, path: path, query: opts.query(), accept: accept})
	if err != nil {
		cancel()
		return nil, err
	}
	return &bodySource{body: resp.Body, frames: newFrameReader(resp.Body, opts.MaxFrameSize), cancel: cancel}, nil
}
