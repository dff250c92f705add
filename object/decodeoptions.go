package object

import "github.com/kinformer/kinformer/internal/codec"

// DecodeOptions change what a list or a watch keeps of each object it decodes: they are
// listwatch.ListOptions.Decode, listwatch.WatchOptions.Decode and
// reflector.Options.Decode. They are the codec's options (internal/codec.Options), under
// this package's name:
//
//   - DropManagedFields leaves metadata.managedFields out of the decoded object, as if
//     the server had not sent it: the server-side-apply bookkeeping is often a third of
//     an object's bytes and nothing a cache reads, and dropping it while decoding spares
//     building it only to delete it (informer.StripManagedFields).
//   - Maps, when set, gives the metadata's labels and annotations the table's map for
//     the same pairs when it has one (see MapTable) instead of building another, and
//     the table's copy of any unknown members or long string that another live object
//     decoded with it holds alike. Objects decoded so must not be changed in place: use
//     it where objects are read-only, as in an informer's cache, with a table of that
//     cache's own.
type DecodeOptions = codec.Options

// MapTable makes the objects of one cache share what they hold alike: equal label and
// annotation maps (the pods of one ReplicaSet carry the same labels, and so does an
// object from one update to the next), and equal parts, the packed unknown members of a
// container or a volume and long strings such as image digests (the pods of one
// ReplicaSet are one template). Objects decoded with DecodeOptions.Maps set to a table
// get the table's map when it holds exactly the pairs they would have; Share does the
// same for a map already built. Parts are held weakly: each goes with the last object
// that holds it (SharedParts counts those alive). An object decoded from protobuf
// through a watch's MODIFIED or ADDED event is remembered, and its next state decoded
// against it: the objects of the last 1,024 to 2,048 such events are held by plain
// pointers (in an informer, its cache's own objects), the others weakly. A table
// belongs to one cache (an informer makes its own), so that code which wrongly changes
// a shared map corrupts only that cache. It is the codec's (internal/codec.MapTable),
// under this package's name; NewMapTable makes one.
type MapTable = codec.MapTable

// NewMapTable returns an empty MapTable.
func NewMapTable() *MapTable { return codec.NewMapTable() }
