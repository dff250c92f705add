package object_test

import (
	"reflect"
	"unsafe"

	. "github.com/kinformer/kinformer/object"
)

// Shared by the protobuf tests (protobuf_test.go, protobuf_fuzz_test.go): what the model
// holds of an object, to compare objects decoded from different encodings.

// modelled returns a copy of v without its unknown members, heads included: what the
// model holds of an object, to compare across encodings.
func modelled[P any](v P) P {
	rv := reflect.ValueOf(v)
	cp := reflect.New(rv.Type().Elem())
	cp.Elem().Set(rv.Elem())
	stripUnknown(cp.Elem())
	return cp.Interface().(P)
}

var unknownType = reflect.TypeFor[Unknown]()

func stripUnknown(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == unknownType {
			v.Set(reflect.Zero(unknownType))
			return
		}
		if v.Type() == reflect.TypeFor[Time]() {
			return
		}
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() { // a head: made settable, and replaced by a stripped copy
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			stripUnknown(f)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			cp := reflect.New(v.Type().Elem())
			cp.Elem().Set(v.Elem())
			stripUnknown(cp.Elem())
			v.Set(cp)
		}
	case reflect.Slice:
		if !v.IsNil() && v.Type().Elem().Kind() != reflect.Uint8 {
			cp := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(cp, v)
			for i := range cp.Len() {
				stripUnknown(cp.Index(i))
			}
			v.Set(cp)
		}
	}
}
