package object

import (
	"fmt"
	"strings"
)

// Key returns the cache key of an object: "namespace/name", or "name" when it has no
// namespace (cluster-scoped).
func Key(obj Object) string {
	m := obj.Meta()
	return KeyFor(m.Namespace, m.Name)
}

// KeyFor builds the key of namespace and name.
func KeyFor(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// SplitKey is the inverse of Key.
func SplitKey(key string) (namespace, name string, err error) {
	parts := strings.Split(key, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return "", parts[0], nil
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("invalid object key %q: want \"name\" or \"namespace/name\"", key)
}
