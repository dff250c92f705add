package protowire_test

import (
	"fmt"

	"github.com/kinformer/kinformer/internal/protowire"
)

// A message is a run of fields: a tag (number and wire type), then the value.
func Example() {
	msg := protowire.AppendTag(nil, 1, protowire.Bytes)
	msg = protowire.AppendString(msg, "web-1")
	msg = protowire.AppendTag(msg, 7, protowire.Varint)
	msg = protowire.AppendVarint(msg, 3)

	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		switch typ {
		case protowire.Bytes:
			v, m := protowire.ConsumeBytes(msg[n:])
			fmt.Printf("field %d: %q\n", num, v)
			n += m
		case protowire.Varint:
			v, m := protowire.ConsumeVarint(msg[n:])
			fmt.Printf("field %d: %d\n", num, v)
			n += m
		}
		msg = msg[n:]
	}
	// Output:
	// field 1: "web-1"
	// field 7: 3
}
