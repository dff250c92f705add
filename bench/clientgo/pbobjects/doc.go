// Package pbobjects writes the stream server's objects in protobuf, the file its
// -protobuf-objects flag reads (streamserver.Options.ProtobufObjects). The stream server
// lives in the main module, which never imports k8s.io, so it cannot encode a Pod in
// protobuf itself: this package, in the client-go module, decodes each object's JSON as
// the server lists it into its k8s.io/api type with client-go's own deserializer and
// writes the type's protobuf encoding (Marshal), in list order. The server then frames
// and patches those bytes without knowing their schema. Its command is
// bench/clientgo/cmd/pbprep.
package pbobjects
