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
	f.Add([]byte(`{"startTime":"2025-03-27T12:55:09Z","podIPs":[{"ip":"10.100.7.104"}],"t":["0001-01-01T00:00:00Z","2024-02-30T00:00:00Z","1.02.3.4"]}`))
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

// Times and IPv4 addresses are packed only in the forms that print back to the same bytes.
func TestPackedTimesAndAddresses(t *testing.T) {
	for _, tc := range []struct {
		value string
		size  int // of the code; 0: kept as text
	}{
		{`"2025-03-27T12:55:09Z"`, 6},
		{`"0001-01-01T00:00:00Z"`, 6},
		{`"9999-12-31T23:59:59Z"`, 6},
		{`"2024-02-29T00:00:00Z"`, 6},
		{`"2023-02-29T00:00:00Z"`, 0}, // no such day: time.Date would move it to March
		{`"2025-04-31T00:00:00Z"`, 0},
		{`"0000-01-01T00:00:00Z"`, 0},
		{`"2025-03-27T24:00:00Z"`, 0},
		{`"2016-12-31T23:59:60Z"`, 0}, // a leap second
		{`"2025-03-27T12:55:09.5Z"`, 0},
		{`"2025-03-27T12:55:09+01:00"`, 0},
		{`"2025-03-27t12:55:09Z"`, 0},
		{`"10.100.7.104"`, 5},
		{`"0.0.0.0"`, 5},
		{`"255.255.255.255"`, 5},
		{`"256.1.1.1"`, 0},
		{`"01.2.3.4"`, 0}, // a leading zero
		{`"1.2.3"`, 0},
		{`"1.2.3.4.5"`, 0},
		{`"1..2.3"`, 0},
		{`"1.2.3.4."`, 0},
		{`"fd00::1"`, 0},
	} {
		got, packed := packText(nil, []byte(tc.value))
		size := 0
		if packed {
			size = len(got)
		}
		if size != tc.size {
			t.Errorf("%s packs into %d bytes (% x), want %d", tc.value, size, got, tc.size)
		}
		if back := unpack(nil, got); string(back) != tc.value {
			t.Errorf("%s unpacks as %s", tc.value, back)
		}
	}
	// As a member name, a time is a name like any other.
	var u Members
	u.Set("2025-03-27T12:55:09Z", json.RawMessage(`"10.0.0.1"`))
	if got := u.String(); got != `{"2025-03-27T12:55:09Z":"10.0.0.1"}` {
		t.Errorf("got %s", got)
	}
}
