package object

import (
	"encoding/json"
	"reflect"
)

// DecodeOptions change what DecodeValidWith keeps of an object.
type DecodeOptions struct {
	// DropManagedFields leaves metadata.managedFields out of the decoded object, as if
	// the server had not sent it. The server-side-apply bookkeeping is often a third of
	// an object's bytes and nothing a cache reads; dropping it while decoding spares
	// building it only to delete it (informer.StripManagedFields). An object encoded
	// again lacks it; every other member is kept.
	DropManagedFields bool
	// Maps, when set, gives the metadata's labels and annotations the table's map for
	// the same pairs when it has one (see MapTable), instead of building another: the
	// pods of one ReplicaSet, and the states of one object from update to update, then
	// hold one map. Objects decoded so must not have those maps changed: use it where
	// objects are read-only, as in an informer's cache, with a table of that cache's own.
	Maps *MapTable
}

// DecodeValid decodes data, which the caller has already checked is valid JSON (as
// json.Unmarshal of an enclosing document does), into a new T. For this package's types
// it skips encoding/json's second validation pass; anything else goes through
// json.Unmarshal.
func DecodeValid[T any](data []byte) (T, error) { return DecodeValidWith[T](data, DecodeOptions{}) }

// DecodeValidWith is DecodeValid with options.
func DecodeValidWith[T any](data []byte, opts DecodeOptions) (T, error) {
	var out T
	if rt := reflect.TypeFor[T](); rt.Kind() == reflect.Pointer {
		v := reflect.New(rt.Elem())
		if t := tables[rt.Elem()]; opts != (DecodeOptions{}) && t != nil && t.object {
			err := decodeKeeping(data, v.Interface(), t.variantFor(opts))
			return v.Interface().(T), err
		}
		if k, ok := v.Interface().(keeper); ok {
			err := k.decodeKeep(data)
			return v.Interface().(T), err
		}
	}
	err := json.Unmarshal(data, &out)
	if m, ok := any(out).(interface{ Meta() *ObjectMeta }); ok && opts != (DecodeOptions{}) && err == nil {
		if meta := m.Meta(); meta != nil {
			if opts.DropManagedFields {
				meta.Unknown.Delete("managedFields")
			}
			if opts.Maps != nil {
				meta.Labels, meta.Annotations = opts.Maps.Share(meta.Labels), opts.Maps.Share(meta.Annotations)
			}
		}
	}
	return out, err
}

// variantFor is t's copy that decodes as opts say (opts is not the zero value).
func (t *fieldTable) variantFor(opts DecodeOptions) *fieldTable {
	if opts.Maps == nil {
		return t.dropped
	}
	return opts.Maps.variant(t, opts.DropManagedFields)
}
