package kubeproto

import "github.com/kinformer/kinformer/object"

// The field numbers of a List message (every XList of k8s.io/api has the same two),
// metav1.ListMeta and metav1.ShardInfo.
const (
	listMetadata = 1
	listItems    = 2

	listMetaSelfLink           = 1
	listMetaResourceVersion    = 2
	listMetaContinue           = 3
	listMetaRemainingItemCount = 4
	listMetaShardInfo          = 5

	shardInfoSelector = 1
)

// ParseList reads a List message (the Raw of a list's envelope): it returns the list's
// metadata and calls item with each item's message, in order, as it meets them; obj
// aliases msg. An error from item stops the parse and is returned as is. A nil item
// skips the items.
func ParseList(msg []byte, item func(obj []byte) error) (object.ListMeta, error) {
	const what = "protobuf list"
	var meta object.ListMeta
	err := walk(what, msg, func(f field) error {
		switch f.num {
		case listMetadata:
			b, err := f.bytes(what, "metadata")
			if err != nil {
				return err
			}
			return parseListMeta("protobuf list metadata", b, &meta)
		case listItems:
			b, err := f.bytes(what, "items")
			if err != nil || item == nil {
				return err
			}
			return item(b)
		}
		return nil
	})
	if err != nil {
		return object.ListMeta{}, err
	}
	return meta, nil
}

// ParseListMeta reads a ListMeta message (a List's field 1, met on its own by a reader
// that streams the list).
func ParseListMeta(msg []byte) (object.ListMeta, error) {
	var meta object.ListMeta
	if err := parseListMeta("protobuf list metadata", msg, &meta); err != nil {
		return object.ListMeta{}, err
	}
	return meta, nil
}

// parseListMeta reads a ListMeta into meta (merging, as protobuf merges a repeated
// message field). selfLink is checked but dropped: the apiserver no longer sets it.
func parseListMeta(what string, msg []byte, meta *object.ListMeta) error {
	return walk(what, msg, func(f field) (err error) {
		switch f.num {
		case listMetaSelfLink:
			_, err = f.bytes(what, "selfLink")
		case listMetaResourceVersion:
			meta.ResourceVersion, err = f.str(what, "resourceVersion")
		case listMetaContinue:
			meta.Continue, err = f.str(what, "continue")
		case listMetaRemainingItemCount:
			var v uint64
			if v, err = f.varint(what, "remainingItemCount"); err == nil {
				n := int64(v)
				meta.RemainingItemCount = &n
			}
		case listMetaShardInfo:
			var b []byte
			if b, err = f.bytes(what, "shardInfo"); err != nil {
				return err
			}
			if meta.ShardInfo == nil {
				meta.ShardInfo = &object.ShardInfo{}
			}
			return parseShardInfo(what+".shardInfo", b, meta.ShardInfo)
		}
		return err
	})
}

func parseShardInfo(what string, msg []byte, si *object.ShardInfo) error {
	return walk(what, msg, func(f field) (err error) {
		if f.num == shardInfoSelector {
			si.Selector, err = f.str(what, "selector")
		}
		return err
	})
}

// AppendList appends a List message of meta and items (each an item's bare message),
// as the apiserver writes it.
func AppendList(dst []byte, meta object.ListMeta, items [][]byte) []byte {
	dst = appendMessageHeader(dst, listMetadata, sizeListMeta(meta))
	dst = appendListMeta(dst, meta)
	for _, it := range items {
		dst = appendBytesField(dst, listItems, it)
	}
	return dst
}

// appendListMeta writes meta's fields as metav1.ListMeta's generated code does: the
// three strings always (selfLink empty), the optional fields only when set.
func appendListMeta(dst []byte, meta object.ListMeta) []byte {
	dst = appendStringField(dst, listMetaSelfLink, "")
	dst = appendStringField(dst, listMetaResourceVersion, meta.ResourceVersion)
	dst = appendStringField(dst, listMetaContinue, meta.Continue)
	if meta.RemainingItemCount != nil {
		dst = appendVarintField(dst, listMetaRemainingItemCount, uint64(*meta.RemainingItemCount))
	}
	if meta.ShardInfo != nil {
		dst = appendMessageHeader(dst, listMetaShardInfo, sizeBytesField(len(meta.ShardInfo.Selector)))
		dst = appendStringField(dst, shardInfoSelector, meta.ShardInfo.Selector)
	}
	return dst
}

func sizeListMeta(meta object.ListMeta) int {
	n := sizeBytesField(0) + sizeBytesField(len(meta.ResourceVersion)) + sizeBytesField(len(meta.Continue))
	if meta.RemainingItemCount != nil {
		n += sizeVarintField(uint64(*meta.RemainingItemCount))
	}
	if meta.ShardInfo != nil {
		n += sizeBytesField(sizeBytesField(len(meta.ShardInfo.Selector)))
	}
	return n
}
