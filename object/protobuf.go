package object

import (
	"errors"
	"time"

	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/protowire"
)

// The types written as protobuf messages of their own, which the codec hands to the
// functions here (Schema.Messages): timestamps and int-or-strings. Every other field's
// protobuf number is in its struct's pb tag.

// protobufMessages are this package's message types, for the schema.
var protobufMessages = []codec.MessageType{
	codec.Message(decodeTimeProto, encodeTimeProto, sameTimeProto),
	codec.Message(decodeMicroTimeProto, encodeMicroTimeProto, sameMicroTimeProto),
	codec.Message(decodeIntOrStringProto, encodeIntOrStringProto, sameIntOrStringProto),
}

// timestamp reads a Timestamp message: seconds (1) and nanos (2).
func timestamp(msg []byte) (sec int64, nsec int32, err error) {
	for len(msg) > 0 {
		num, wire, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return 0, 0, protowire.Error(n)
		}
		if wire != protowire.Varint {
			m := protowire.ConsumeValue(wire, msg[n:])
			if m < 0 {
				return 0, 0, protowire.Error(m)
			}
			msg = msg[n+m:]
			continue
		}
		v, m := protowire.ConsumeVarint(msg[n:])
		if m < 0 {
			return 0, 0, protowire.Error(m)
		}
		switch num {
		case 1:
			sec = int64(v)
		case 2:
			nsec = int32(int64(v))
		}
		msg = msg[n+m:]
	}
	if nsec < 0 || nsec > 999999999 {
		return 0, 0, errors.New("timestamp nanos out of range")
	}
	return sec, nsec, nil
}

// appendTimestamp writes a Timestamp's fields, nanos (0 for a Time) always; the zero
// time is an empty message. All as the apiserver writes them.
func appendTimestamp(dst []byte, t time.Time, nanos bool) []byte {
	if t.IsZero() {
		return dst
	}
	dst = protowire.AppendTag(dst, 1, protowire.Varint)
	dst = protowire.AppendVarint(dst, uint64(t.Unix()))
	ns := 0
	if nanos {
		ns = t.Nanosecond()
	}
	dst = protowire.AppendTag(dst, 2, protowire.Varint)
	return protowire.AppendVarint(dst, uint64(ns))
}

// A Time's message holds seconds only (the apiserver drops nanos, as its JSON does);
// an empty one is the zero time.
func decodeTimeProto(t *Time, msg []byte) error {
	if len(msg) == 0 {
		*t = Time{}
		return nil
	}
	sec, _, err := timestamp(msg)
	if err != nil {
		return err
	}
	// Nanos, which the apiserver never writes here, ignored as it ignores them; seconds
	// outside years 0 to 9999 held at the bound, which encodes as it decodes.
	*t = NewTime(time.Unix(min(max(sec, yearZero), lastSec), 0))
	return nil
}

// UnmarshalProtobuf reads a Time from its protobuf message (seconds and nanos; the
// apiserver writes whole seconds), as a field the model does not hold is kept
// (Unknown.ProtobufField).
func (t *Time) UnmarshalProtobuf(msg []byte) error { return decodeTimeProto(t, msg) }

func encodeTimeProto(t *Time, dst []byte) []byte { return appendTimestamp(dst, t.Time(), false) }

// sameTimeProto reports whether msg decodes to t, exactly (the codec then keeps t).
func sameTimeProto(t *Time, msg []byte) bool {
	var x Time
	return decodeTimeProto(&x, msg) == nil && x == *t
}

func decodeMicroTimeProto(t *MicroTime, msg []byte) error {
	if len(msg) == 0 {
		*t = MicroTime{}
		return nil
	}
	sec, nsec, err := timestamp(msg)
	if err != nil {
		return err
	}
	// Held within years 0 to 9999, as Time is: RFC 3339 writes no other year.
	if sec < yearZero || sec > lastSec {
		sec, nsec = min(max(sec, yearZero), lastSec), 0
	}
	*t = NewMicroTime(time.Unix(sec, int64(nsec)))
	return nil
}

func encodeMicroTimeProto(t *MicroTime, dst []byte) []byte {
	return appendTimestamp(dst, t.Time, true)
}

// sameMicroTimeProto is sameTimeProto for a MicroTime: the same instant is not enough,
// its representation must be the one decoding makes (a time in UTC, no monotonic clock).
func sameMicroTimeProto(t *MicroTime, msg []byte) bool {
	var x MicroTime
	return decodeMicroTimeProto(&x, msg) == nil && x == *t
}

// An IntOrString's message: type (1: 0 int, 1 string), intVal (2), strVal (3).
func decodeIntOrStringProto(v *IntOrString, msg []byte) error {
	isString, i, str, err := readIntOrStringProto(msg)
	if err != nil {
		return err
	}
	*v = IntOrString{IsString: isString, Int: i, Str: string(str)}
	return nil
}

// sameIntOrStringProto reports whether msg decodes to v, reading its string without
// making one.
func sameIntOrStringProto(v *IntOrString, msg []byte) bool {
	isString, i, str, err := readIntOrStringProto(msg)
	return err == nil && v.IsString == isString && v.Int == i && v.Str == string(str)
}

// readIntOrStringProto reads an IntOrString's message: the string's bytes point into
// msg. Of the type's int and string, only the one it says is kept.
func readIntOrStringProto(msg []byte) (isString bool, i int32, str []byte, err error) {
	for len(msg) > 0 {
		num, wire, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return false, 0, nil, protowire.Error(n)
		}
		m := protowire.ConsumeValue(wire, msg[n:])
		if m < 0 {
			return false, 0, nil, protowire.Error(m)
		}
		switch {
		case num == 1 && wire == protowire.Varint:
			x, _ := protowire.ConsumeVarint(msg[n:])
			isString = x == 1
		case num == 2 && wire == protowire.Varint:
			x, _ := protowire.ConsumeVarint(msg[n:])
			i = int32(int64(x))
		case num == 3 && wire == protowire.Bytes:
			str, _ = protowire.ConsumeBytes(msg[n:])
		case num <= 3:
			return false, 0, nil, errors.New("IntOrString: a field of the wrong wire type")
		}
		msg = msg[n+m:]
	}
	if isString {
		return true, 0, str, nil
	}
	return false, i, nil, nil
}

func encodeIntOrStringProto(v *IntOrString, dst []byte) []byte {
	dst = protowire.AppendTag(dst, 1, protowire.Varint)
	dst = protowire.AppendVarint(dst, boolBit(v.IsString))
	dst = protowire.AppendTag(dst, 2, protowire.Varint)
	dst = protowire.AppendVarint(dst, uint64(int64(v.Int)))
	dst = protowire.AppendTag(dst, 3, protowire.Bytes)
	return protowire.AppendString(dst, v.Str)
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// ManagedFieldsNumber is metadata.managedFields' protobuf field number in ObjectMeta.
const ManagedFieldsNumber = 17

// ErrProtobufMembers is what encoding an object as JSON fails with (wrapped) when the
// object was decoded from protobuf and carries fields the model does not hold: they are
// protobuf bytes, known by number only, which only protobuf writes back (MarshalProtobuf;
// listwatch writes such an object in protobuf).
var ErrProtobufMembers = codec.ErrProtobufMembers

// MarshalProtobuf encodes v, a pointer to one of this package's types (an object, or a
// part of one such as a PodTemplateSpec), as its protobuf message: the fields it models
// and the protobuf fields it carried, in number order, as the apiserver writes them. It
// fails for a value holding JSON members (decoded from JSON, or set with Unknown.Set).
func MarshalProtobuf(v any) ([]byte, error) { return codec.MarshalProtobufValue(v) }
