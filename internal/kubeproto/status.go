package kubeproto

import "github.com/kinformer/kinformer/object"

// The field numbers of metav1.Status, StatusDetails and StatusCause.
const (
	statusMetadata = 1
	statusStatus   = 2
	statusMessage  = 3
	statusReason   = 4
	statusDetails  = 5
	statusCode     = 6

	detailsName              = 1
	detailsGroup             = 2
	detailsKind              = 3
	detailsCauses            = 4
	detailsRetryAfterSeconds = 5
	detailsUID               = 6

	causeReason  = 1
	causeMessage = 2
	causeField   = 3
)

// DecodeStatus reads a metav1.Status message (the Raw of an envelope of Kind Status: an
// error body, or the object of a watch ERROR event). It leaves TypeMeta empty, for the
// caller to set from the envelope, and ignores metadata, which a Status never uses.
func DecodeStatus(msg []byte) (object.Status, error) {
	const what = "protobuf Status"
	var s object.Status
	err := walk(what, msg, func(f field) (err error) {
		switch f.num {
		case statusMetadata:
			_, err = f.bytes(what, "metadata")
		case statusStatus:
			s.Status, err = f.str(what, "status")
		case statusMessage:
			s.Message, err = f.str(what, "message")
		case statusReason:
			var r string
			r, err = f.str(what, "reason")
			s.Reason = object.StatusReason(r)
		case statusDetails:
			var b []byte
			if b, err = f.bytes(what, "details"); err != nil {
				return err
			}
			if s.Details == nil {
				s.Details = &object.StatusDetails{}
			}
			return parseDetails(b, s.Details)
		case statusCode:
			var v uint64
			v, err = f.varint(what, "code")
			s.Code = int32(int64(v))
		}
		return err
	})
	if err != nil {
		return object.Status{}, err
	}
	return s, nil
}

func parseDetails(msg []byte, d *object.StatusDetails) error {
	const what = "protobuf Status details"
	return walk(what, msg, func(f field) (err error) {
		switch f.num {
		case detailsName:
			d.Name, err = f.str(what, "name")
		case detailsGroup:
			d.Group, err = f.str(what, "group")
		case detailsKind:
			d.Kind, err = f.str(what, "kind")
		case detailsCauses:
			var b []byte
			if b, err = f.bytes(what, "causes"); err != nil {
				return err
			}
			var c object.StatusCause
			if err = parseCause(b, &c); err == nil {
				d.Causes = append(d.Causes, c)
			}
		case detailsRetryAfterSeconds:
			var v uint64
			v, err = f.varint(what, "retryAfterSeconds")
			d.RetryAfterSeconds = int32(int64(v))
		case detailsUID:
			d.UID, err = f.str(what, "uid")
		}
		return err
	})
}

func parseCause(msg []byte, c *object.StatusCause) error {
	const what = "protobuf Status details.causes"
	return walk(what, msg, func(f field) (err error) {
		switch f.num {
		case causeReason:
			c.Type, err = f.str(what, "reason")
		case causeMessage:
			c.Message, err = f.str(what, "message")
		case causeField:
			c.Field, err = f.str(what, "field")
		}
		return err
	})
}

// AppendStatus appends s as a metav1.Status message, as the apiserver writes it: an
// empty metadata, every string and code even when empty or zero, details only when set.
// s.TypeMeta is not part of the message; it goes in the envelope.
func AppendStatus(dst []byte, s object.Status) []byte {
	dst = appendMessageHeader(dst, statusMetadata, sizeListMeta(object.ListMeta{}))
	dst = appendListMeta(dst, object.ListMeta{})
	dst = appendStringField(dst, statusStatus, s.Status)
	dst = appendStringField(dst, statusMessage, s.Message)
	dst = appendStringField(dst, statusReason, string(s.Reason))
	if d := s.Details; d != nil {
		dst = appendMessageHeader(dst, statusDetails, sizeDetails(d))
		dst = appendStringField(dst, detailsName, d.Name)
		dst = appendStringField(dst, detailsGroup, d.Group)
		dst = appendStringField(dst, detailsKind, d.Kind)
		for _, c := range d.Causes {
			dst = appendMessageHeader(dst, detailsCauses, sizeCause(c))
			dst = appendStringField(dst, causeReason, c.Type)
			dst = appendStringField(dst, causeMessage, c.Message)
			dst = appendStringField(dst, causeField, c.Field)
		}
		// int32s are written as the varint of their sign-extended 64-bit value, as the
		// generated code does: a negative one takes ten bytes.
		dst = appendVarintField(dst, detailsRetryAfterSeconds, uint64(int64(d.RetryAfterSeconds)))
		dst = appendStringField(dst, detailsUID, d.UID)
	}
	return appendVarintField(dst, statusCode, uint64(int64(s.Code)))
}

func sizeDetails(d *object.StatusDetails) int {
	n := sizeBytesField(len(d.Name)) + sizeBytesField(len(d.Group)) + sizeBytesField(len(d.Kind)) +
		sizeVarintField(uint64(int64(d.RetryAfterSeconds))) + sizeBytesField(len(d.UID))
	for _, c := range d.Causes {
		n += sizeBytesField(sizeCause(c))
	}
	return n
}

func sizeCause(c object.StatusCause) int {
	return sizeBytesField(len(c.Type)) + sizeBytesField(len(c.Message)) + sizeBytesField(len(c.Field))
}
