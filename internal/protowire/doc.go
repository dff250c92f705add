// Package protowire reads and writes the protobuf wire format, the one
// application/vnd.kubernetes.protobuf is made of: varints, field tags, and
// length-delimited fields. It knows nothing of messages; the codec's protobuf tables and
// listwatch's envelopes and watch frames are built on it.
//
// Reading never panics and never reads past its input: every function that consumes
// bytes returns how many it consumed, or a negative number (one of the Err constants,
// which Error turns into an error) when the input is truncated or malformed. That is the
// contract the decoders above rely on to turn any malformed frame into a clear error.
package protowire
