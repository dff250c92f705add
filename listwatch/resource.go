package listwatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/jsonscan"
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
	// proto: reads ask for protobuf (Config.Encoding and T decide; the answer's
	// Content-Type says what came). protoErr: T cannot be read as the encoding demands.
	proto    bool
	protoErr error
}

// Media types asking the apiserver for metadata only (PartialObjectMetadata).
const (
	metadataListAccept   = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	metadataObjectAccept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
)

// MetadataOnly returns a handle whose List, Watch and Get ask for metadata only: each
// object arrives as a PartialObjectMetadata (kind, apiVersion meta.k8s.io/v1, metadata),
// which is what an informer that reads only names, labels and owners needs, at a
// fraction of the bytes. Use it with T = *object.Raw. It is asked in protobuf unless the
// Config's Encoding is json: there are no members to read by name in it.
func (r *Resource[T]) MetadataOnly() *Resource[T] {
	c := *r
	c.metadataOnly = true
	c.proto, c.protoErr = r.client.cfg.Encoding != EncodingJSON, nil
	if err := codec.ProtobufError[T](); err != nil {
		c.proto = false
		if r.client.cfg.Encoding == EncodingProtobuf {
			c.protoErr = r.protoErr
		}
	}
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
	proto, err := protobufChoice[T](c.cfg.Encoding)
	return &Resource[T]{client: c, info: info, namespace: namespace, proto: proto, protoErr: err}
}

// Info returns what discovery said about the resource.
func (r *Resource[T]) Info() ResourceInfo { return r.info }

// Namespace returns the namespace the handle is bound to.
func (r *Resource[T]) Namespace() string { return r.namespace }

// List fetches one page. Follow Continue in the returned metadata for the next one; a
// 410 (object.IsGone) means the continue token expired and the list must start over.
// An object over opts.MaxFrameSize fails the page with an error wrapping
// ErrFrameTooLarge (see decodeListReading, and decodeProtoList for a page in protobuf).
func (r *Resource[T]) List(ctx context.Context, opts ListOptions) (*object.List[T], error) {
	var list *object.List[T]
	onContinue := opts.OnContinue
	if onContinue != nil { // once, though a retried request decodes the metadata again
		var once sync.Once
		onContinue = func(token string) { once.Do(func() { opts.OnContinue(token) }) }
	}
	if r.protoErr != nil {
		return nil, r.protoErr
	}
	err := r.client.doRead(ctx, request{method: http.MethodGet, path: r.info.Path(r.namespace, "", ""), query: opts.query(), accept: r.acceptFor(true)},
		func(contentType string, body io.Reader) error {
			decodeList := decodeListReading[T]
			if isProtobuf(contentType) {
				decodeList = decodeProtoList[T]
			}
			var err error
			if list, err = decodeList(body, opts.MaxFrameSize, opts.Decode, r.client.reading, onContinue); err != nil {
				return fmt.Errorf("decoding %s list: %w", r.info.Resource, err)
			}
			return nil
		})
	return list, err
}

// decodeListReading decodes a list page `{"kind":...,"metadata":{...},"items":[...]}` from body
// as it streams in: each member of the envelope, and each item, is read and decoded on
// its own, so that neither the page nor any value larger than max bytes (0:
// DefaultMaxFrameSize) is ever held whole.
//
// The bound is per object, not per page, because a page has no size a client can count
// on: a list at resourceVersion "0" is served from the apiserver's watch cache, which
// (before pagination from the cache) ignores limit and returns every object at once.
//
// It accepts what json.Unmarshal into object.List[T] accepts, with the same result,
// except for an item that is null, which no object can be made of (json.Unmarshal would
// leave a nil pointer in Items for the cache to trip over).
//
// The items are read as ra says (on a goroutine of their own, or on this one). onContinue,
// when not nil, is handed the page's continue token once the metadata that holds it is
// decoded (ListOptions.OnContinue).
func decodeListReading[T any](body io.Reader, max int, decode object.DecodeOptions, ra readAhead, onContinue func(string)) (*object.List[T], error) {
	if max <= 0 {
		max = DefaultMaxFrameSize
	}
	in := &budgetReader{r: body}
	d := &listDecoder{dec: json.NewDecoder(in), in: in, max: max, decode: decode, reading: ra}
	list := &object.List[T]{}
	switch tok, err := d.token("the list"); {
	case err != nil:
		return nil, err
	case tok == nil: // null: nothing to decode, as with json.Unmarshal
		return list, d.end()
	case tok != json.Delim('{'):
		return nil, fmt.Errorf("a list is a JSON object, not %v", tok)
	}
	for d.dec.More() {
		tok, err := d.token("a member name")
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok { // Token yields nothing else where a member name is due
			return nil, fmt.Errorf("a member name is a string, not %v", tok)
		}
		if strings.EqualFold(key, "items") { // encoding/json matches names this way
			items, err := decodeItems[T](d)
			if err != nil {
				return nil, err
			}
			// What follows the items (usually just the closing brace) is decoded in one
			// piece into the list, which Items, set after, is not part of.
			if err := d.tail(list); err != nil {
				return nil, err
			}
			list.Items = items
			return list, nil
		}
		// Any other member (kind, apiVersion, metadata, or one List does not have) is
		// decoded on its own into the list, as json.Unmarshal would do in turn.
		raw, err := d.value("the list's " + strconv.Quote(key))
		if err != nil {
			return nil, err
		}
		member, err := json.Marshal(map[string]json.RawMessage{key: raw})
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(member, list); err != nil {
			return nil, err
		}
		if onContinue != nil && list.Continue != "" && strings.EqualFold(key, "metadata") {
			onContinue(list.Continue)
			onContinue = nil
		}
	}
	if _, err := d.token("the list's end"); err != nil { // the closing '}'
		return nil, err
	}
	return list, d.end()
}

// decodeItems decodes the items array, one object at a time; d.tail then decodes the rest. The json.Decoder, which would scan each item
// twice and copy it, stops at the array's opening bracket: kinformer's frame reader then
// finds each item (bounded by max, as a watch event is), and each is validated once and
// decoded once, as a watch event is.
func decodeItems[T any](d *listDecoder) ([]T, error) {
	switch tok, err := d.token("items"); {
	case err != nil:
		return nil, err
	case tok == nil:
		return nil, nil
	case tok != json.Delim('['):
		return nil, fmt.Errorf("items is a JSON array, not %v", tok)
	}
	d.in.limit = math.MaxInt64 // the frame reader bounds each item itself
	src := &itemSource{fr: newFrameReader(io.MultiReader(d.dec.Buffered(), d.in), d.max)}
	// As a watch is (see prefetcher): read ahead, the items are read, split and
	// validated on a goroutine of their own while the ones before them are decoded here.
	p := d.reading.start(context.Background(), src, nil)
	if p != nil {
		defer p.close() // after an error: the reader stops once the caller closes the body
	}
	items := []T{}
	for {
		f, err := nextFrame(p, src, nil)
		if err == io.EOF {
			break // a prefetcher has stopped: src is this goroutine's again
		}
		if err != nil {
			return nil, err
		}
		if !f.valid && !jsonscan.Valid(f.data) {
			var v any
			return nil, fmt.Errorf("item %d: %w", len(items), json.Unmarshal(f.data, &v))
		}
		obj, err := codec.DecodeUnvalidated[T](f.data, d.decode)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", len(items), err)
		}
		items = append(items, obj)
	}
	d.rest = src.fr.rest()
	return items, nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// listDecoder reads a list page value by value, each within the size bound.
type listDecoder struct {
	dec     *json.Decoder
	in      *budgetReader
	max     int
	decode  object.DecodeOptions // for each item
	scratch json.RawMessage      // the current value; decoded objects never retain it
	rest    io.Reader            // after the items array: what the frame reader left
	// reading: how the items are read (see decodeItems).
	reading readAhead
}

// tail decodes what follows the items member (further members, the closing brace, white
// space) into list, as json.Unmarshal would: the members as the object they end, at most
// max bytes of them.
func (d *listDecoder) tail(list any) error {
	r := d.rest
	if r == nil { // items was null: the json.Decoder is still reading
		r = io.MultiReader(d.dec.Buffered(), d.in)
		d.in.limit = math.MaxInt64
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(d.max)+listValueSlack+1))
	switch {
	case err != nil:
		return err
	case len(b) > d.max+listValueSlack:
		return fmt.Errorf("the list after its items is %s: %w", tooLargeReason(d.max), ErrFrameTooLarge)
	}
	i := jsonscan.SkipSpace(b, 0)
	switch {
	case i < len(b) && b[i] == ',':
		if j := jsonscan.SkipSpace(b, i+1); j >= len(b) || b[j] != '"' {
			return errors.New("the list after its items: a comma must be followed by a member")
		}
		b[i] = '{' // the remaining members, as an object of their own
	case i < len(b) && b[i] == '}':
		b = append([]byte("{"), b[i:]...)
	default:
		return fmt.Errorf("the list after its items: %w", unexpectedEOF(io.EOF))
	}
	return json.Unmarshal(b, list)
}

// listValueSlack is what the decoder may read past a value of the maximum size: the
// separators and white space before it. Beyond it, the value counts as too large.
const listValueSlack = 4 << 10

// allow lets the decoder read one more value (or token) of at most max bytes.
func (d *listDecoder) allow() {
	d.in.limit = d.dec.InputOffset() + int64(d.max) + listValueSlack
}

// token returns the next token (a delimiter, or a member name); what names it in errors.
func (d *listDecoder) token(what string) (json.Token, error) {
	d.allow()
	tok, err := d.dec.Token()
	return tok, d.sized(what, err)
}

// value returns the next value, valid until the next call.
func (d *listDecoder) value(what string) (json.RawMessage, error) {
	d.allow()
	if err := d.dec.Decode(&d.scratch); err != nil {
		return nil, d.sized(what, err)
	}
	if len(d.scratch) > d.max {
		return nil, d.sized(what, errOverBudget)
	}
	return d.scratch, nil
}

// sized turns running out of budget into the error that says which value was too large.
func (d *listDecoder) sized(what string, err error) error {
	if errors.Is(err, errOverBudget) {
		return fmt.Errorf("%s is %s: %w", what, tooLargeReason(d.max), ErrFrameTooLarge)
	}
	return err
}

// end checks that nothing but white space follows the list, as json.Unmarshal does.
func (d *listDecoder) end() error {
	d.allow()
	if _, err := d.dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the list")
		}
		return d.sized("the data after the list", err)
	}
	return nil
}

// errOverBudget is a read past the budget of the value being decoded.
var errOverBudget = errors.New("value over its size budget")

// budgetReader hands out bytes up to offset limit and fails past it, so that a
// json.Decoder reading one value never buffers more than that value's budget.
type budgetReader struct {
	r     io.Reader
	read  int64 // bytes handed out so far
	limit int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	left := b.limit - b.read
	if left <= 0 {
		return 0, errOverBudget
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
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
	body, ct, err := encodeBody(obj, r.info)
	if err != nil {
		var zero T
		return zero, err
	}
	b, rct, err := r.client.doTyped(ctx, request{method: http.MethodPost, path: r.info.Path(ns, "", ""), body: body, contentType: ct, accept: r.writeAccept(ct)})
	if err != nil {
		var zero T
		return zero, err
	}
	return decodeObject[T](rct, b)
}

// Update replaces obj (PUT). With metadata.resourceVersion set it fails with a Conflict
// when the object changed since it was read. Fields T does not model are sent back as
// they were read, so nothing is dropped; a T that drops them (a projection) is refused.
func (r *Resource[T]) Update(ctx context.Context, obj T) (T, error) {
	return r.put(ctx, obj, "")
}

// UpdateStatus replaces obj's status through the /status subresource.
func (r *Resource[T]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	return r.put(ctx, obj, "status")
}

func (r *Resource[T]) put(ctx context.Context, obj T, sub string) (T, error) {
	if err := writable[T](); err != nil {
		var zero T
		return zero, err
	}
	body, ct, err := encodeBody(obj, r.info)
	if err != nil {
		var zero T
		return zero, err
	}
	m := obj.Meta()
	return r.callNS(ctx, m.Namespace, http.MethodPut, m.Name, sub, body, ct)
}

// writable refuses to write back a T that does not keep every member it was decoded
// from (a projection: see object.CheckProjection, codec.Lossless): put whole, it would
// drop the others.
// Creating one is no loss: the new object is what its fields say.
func writable[T any]() error {
	if typ := reflect.TypeFor[T](); !codec.Lossless(typ) {
		return fmt.Errorf("listwatch: %v holds only some of the object's members: an Update of it would drop the others; "+
			"change the object with Patch, or Update it as *object.Raw or the model's type, which keep every member "+
			"(a type with MarshalJSON and UnmarshalJSON of its own that keep them may be written too)", typ)
	}
	return nil
}

// writeAccept is the Accept header of a write whose body is of type ct: an object
// written in protobuf is answered in protobuf, which keeps what it carries.
func (r *Resource[T]) writeAccept(ct string) string {
	if ct == protobufMediaType {
		return protobufAccept
	}
	return ""
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
	accept := r.writeAccept(ct)
	if method == http.MethodGet {
		if r.protoErr != nil {
			return zero, r.protoErr
		}
		accept = r.acceptFor(false)
	}
	b, rct, err := r.client.doTyped(ctx, request{method: method, path: r.info.Path(ns, name, sub), body: body, contentType: ct, accept: accept})
	if err != nil {
		return zero, err
	}
	return decodeObject[T](rct, b)
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
func (r *Resource[T]) Watch(ctx context.Context, opts WatchOptions) (Stream[T], error) {
	if r.protoErr != nil {
		return nil, r.protoErr
	}
	path := r.info.Path(r.namespace, "", "")
	var (
		src frameSource
		err error
	)
	if opts.WebSocket {
		// JSON: the apiserver's websocket watch sends text messages of JSON events.
		src, err = r.client.openWebSocket(ctx, path, opts, r.accept(false))
	} else {
		src, err = r.client.openStream(ctx, path, opts, r.acceptFor(false))
	}
	if err != nil {
		return nil, err
	}
	return newWatchReading[T](ctx, src, opts, r.client.reading), nil
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
	if isProtobuf(resp.Header.Get("Content-Type")) {
		in := newProtoReader(resp.Body, opts.MaxFrameSize)
		in.watchReads()
		return &protoWatchSource{body: resp.Body, in: in, cancel: cancel}, nil
	}
	frames := newFrameReader(resp.Body, opts.MaxFrameSize)
	frames.watchReads()
	return &bodySource{body: resp.Body, frames: frames, cancel: cancel}, nil
}
