package object

import (
	"reflect"
	"unsafe"
)

// DeepCopy returns an independent copy of obj, for callers that need to change an object
// they got from a cache (cached objects are shared and read-only): its pointers, slices
// and maps are new, the shared parts of its conditions, containers and container
// statuses too, and changing the copy changes nothing the original reaches. The unknown
// members are shared, as copies of an Unknown always are: it is never written in place.
// It copies in memory, whatever encoding obj was read in (it once went through JSON,
// which an object read in protobuf cannot take).
func DeepCopy[T any](obj T) T {
	var out T
	dst := reflect.ValueOf(&out).Elem()
	dst.Set(reflect.ValueOf(&obj).Elem())
	deepen(dst)
	return out
}

// packagePath is this package's import path: the unexported pointers DeepCopy copies
// are to this package's types (the shared parts), not to another's (a time's location).
const packagePath = "github.com/kinformer/kinformer/object"

// deepen replaces, in v (a settable copy), every pointer, slice and map that exported
// fields reach by a copy of its own.
func deepen(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(v.Elem())
		deepen(c.Elem())
		v.Set(c)
	case reflect.Slice:
		if v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 && v.Len() == 0 {
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		for i := range c.Len() {
			deepen(c.Index(i))
		}
		v.Set(c)
	case reflect.Map:
		if v.IsNil() {
			return
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			deepen(e)
			c.SetMapIndex(it.Key(), e)
		}
		v.Set(c)
	case reflect.Array:
		for i := range v.Len() {
			deepen(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() {
				if f.Kind() != reflect.Pointer || f.Type().Elem().PkgPath() != packagePath {
					// A time's seconds, a Members' buffer, a time.Time's location: values,
					// or never written.
					continue
				}
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem() // a part's pointer
			}
			deepen(f)
		}
	}
}
