package kubeproto

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// readFrames reads frames until an error and returns them (copied) and the error.
func readFrames(r io.Reader, max int) ([]string, error) {
	fr := NewFrameReader(r, max)
	var got []string
	for {
		msg, err := fr.Next()
		if err != nil {
			return got, err
		}
		got = append(got, string(msg))
	}
}

func TestFrameReader(t *testing.T) {
	var stream []byte
	want := []string{"first", "", strings.Repeat("x", 1000), "last"}
	for _, m := range want {
		stream = AppendFrame(stream, []byte(m))
	}
	if diff := cmp.Diff("\x00\x00\x00\x05first\x00\x00\x00\x00", string(stream[:13])); diff != "" {
		t.Errorf("AppendFrame (-want +got):\n%s", diff)
	}
	for name, r := range map[string]io.Reader{
		"whole":       bytes.NewReader(stream),
		"byte a time": iotest.OneByteReader(bytes.NewReader(stream)),
		"half reads":  iotest.HalfReader(bytes.NewReader(stream)),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := readFrames(r, 1000)
			if err != io.EOF {
				t.Errorf("err = %v, want io.EOF", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFrameReaderErrors(t *testing.T) {
	one := AppendFrame(nil, []byte("hello"))
	readErr := errors.New("connection reset")
	cases := []struct {
		name   string
		r      io.Reader
		max    int
		frames []string
		want   string
	}{
		{"empty stream", bytes.NewReader(nil), 10, nil, io.EOF.Error()},
		{"cut in the header", bytes.NewReader(append(one, 0, 0)), 10, []string{"hello"}, io.ErrUnexpectedEOF.Error()},
		{"cut in the message", bytes.NewReader(one[:7]), 10, nil, io.ErrUnexpectedEOF.Error()},
		{"cut right after the header", bytes.NewReader(one[:4]), 10, nil, io.ErrUnexpectedEOF.Error()},
		{"too long", bytes.NewReader(append(one, 0, 0, 0, 11)), 10, []string{"hello"},
			"protobuf watch frame of 11 bytes exceeds the limit of 10"},
		{"4 GiB length", bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff}), 0, nil,
			"protobuf watch frame of 4294967295 bytes exceeds the limit of 16777216"},
		{"read error", io.MultiReader(bytes.NewReader(one), iotest.ErrReader(readErr)), 10, []string{"hello"}, readErr.Error()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readFrames(c.r, c.max)
			if diff := cmp.Diff(c.frames, got); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFrameReaderTooLargeIsSticky(t *testing.T) {
	stream := AppendFrame(nil, []byte("0123456789abc"))
	stream = AppendFrame(stream, []byte("ok"))
	fr := NewFrameReader(bytes.NewReader(stream), 8)
	for i := 0; i < 2; i++ {
		_, err := fr.Next()
		if !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("call %d: err = %v, want ErrFrameTooLarge", i, err)
		}
	}
}

func TestFrameReaderReusesItsBuffer(t *testing.T) {
	var stream []byte
	for _, n := range []int{100, 50, 100, 10, 100, 1, 99} {
		stream = AppendFrame(stream, make([]byte, n))
	}
	fr := NewFrameReader(bytes.NewReader(stream), 1<<10)
	if _, err := fr.Next(); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1, func() {
		for i := 0; i < 3; i++ {
			if _, err := fr.Next(); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations for frames no larger than the first, want 0", allocs)
	}
}
