package object

import (
	"encoding/json"
	"fmt"
)

// DeepCopy returns an independent copy of obj, for callers that need to change an object
// they got from a cache (cached objects are shared and read-only). It copies through JSON,
// so it keeps every unknown member too.
func DeepCopy[T any](obj T) T {
	b, err := json.Marshal(obj)
	if err != nil {
		// Every type here encodes what it decoded; failing means a caller-built value is
		// not encodable at all, a programming error.
		panic(fmt.Sprintf("object.DeepCopy: %v", err))
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("object.DeepCopy: %v", err))
	}
	return out
}
