// Package object is kinformer's Kubernetes object model, written without apimachinery.
//
// It is typed where the engine reads and raw where it only carries: ObjectMeta, Pod,
// ReplicaSet and Deployment decode the fields the informer and the controllers use, and
// keep every other JSON member byte for byte in an Unknown map, so an object decoded and
// encoded again loses nothing (a pod template's volumes and probes, managedFields, fields
// of API versions newer than this code). Raw does the same for any resource.
//
// It also holds label selectors (the structured form and the ?labelSelector= syntax), API
// Status errors with their helpers (IsNotFound, IsConflict, IsGone, ...), and the cache
// key functions Key and SplitKey.
//
// Objects handed out by a cache are shared and read-only; DeepCopy makes one a caller may
// change.
package object
