package object

import (
	"reflect"

	"github.com/kinformer/kinformer/internal/codec"
)

// This package's types are encoded and decoded by internal/codec: the MarshalJSON and
// UnmarshalJSON of each type is one line that calls it. The codec reads the types'
// fields and json tags by reflection; what else it must know of them is this schema,
// which it is handed once, when the package loads, and builds its tables from.
var schema = codec.Schema{
	// What informers and controllers decode. The codec also makes tables for every
	// struct these reach that has an Unknown field (ObjectMeta, PodSpec, Condition, ...).
	Types: []reflect.Type{
		reflect.TypeFor[Pod](), reflect.TypeFor[ReplicaSet](), reflect.TypeFor[Deployment](),
		reflect.TypeFor[Lease](), reflect.TypeFor[Raw](),
	},
	Unknown: reflect.TypeFor[Unknown](),
	// An owner reference keeps no unknown members, but nearly every object has one: the
	// codec decodes it rather than hand it to encoding/json.
	Direct: []reflect.Type{reflect.TypeFor[OwnerReference]()},
	// Conditions, containers and their statuses keep what many pods have alike behind a
	// pointer.
	Headed:   []reflect.Type{reflect.TypeFor[PodCondition](), reflect.TypeFor[Container](), reflect.TypeFor[ContainerStatus]()},
	Text:     []codec.TextType{codec.Text((*Time).parse)},
	Messages: protobufMessages,
	Metadata: codec.Metadata{
		Type:            reflect.TypeFor[ObjectMeta](),
		Member:          "metadata",
		Droppable:       "managedFields",
		DroppableNumber: ManagedFieldsNumber,
		SharedMaps:      []string{"labels", "annotations"},
		SharedLists:     []string{"ownerReferences"},
		NotInterned:     []string{"name", "uid", "resourceVersion"},
	},
	ApplyOptions: applyOptions,
}

func init() { codec.Register(&schema) }

// applyOptions does to an object of another package's type, which encoding/json decoded
// (the codec has no table for it), what decoding with opts does to this package's types.
func applyOptions(v any, opts DecodeOptions) {
	obj, ok := v.(Object)
	if !ok {
		return
	}
	if m := obj.Meta(); m != nil {
		if opts.DropManagedFields {
			m.Unknown.Delete("managedFields")
			m.Unknown.DeleteProtobufField(ManagedFieldsNumber)
		}
		if opts.Maps != nil {
			m.Labels, m.Annotations = opts.Maps.Share(m.Labels), opts.Maps.Share(m.Annotations)
		}
	}
}
