// Package modelled strips what the object model does not model from an object, for
// tests that compare objects decoded from different encodings: read as JSON, the members
// the model does not hold are JSON; read as protobuf, they are protobuf fields; what the
// model holds must be the same.
package modelled

import (
	"reflect"
	"unsafe"

	"github.com/kinformer/kinformer/object"
)

// Of returns a copy of v (a pointer to an object or a part of one) without its unknown
// members, those of the shared parts (heads) included.
func Of[P any](v P) P {
	rv := reflect.ValueOf(v)
	cp := reflect.New(rv.Type().Elem())
	cp.Elem().Set(rv.Elem())
	strip(cp.Elem())
	return cp.Interface().(P)
}

// strip zeroes the Unknowns v reaches, copying what it goes through.
func strip(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[object.Unknown]() {
			v.SetZero()
			return
		}
		if v.Type() == reflect.TypeFor[object.Time]() {
			return
		}
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() { // a head: made settable, and replaced by a stripped copy
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			strip(f)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			cp := reflect.New(v.Type().Elem())
			cp.Elem().Set(v.Elem())
			strip(cp.Elem())
			v.Set(cp)
		}
	case reflect.Slice:
		if !v.IsNil() && v.Type().Elem().Kind() != reflect.Uint8 {
			cp := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(cp, v)
			for i := range cp.Len() {
				strip(cp.Index(i))
			}
			v.Set(cp)
		}
	}
}
