package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"unsafe"

	"github.com/kinformer/kinformer/internal/jsonscan"
)

// The decodeFuncs of the fields a table does not decode itself: strings, numbers,
// booleans, pointers, slices, labels and annotations, raw JSON, and types with an
// UnmarshalJSON of their own. Each takes the plain common case itself and hands anything
// else to encoding/json, so that results and errors stay encoding/json's.

// decodeString decodes a string field. A string that objects share (intern) comes from
// the intern table when short, and from parts when long and parts is set.
// (parts.string would hand a short one to the intern table too: the test here spares
// the call on the path every name and label takes.)
func decodeString(typ reflect.Type, intern bool, parts *parts) decodeFunc {
	fallback := decodeFallback(typ)
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		if end, plain := jsonscan.String(data, i); plain {
			switch s := data[i+1 : end-1]; {
			case intern && parts != nil && len(s) > internMax:
				*(*string)(p) = parts.string(s)
			case intern:
				*(*string)(p) = internString(s)
			default:
				*(*string)(p) = string(data[i+1 : end-1])
			}
			return end, nil
		}
		return fallback(data, i, p)
	}
}

func decodeInt(typ reflect.Type) decodeFunc {
	fallback := decodeFallback(typ)
	bits := typ.Bits()
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		j := i
		if j < len(data) && data[j] == '-' {
			j++
		}
		digits := j
		var n int64
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			n = n*10 + int64(data[j]-'0')
			j++
		}
		if j == digits || j-digits > 18 || (j < len(data) && !jsonscan.EndsScalar(data[j])) {
			return fallback(data, i, p) // not a plain integer (or too long to add up safely)
		}
		if data[i] == '-' {
			n = -n
		}
		if bits == 32 {
			if n != int64(int32(n)) {
				return fallback(data, i, p)
			}
			*(*int32)(p) = int32(n)
		} else {
			*(*int64)(p) = n
		}
		return j, nil
	}
}

func decodeBool(typ reflect.Type) decodeFunc {
	fallback := decodeFallback(typ)
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		switch {
		case literalAt(data, i, "true"):
			*(*bool)(p) = true
			return i + 4, nil
		case literalAt(data, i, "false"):
			*(*bool)(p) = false
			return i + 5, nil
		}
		return fallback(data, i, p)
	}
}

// decodePointer allocates a new value for a pointer field; null makes it nil.
func decodePointer(typ reflect.Type, elem decodeFunc) decodeFunc {
	elemType := typ.Elem()
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		if isNull(data, i) {
			*(*unsafe.Pointer)(p) = nil
			return i + 4, nil
		}
		v := reflect.New(elemType).UnsafePointer()
		end, err := elem(data, i, v)
		if err != nil {
			return -1, err
		}
		*(*unsafe.Pointer)(p) = v
		return end, nil
	}
}

// decodeSlice decodes an array into a slice made at its size. The elements are decoded
// into a scratch slice first and then copied: counting them first instead read the
// array's text twice, and for a pod's containers that is a second pass over most of the
// spec, about 8% of a realistic watch event's CPU.
func decodeSlice(typ reflect.Type, elem decodeFunc) decodeFunc {
	fallback := decodeFallback(typ)
	size := typ.Elem().Size()
	// The arrays of the short lengths most slices have, made with reflect.New: one
	// allocation, where reflect.MakeSlice makes two (the array, and the header it returns
	// the slice in). Conditions, container statuses, mounts: a few a watch event.
	var arrays [9]reflect.Type
	for n := range arrays {
		arrays[n] = reflect.ArrayOf(n, typ.Elem())
	}
	// Scratch slices of typ, so that what is decoded into them is seen by the garbage
	// collector; a pool, because decoders run on many goroutines, and an array's
	// elements may hold arrays of the same type.
	var scratch sync.Pool
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		if data[i] != '[' {
			if isNull(data, i) {
				reflect.NewAt(typ, p).Elem().SetZero()
				return i + 4, nil
			}
			return fallback(data, i, p)
		}
		buf, _ := scratch.Get().(*scratchSlice)
		if buf == nil {
			buf = &scratchSlice{v: reflect.MakeSlice(typ, len(arrays), len(arrays))}
		}
		n := 0
		j := jsonscan.SkipSpace(data, i+1)
		for j < len(data) && data[j] != ']' {
			if n == buf.v.Len() {
				bigger := reflect.MakeSlice(typ, 2*n, 2*n)
				reflect.Copy(bigger, buf.v) // the old one goes as garbage
				buf.v = bigger
			}
			end, err := elem(data, j, unsafe.Add(buf.v.UnsafePointer(), uintptr(n)*size))
			n++ // decoded or half decoded: release clears it either way
			if err != nil {
				buf.release(&scratch, n)
				return -1, err
			}
			if j = jsonscan.SkipSpace(data, end); j < len(data) && data[j] == ',' {
				j = jsonscan.SkipSpace(data, j+1)
			}
		}
		if j >= len(data) || data[j] != ']' {
			buf.release(&scratch, n)
			return -1, errors.New("malformed JSON array")
		}
		var base unsafe.Pointer
		if n < len(arrays) {
			base = reflect.New(arrays[n]).UnsafePointer()
		} else {
			base = reflect.MakeSlice(typ, n, n).UnsafePointer()
		}
		*(*sliceHeader)(p) = sliceHeader{data: base, len: n, cap: n}
		reflect.Copy(reflect.NewAt(typ, p).Elem(), buf.v) // its first n: the new slice's length
		buf.release(&scratch, n)
		return j + 1, nil
	}
}

// scratchSlice is a scratch slice of decodeSlice, behind a pointer so that the pool
// takes it back without an allocation.
type scratchSlice struct{ v reflect.Value }

// release clears the first n elements, so that the scratch keeps no pointer into what
// it decoded, and puts it back in pool, unless it grew long: then it goes as garbage.
func (s *scratchSlice) release(pool *sync.Pool, n int) {
	if s.v.Len() > maxScratchElements {
		return
	}
	elem, size := s.v.Type().Elem(), s.v.Type().Elem().Size()
	for k := range n {
		reflect.NewAt(elem, unsafe.Add(s.v.UnsafePointer(), uintptr(k)*size)).Elem().SetZero()
	}
	pool.Put(s)
}

// maxScratchElements bounds the scratch slices decodeSlice keeps (one of 9 elements
// doubled three times): a longer array (a list of thousands of env entries) gets a
// scratch of its own, which goes with it.
const maxScratchElements = 72

// sliceHeader is how a slice is laid out; data is an unsafe.Pointer, so that writing
// one is seen by the garbage collector.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// decodeStringMap decodes labels and annotations: the map is made at its size, its keys
// and short values interned. A value that is not a string goes to encoding/json.
func decodeStringMap(data []byte, i int, p unsafe.Pointer) (int, error) {
	m := (*map[string]string)(p)
	if data[i] != '{' {
		if isNull(data, i) {
			*m = nil
			return i + 4, nil
		}
		return decodeStringMapFallback(data, i, p)
	}
	var pairs [16][2]string
	kvs := pairs[:0]
	j, more := jsonscan.FirstMember(data, i)
	for more {
		nameEnd, plain, v := jsonscan.Member(data, j)
		if v < 0 {
			return -1, errors.New("malformed JSON object")
		}
		key, ok := mapString(data, j, nameEnd, plain)
		valueEnd, plain := jsonscan.String(data, v)
		if !ok || valueEnd < 0 {
			return decodeStringMapFallback(data, i, p)
		}
		value, ok := mapString(data, v, valueEnd, plain)
		if !ok {
			return decodeStringMapFallback(data, i, p)
		}
		kvs = append(kvs, [2]string{key, value})
		if j, more = jsonscan.NextMember(data, valueEnd); j < 0 {
			return -1, errors.New("malformed JSON object")
		}
	}
	*m = make(map[string]string, len(kvs))
	for _, kv := range kvs {
		(*m)[kv[0]] = kv[1]
	}
	return j, nil
}

// mapString returns the string data[start:end], interned unless it has escapes; ok is
// false if it has escapes that do not decode.
func mapString(data []byte, start, end int, plain bool) (string, bool) {
	if plain {
		return internString(data[start+1 : end-1]), true
	}
	// Only here does a string escape to the heap for json.Unmarshal: declared as the
	// result, it was allocated on every call, escapes or not (12 allocations a watch
	// event of a realistic pod, whose annotations are rebuilt when one changes).
	var s string
	err := json.Unmarshal(data[start:end], &s)
	return s, err == nil
}

func decodeStringMapFallback(data []byte, i int, p unsafe.Pointer) (int, error) {
	*(*map[string]string)(p) = nil // a new map, as the fast path makes
	return decodeFallback(stringMapType)(data, i, p)
}

// decodeRawMessage keeps a copy of the value (null included, as encoding/json does).
func decodeRawMessage(data []byte, i int, p unsafe.Pointer) (int, error) {
	end := jsonscan.ValueEnd(data, i)
	if end < 0 {
		return -1, errors.New("malformed JSON value")
	}
	*(*json.RawMessage)(p) = bytes.Clone(data[i:end])
	return end, nil
}

// decodeUnmarshaler hands the value to the type's own UnmarshalJSON.
func decodeUnmarshaler(typ reflect.Type) decodeFunc {
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		end := jsonscan.ValueEnd(data, i)
		if end < 0 {
			return -1, errors.New("malformed JSON value")
		}
		return end, reflect.NewAt(typ, p).Interface().(json.Unmarshaler).UnmarshalJSON(data[i:end])
	}
}

// decodeFallback decodes the value with encoding/json: for what the fast paths do not
// take, so that results and errors are encoding/json's.
func decodeFallback(typ reflect.Type) decodeFunc {
	return func(data []byte, i int, p unsafe.Pointer) (int, error) {
		end := jsonscan.ValueEnd(data, i)
		if end < 0 {
			return -1, errors.New("malformed JSON value")
		}
		return end, json.Unmarshal(data[i:end], reflect.NewAt(typ, p).Interface())
	}
}

func isNull(data []byte, i int) bool { return literalAt(data, i, "null") }

// literalAt reports whether the literal lit (true, false, null) is at data[i].
func literalAt(data []byte, i int, lit string) bool {
	end := i + len(lit)
	return end <= len(data) && string(data[i:end]) == lit && (end == len(data) || jsonscan.EndsScalar(data[end]))
}
