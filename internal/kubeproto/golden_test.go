package kubeproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/object"
)

// goldenDir holds bodies written by the real k8s.io serializer (see its README.md):
// they are what proves that this package reads and writes the apiserver's bytes, not
// merely its own.
const goldenDir = "../../object/testdata/protobuf"

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	if _, err := os.Stat(goldenDir); errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is missing: the golden files from the k8s.io serializer have not been generated", goldenDir)
	}
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoldenPodList(t *testing.T) {
	body := readGolden(t, "podlist.pb")
	e, err := ParseEnvelope(body)
	if err != nil {
		t.Fatal(err)
	}
	if e.APIVersion != "v1" || e.Kind != "PodList" {
		t.Errorf("envelope type %s %s, want v1 PodList", e.APIVersion, e.Kind)
	}
	meta, items, err := parseItems(e.Raw)
	if err != nil {
		t.Fatal(err)
	}
	want := object.ListMeta{
		ResourceVersion:    "12345",
		Continue:           "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzNDV9",
		RemainingItemCount: ptr[int64](42),
	}
	if diff := cmp.Diff(want, meta); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
	if len(items) != 3 {
		t.Errorf("%d items, want 3", len(items))
	}
	if got := AppendList(nil, meta, items); !bytes.Equal(got, e.Raw) {
		t.Errorf("AppendList differs from the serializer's List:\n got %q\nwant %q", got, e.Raw)
	}
}

func TestGoldenWatch(t *testing.T) {
	stream := readGolden(t, "watch.pb")
	fr := NewFrameReader(bytes.NewReader(stream), 0)
	var types []string
	var rewritten []byte
	var last WatchEvent
	for {
		msg, err := fr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ev, err := ParseWatchEvent(msg)
		if err != nil {
			t.Fatalf("frame %d: %v", len(types), err)
		}
		if _, err := ParseEnvelope(ev.Object); err != nil {
			t.Errorf("frame %d (%s): object: %v", len(types), ev.Type, err)
		}
		types = append(types, ev.Type)
		rewritten = AppendFrame(rewritten, AppendWatchEvent(nil, ev))
		last = WatchEvent{Type: ev.Type, Object: bytes.Clone(ev.Object)}
	}
	if diff := cmp.Diff([]string{"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"}, types); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if !bytes.Equal(rewritten, stream) {
		t.Errorf("AppendFrame(AppendWatchEvent(ParseWatchEvent(frame))) differs from the serializer's stream")
	}

	e, err := ParseEnvelope(last.Object)
	if err != nil {
		t.Fatal(err)
	}
	if e.APIVersion != "v1" || e.Kind != "Status" {
		t.Errorf("ERROR object type %s %s, want v1 Status", e.APIVersion, e.Kind)
	}
	s, err := DecodeStatus(e.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if s.Code != 410 || s.Reason != object.ReasonExpired {
		t.Errorf("ERROR status: code %d reason %q, want 410 Expired", s.Code, s.Reason)
	}
}

func TestGoldenStatus(t *testing.T) {
	for _, c := range []struct {
		file   string
		code   int32
		reason object.StatusReason
	}{
		{"status-410.pb", 410, object.ReasonExpired},
		{"status-404.pb", 404, object.ReasonNotFound},
	} {
		t.Run(c.file, func(t *testing.T) {
			e, err := ParseEnvelope(readGolden(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if e.APIVersion != "v1" || e.Kind != "Status" {
				t.Errorf("envelope type %s %s, want v1 Status", e.APIVersion, e.Kind)
			}
			s, err := DecodeStatus(e.Raw)
			if err != nil {
				t.Fatal(err)
			}
			if s.Code != c.code || s.Reason != c.reason {
				t.Errorf("status %+v, want %d %s", s, c.code, c.reason)
			}
			// The same Status as the serializer's JSON of it, type from the envelope.
			var want object.Status
			if err := json.Unmarshal(readGolden(t, strings.TrimSuffix(c.file, ".pb")+".json"), &want); err != nil {
				t.Fatal(err)
			}
			s.TypeMeta = object.TypeMeta{APIVersion: e.APIVersion, Kind: e.Kind}
			if diff := cmp.Diff(want, s); diff != "" {
				t.Errorf("DecodeStatus differs from the JSON (-json +protobuf):\n%s", diff)
			}
			s.TypeMeta = object.TypeMeta{}
			if got := AppendStatus(nil, s); !bytes.Equal(got, e.Raw) {
				t.Errorf("AppendStatus differs from the serializer's Status:\n got %q\nwant %q", got, e.Raw)
			}
		})
	}
}

// TestGoldenEnvelopes checks that every body the serializer wrote, one object's
// (NAME.pb beside NAME.json) or a list's or a Status's, comes back byte for byte.
func TestGoldenEnvelopes(t *testing.T) {
	readGolden(t, "podlist.pb") // skips when the directory is missing
	names, err := filepath.Glob(filepath.Join(goldenDir, "*.pb"))
	if err != nil {
		t.Fatal(err)
	}
	objects := 0
	for _, path := range names {
		name := filepath.Base(path)
		if name == "watch.pb" {
			continue // frames, not an envelope
		}
		if _, err := os.Stat(strings.TrimSuffix(path, ".pb") + ".json"); err == nil {
			objects++
		}
		t.Run(name, func(t *testing.T) {
			body := readGolden(t, name)
			e, err := ParseEnvelope(body)
			if err != nil {
				t.Fatal(err)
			}
			if e.APIVersion == "" || e.Kind == "" || e.Raw == nil {
				t.Errorf("envelope without a type or raw: %+v", e)
			}
			if e.ContentEncoding != "" || e.ContentType != "" {
				t.Errorf("content encoding %q, type %q; the apiserver writes both empty", e.ContentEncoding, e.ContentType)
			}
			if got := AppendEnvelope(nil, e); !bytes.Equal(got, body) {
				t.Errorf("AppendEnvelope(ParseEnvelope(x)) differs from x:\n got %q\nwant %q", got, body)
			}
		})
	}
	if objects == 0 {
		t.Errorf("no NAME.pb with a NAME.json in %s", goldenDir)
	}
}

// addGoldenSeeds adds the golden files, when there are any, to a fuzz target's corpus,
// through extract (which picks the part the target parses).
func addGoldenSeeds(f *testing.F, extract func(file string, b []byte) [][]byte) {
	names, _ := filepath.Glob(filepath.Join(goldenDir, "*.pb"))
	for _, path := range names {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, seed := range extract(filepath.Base(path), b) {
			f.Add(seed)
		}
	}
}

// goldenRaw returns the Raw of the envelopes whose file name starts with prefix.
func goldenRaw(prefix string) func(string, []byte) [][]byte {
	return func(file string, b []byte) [][]byte {
		if !strings.HasPrefix(file, prefix) {
			return nil
		}
		e, err := ParseEnvelope(b)
		if err != nil {
			return nil
		}
		return [][]byte{e.Raw}
	}
}
