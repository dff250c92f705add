package codec

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kinformer/kinformer/internal/jsonscan"
)

// FuzzPack: packing a JSON value and unpacking it gives back its bytes exactly, and
// packValue finds the value's end where jsonscan does.
func FuzzPack(f *testing.F) {
	f.Add([]byte(`{"name":"a","image":"nginx","ports":[{"containerPort":80,"protocol":"TCP"}]}`))
	f.Add([]byte(` [ "Always" , {"name" : "x\"y", "restartPolicy":"Never"}, 1.5e3, null ] `))
	f.Add([]byte(`"namespace"`))
	f.Add([]byte(`{"a\\":"\\\\","b":"\u0041lways"}`))
	f.Add(realisticPod(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		i := jsonscan.SkipSpace(data, 0)
		end, packed, _ := packValue(nil, data, i)
		if want := jsonscan.ValueEnd(data, i); end != want {
			t.Fatalf("end %d, want %d", end, want)
		}
		if got := unpack(nil, packed); !bytes.Equal(got, data[i:end]) {
			t.Fatalf("packValue+unpack = %q, want %q", got, data[i:end])
		}
		whole, _ := packText(nil, data)
		if got := unpack(nil, whole); !bytes.Equal(got, data) {
			t.Fatalf("packText+unpack = %q, want %q", got, data)
		}
	})
}

// The bytes the package documentation draws for "restartPolicy":"Always" are the bytes a
// Members holds.
func TestPackedMemberAsDocumented(t *testing.T) {
	var u Members
	u.Set("restartPolicy", json.RawMessage(`"Always"`))
	u.Set("hostname", json.RawMessage(`"web-1"`))
	want := []byte{0x8b, 0x09, 0x05, 0x05, 0x07, 0x8f, 0x05, 0x0e, '"', 'w', 'e', 'b', '-', '1', '"'}
	if !bytes.Equal(u.run(), want) {
		t.Errorf("% x, the documentation says % x", u.run(), want)
	}
}
