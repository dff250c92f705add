// Package kubeproto reads and writes the envelopes kube-apiserver wraps around objects
// in application/vnd.kubernetes.protobuf: the magic and runtime.Unknown of a response
// body, the List message of a list, the length-prefixed WatchEvent frames of a watch,
// and the metav1.Status of an error.
//
// It decodes no object. It finds an object's bytes and hands them on, aliased, to the
// decoder that knows the object's message; what it does decode itself is what the engine
// needs to drive a list or a watch without that decoder: list metadata (resourceVersion,
// continue, remainingItemCount, shardInfo), the event type, and Status errors. The
// writers produce the bytes the apiserver produces, so that tests and the project's
// simulated servers speak the real wire format.
//
// The layouts (field numbers as in k8s.io/apimachinery's generated.proto):
//
//	list or object:  "k8s\x00" Unknown{1 typeMeta{1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType}
//	raw of a list:   List{1 metadata ListMeta, 2 items...}         each item its bare message, no envelope
//	ListMeta:        {1 selfLink, 2 resourceVersion, 3 continue, 4 remainingItemCount, 5 shardInfo{1 selector}}
//	watch stream:    frame...                                      frame: uint32 big-endian length, WatchEvent
//	WatchEvent:      {1 type, 2 object RawExtension{1 raw}}        raw: "k8s\x00" Unknown{...} of the object
//	error body:      "k8s\x00" Unknown{typeMeta v1 Status, raw Status{...}}
//
// Parsing never panics and never reads past its input, whatever the bytes: malformed
// input is an error that names the message and field at fault. Unknown fields are
// skipped, as protobuf requires; a known field with the wrong wire type is an error.
// Strings are copied; object bytes (Envelope.Raw, list items, WatchEvent.Object) alias
// the input, since they are about to be decoded and copying them would double the
// memory a large list needs.
package kubeproto
