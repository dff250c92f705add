package object

import (
	"encoding/json"
	"reflect"
)

// DecodeValid decodes data, which the caller has already checked is valid JSON (as
// json.Unmarshal of an enclosing document does), into a new T. For this package's types
// it skips encoding/json's second validation pass; anything else goes through
// json.Unmarshal.
func DecodeValid[T any](data []byte) (T, error) {
	var out T
	if rt := reflect.TypeFor[T](); rt.Kind() == reflect.Pointer {
		v := reflect.New(rt.Elem())
		if k, ok := v.Interface().(keeper); ok {
			err := k.decodeKeep(data)
			return v.Interface().(T), err
		}
	}
	err := json.Unmarshal(data, &out)
	return out, err
}
