// Package object is kinformer's Kubernetes object model, written without apimachinery.
//
// It is typed where the engine reads and raw where it only carries: ObjectMeta, Pod,
// ReplicaSet and Deployment decode the fields the informer and the controllers use, and
// keep every other JSON member byte for byte in an Unknown, so an object decoded and
// encoded again loses nothing (a pod template's volumes and probes, managedFields, fields
// of API versions newer than this code). Raw does the same for any resource. An Unknown
// is a compact value, not a map: Get, Set, Delete and All read and change its members.
//
// Objects are built to be cached by the thousand. The decoder makes one pass over its
// input, without encoding/json; what an object keeps is its own copy, never part of the
// input: an Unknown's members in one buffer, with the Kubernetes API's member names and
// common values packed in two bytes each, and short strings that recur between objects
// (namespaces, label keys and values, owner references, node names, condition types)
// shared through a small, bounded intern table. In a cache, what the pods of one
// template hold alike is held once: the unknown members of their containers and volumes,
// and the parts of a condition, a container and a container status that are not the
// pod's own, which those types keep behind a pointer and hand out through methods
// (Type, Status, Name, Image, Ready, ...). A pod of a ReplicaSet costs about a seventh of
// the heap client-go's typed Pod does.
//
// It also holds label selectors (the structured form and the ?labelSelector= syntax), API
// Status errors with their helpers (IsNotFound, IsConflict, IsGone, ...), and the cache
// key functions Key and SplitKey.
//
// Objects handed out by a cache are shared and read-only; DeepCopy makes one a caller may
// change.
package object
