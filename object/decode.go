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
	// ShareMaps hands out, for the metadata's labels and annotations, a map already
	// built for the same JSON text by an earlier decode with ShareMaps (see
	// sharedmaps.go), instead of building another. The pods of one ReplicaSet, and the
	// states of one object from update to update, then hold one map. Objects decoded so
	// must not have those maps changed: use it where objects are read-only, as in an
	// informer's cache. (Types of other packages decode as with DecodeValid.)
	ShareMaps bool
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
		if t := tables[rt.Elem()]; opts != (DecodeOptions{}) && t != nil && t.variants != nil {
			err := decodeKeeping(data, v.Interface(), t.variants[opts])
			return v.Interface().(T), err
		}
		if k, ok := v.Interface().(keeper); ok {
			err := k.decodeKeep(data)
			return v.Interface().(T), err
		}
	}
	err := json.Unmarshal(data, &out)
	if m, ok := any(out).(interface{ Meta() *ObjectMeta }); ok && opts.DropManagedFields && err == nil {
		if meta := m.Meta(); meta != nil {
			meta.Unknown.Delete("managedFields")
		}
	}
	return out, err
}
