package object

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/kinformer/kinformer/internal/codec"
)

// A projection is a type of an embedder's own that holds only the members a tool reads,
// for a cache that weighs only those. Declare the members as the JSON has them, nested
// structs and slices included, with the metadata in a field (not embedded) and a Meta
// method:
//
//	type PodImages struct {
//		Metadata object.ObjectMeta `json:"metadata"`
//		Spec     struct {
//			Containers []struct {
//				Image string `json:"image"`
//			} `json:"containers"`
//		} `json:"spec"`
//	}
//
//	func (p *PodImages) Meta() *object.ObjectMeta { return &p.Metadata }
//
// informer.For[*PodImages] caches pods as PodImages: each decoded straight from the
// stream by the same tables as the model's types (members it does not hold are skipped,
// never built), typed (p.Spec.Containers[0].Image), read-only as any cached object.
// Writing one back with Update would drop what it does not hold, so listwatch refuses
// it: change the object with Patch, or Update it as the model's type or *object.Raw,
// which keep every member. (ObjectMeta is not embedded because its JSON methods would
// then be the projection's, and decode the whole object as metadata.)

// CheckProjection says what keeps T from being cached, or nil: T must point to a struct
// whose metadata is an ObjectMeta in a field of its own named "metadata" in JSON, not
// embedded (see above). The model's own types pass; informer.For and informer.New call
// it.
func CheckProjection[T Object]() error {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%v is not a pointer to a struct", typ)
	}
	st := typ.Elem()
	if st == reflect.TypeFor[ObjectMeta]() {
		return fmt.Errorf("%v is an object's metadata, not an object: cache *object.Raw for metadata and the rest", typ)
	}
	if codec.Registered(st) {
		return nil // the model's types embed ObjectMeta, with JSON methods of their own
	}
	meta := reflect.TypeFor[ObjectMeta]()
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Anonymous && (f.Type == meta || f.Type == reflect.PointerTo(meta)) {
			return fmt.Errorf("%v embeds object.ObjectMeta: its JSON methods become the type's and would decode the whole object as metadata; "+
				"hold it in a field (Metadata object.ObjectMeta `json:\"metadata\"`) and give %v a Meta method", typ, typ)
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == "metadata" && f.Type == meta {
			return nil
		}
	}
	return fmt.Errorf("%v has no field Metadata object.ObjectMeta `json:\"metadata\"`: an object's metadata must be one (see object.CheckProjection)", typ)
}
