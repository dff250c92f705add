package kubeproto

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

// Each fuzz target checks that its parser never panics, and that whatever it accepts,
// the matching Append writes back in a form it reads as the same value, and writes
// again byte for byte.

func FuzzParseEnvelope(f *testing.F) {
	f.Add(AppendEnvelope(nil, Envelope{APIVersion: "v1", Kind: "Pod", Raw: []byte{0x0a, 0x00}}))
	f.Add(AppendEnvelope(nil, Envelope{Kind: "X", Raw: []byte{}, ContentEncoding: "gzip", ContentType: "application/json"}))
	f.Add([]byte("k8s\x00\x12\x05abc"))
	f.Add([]byte(`{"kind":"Pod"}`))
	addGoldenSeeds(f, func(file string, b []byte) [][]byte {
		if file == "watch.pb" {
			return nil
		}
		return [][]byte{b}
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseEnvelope(b)
		if err != nil {
			if diff := cmp.Diff(Envelope{}, e); diff != "" {
				t.Fatalf("envelope returned with error %v:\n%s", err, diff)
			}
			return
		}
		if len(e.Raw) > len(b) {
			t.Fatalf("raw of %d bytes from %d bytes of input", len(e.Raw), len(b))
		}
		out := AppendEnvelope(nil, e)
		back, err := ParseEnvelope(out)
		if err != nil {
			t.Fatalf("ParseEnvelope(AppendEnvelope(%+v)): %v", e, err)
		}
		if diff := cmp.Diff(e, back); diff != "" {
			t.Fatalf("round trip (-parsed +reparsed):\n%s", diff)
		}
		if again := AppendEnvelope(nil, back); !bytes.Equal(out, again) {
			t.Fatalf("AppendEnvelope not stable:\n%q\n%q", out, again)
		}
	})
}

func FuzzParseList(f *testing.F) {
	f.Add(AppendList(nil, object.ListMeta{ResourceVersion: "1", Continue: "c", RemainingItemCount: ptr[int64](-3)},
		[][]byte{[]byte("a"), {}}))
	f.Add(AppendList(nil, object.ListMeta{ShardInfo: &object.ShardInfo{Selector: "s"}}, nil))
	f.Add([]byte("\x0a\x02\x20\x80"))
	addGoldenSeeds(f, goldenRaw("podlist"))
	f.Fuzz(func(t *testing.T, b []byte) {
		meta, items, err := parseItems(b)
		if err != nil {
			return
		}
		out := AppendList(nil, meta, items)
		meta2, items2, err := parseItems(out)
		if err != nil {
			t.Fatalf("ParseList(AppendList(...)): %v", err)
		}
		if diff := cmp.Diff(meta, meta2); diff != "" {
			t.Fatalf("meta round trip (-parsed +reparsed):\n%s", diff)
		}
		if diff := cmp.Diff(items, items2); diff != "" {
			t.Fatalf("items round trip (-parsed +reparsed):\n%s", diff)
		}
		if again := AppendList(nil, meta2, items2); !bytes.Equal(out, again) {
			t.Fatalf("AppendList not stable:\n%q\n%q", out, again)
		}
	})
}

func FuzzParseWatchEvent(f *testing.F) {
	f.Add(AppendWatchEvent(nil, WatchEvent{Type: "ADDED", Object: AppendEnvelope(nil, Envelope{Kind: "Pod", Raw: []byte{}})}))
	f.Add(AppendWatchEvent(nil, WatchEvent{Type: "BOOKMARK"}))
	f.Add(AppendWatchEvent(nil, WatchEvent{Object: []byte{}}))
	addGoldenSeeds(f, func(file string, b []byte) [][]byte {
		if file != "watch.pb" {
			return nil
		}
		var frames [][]byte
		fr := NewFrameReader(bytes.NewReader(b), 0)
		for {
			msg, err := fr.Next()
			if err != nil {
				return frames
			}
			frames = append(frames, bytes.Clone(msg))
		}
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := ParseWatchEvent(b)
		if err != nil {
			return
		}
		out := AppendWatchEvent(nil, ev)
		back, err := ParseWatchEvent(out)
		if err != nil {
			t.Fatalf("ParseWatchEvent(AppendWatchEvent(%+v)): %v", ev, err)
		}
		if diff := cmp.Diff(ev, back); diff != "" {
			t.Fatalf("round trip (-parsed +reparsed):\n%s", diff)
		}
		if again := AppendWatchEvent(nil, back); !bytes.Equal(out, again) {
			t.Fatalf("AppendWatchEvent not stable:\n%q\n%q", out, again)
		}
	})
}

func FuzzDecodeStatus(f *testing.F) {
	f.Add(AppendStatus(nil, object.NewExpired("too old").Status))
	f.Add(AppendStatus(nil, object.Status{Code: -1, Details: &object.StatusDetails{
		Name: "n", RetryAfterSeconds: -7, Causes: []object.StatusCause{{Type: "t", Message: "m", Field: "f"}},
	}}))
	addGoldenSeeds(f, goldenRaw("status-"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeStatus(b)
		if err != nil {
			return
		}
		out := AppendStatus(nil, s)
		back, err := DecodeStatus(out)
		if err != nil {
			t.Fatalf("DecodeStatus(AppendStatus(%+v)): %v", s, err)
		}
		if diff := cmp.Diff(s, back); diff != "" {
			t.Fatalf("round trip (-decoded +redecoded):\n%s", diff)
		}
		if again := AppendStatus(nil, back); !bytes.Equal(out, again) {
			t.Fatalf("AppendStatus not stable:\n%q\n%q", out, again)
		}
	})
}

func FuzzFrameReader(f *testing.F) {
	f.Add(AppendFrame(AppendFrame(nil, []byte("hello")), nil), uint16(10))
	f.Add([]byte{0, 0, 0, 11, 'x'}, uint16(10))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint16(0))
	if b, err := os.ReadFile(filepath.Join(goldenDir, "watch.pb")); err == nil {
		f.Add(b, uint16(len(b)))
	}
	f.Fuzz(func(t *testing.T, b []byte, max uint16) {
		// A limit of at least one, since NewFrameReader reads 0 as the default.
		limit := int(max) + 1
		var frames [][]byte
		fr := NewFrameReader(bytes.NewReader(b), limit)
		var err error
		for {
			var msg []byte
			if msg, err = fr.Next(); err != nil {
				break
			}
			if len(msg) > limit {
				t.Fatalf("frame of %d bytes past the limit of %d", len(msg), limit)
			}
			frames = append(frames, bytes.Clone(msg))
		}
		if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("unexpected error %v", err)
		}
		var out []byte
		for _, m := range frames {
			out = AppendFrame(out, m)
		}
		if err == io.EOF && !bytes.Equal(out, b) {
			t.Fatalf("frames read to a clean end do not make up the input:\n%q\n%q", b, out)
		}
		if !bytes.HasPrefix(b, out) {
			t.Fatalf("frames read are not the start of the input:\n%q\n%q", b, out)
		}
		var back [][]byte
		fr = NewFrameReader(bytes.NewReader(out), limit)
		for {
			msg, err := fr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("reading frames back: %v", err)
			}
			back = append(back, bytes.Clone(msg))
		}
		if diff := cmp.Diff(frames, back); diff != "" {
			t.Fatalf("round trip (-read +reread):\n%s", diff)
		}
	})
}
