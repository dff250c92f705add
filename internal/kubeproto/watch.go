package kubeproto

// WatchEvent is a metav1.WatchEvent: one frame of a protobuf watch.
type WatchEvent struct {
	// Type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
	Type string
	// Object is the event's object as the serializer wrote it: Magic and an Envelope,
	// whose Kind is Status for an ERROR event. It aliases the parsed input; nil when the
	// event carries no raw bytes.
	Object []byte
}

// The field numbers of metav1.WatchEvent and runtime.RawExtension.
const (
	watchEventType   = 1
	watchEventObject = 2

	rawExtensionRaw = 1
)

// ParseWatchEvent reads a WatchEvent message (a frame's message; see FrameReader).
func ParseWatchEvent(msg []byte) (WatchEvent, error) {
	const what = "protobuf watch event"
	var ev WatchEvent
	err := walk(what, msg, func(f field) (err error) {
		switch f.num {
		case watchEventType:
			var b []byte
			b, err = f.bytes(what, "type")
			ev.Type = eventType(b)
		case watchEventObject:
			var b []byte
			if b, err = f.bytes(what, "object"); err != nil {
				return err
			}
			return parseRawExtension(b, &ev)
		}
		return err
	})
	if err != nil {
		return WatchEvent{}, err
	}
	return ev, nil
}

// eventType returns an event's type: one of the protocol's, shared, rather than a string
// of its own per event.
func eventType(b []byte) string {
	return shared(b, "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR")
}

func parseRawExtension(msg []byte, ev *WatchEvent) error {
	const what = "protobuf watch event object"
	return walk(what, msg, func(f field) (err error) {
		if f.num == rawExtensionRaw {
			ev.Object, err = f.bytes(what, "raw")
		}
		return err
	})
}

// AppendWatchEvent appends ev as a WatchEvent message, as the apiserver writes it: type
// always, object always (an empty RawExtension when Object is nil). Frame it with
// AppendFrame; ev.Object should be an enveloped object (AppendEnvelope).
func AppendWatchEvent(dst []byte, ev WatchEvent) []byte {
	dst = appendStringField(dst, watchEventType, ev.Type)
	if ev.Object == nil {
		return appendMessageHeader(dst, watchEventObject, 0)
	}
	dst = appendMessageHeader(dst, watchEventObject, sizeBytesField(len(ev.Object)))
	return appendBytesField(dst, rawExtensionRaw, ev.Object)
}
