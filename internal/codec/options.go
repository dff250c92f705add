package codec

// Options change what DecodeUnvalidated keeps of an object. Package object names this
// type DecodeOptions, which listwatch's and reflector's options hold.
type Options struct {
	// DropManagedFields leaves metadata.managedFields out of the decoded object, as if
	// the server had not sent it. The server-side-apply bookkeeping is often a third of
	// an object's bytes and nothing a cache reads; dropping it while decoding spares
	// building it only to delete it (informer.StripManagedFields). An object encoded
	// again lacks it; every other member is kept.
	DropManagedFields bool
	// Maps, when set, gives the metadata's labels and annotations the table's map for
	// the same pairs when it has one (see MapTable), instead of building another: the
	// pods of one ReplicaSet, and the states of one object from update to update, then
	// hold one map. Objects decoded so must not have those maps changed: use it where
	// objects are read-only, as in an informer's cache, with a table of that cache's own.
	// Through it too, an object decoded from protobuf takes from the last state of the
	// same object that the table remembers the parts that read the same (see
	// DecodeProtobufModified): the same rule holds for them.
	Maps *MapTable
}
