package object

import (
	"hash/maphash"
	"sync/atomic"
	"unsafe"
)

// Shared maps, for DecodeOptions.ShareMaps: the labels of the pods of one ReplicaSet are
// the same, and so are an object's labels from one update to the next, yet decoding
// builds a new Go map (about 300 bytes however little it holds) every time. With
// ShareMaps the decoder looks the map's JSON text up in a table of maps it built
// recently, and hands out the one it finds when that map holds exactly what the text
// says; it builds a map only on a miss.
//
// Like the intern table, the table is lossy and bounded (mapSlots slots, each the last
// map stored under its hash) and lock-free. It keeps no copy of the text: a candidate is
// checked against the text itself, pair by pair (sharedMatches). Maps handed out are
// shared by every object decoded with ShareMaps, so such objects must be treated as
// read-only, as a cache's are.

const (
	mapSlots     = 1 << 11
	sharedMapMax = 1024 // longer texts are built as usual: rarely repeated, costly to check
)

var mapTable [mapSlots]atomic.Pointer[map[string]string]

// decodeSharedStringMap is decodeStringMap with the table in front of it.
func decodeSharedStringMap(data []byte, i int, p unsafe.Pointer) (int, error) {
	if data[i] != '{' {
		return decodeStringMap(data, i, p)
	}
	end := skipValue(data, i)
	if end < 0 || end-i > sharedMapMax {
		return decodeStringMap(data, i, p)
	}
	slot := &mapTable[maphash.Bytes(internSeed, data[i:end])&(mapSlots-1)]
	if m := slot.Load(); m != nil && sharedMatches(*m, data[i:end]) {
		*(*map[string]string)(p) = *m
		return end, nil
	}
	n, err := decodeStringMap(data, i, p)
	if err == nil {
		m := *(*map[string]string)(p)
		slot.Store(&m)
	}
	return n, err
}

// sharedMatches reports whether m holds exactly the pairs of the JSON object text, whose
// strings must all be plain (no escapes): anything else does not match, and is decoded.
func sharedMatches(m map[string]string, text []byte) bool {
	pairs := 0
	j := skipSpace(text, 1)
	for j < len(text) && text[j] != '}' {
		kend, plain := stringEnd(text, j)
		if kend < 0 || !plain {
			return false
		}
		key := text[j+1 : kend-1]
		if j = skipSpace(text, kend); j >= len(text) || text[j] != ':' {
			return false
		}
		j = skipSpace(text, j+1)
		vend, plain := stringEnd(text, j)
		if vend < 0 || !plain {
			return false
		}
		if v, ok := m[string(key)]; !ok || v != string(text[j+1:vend-1]) {
			return false
		}
		pairs++
		if j = skipSpace(text, vend); j < len(text) && text[j] == ',' {
			j = skipSpace(text, j+1)
		}
	}
	return pairs == len(m)
}
