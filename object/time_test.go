package object

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// The fast path for the API's timestamps gives what time.Parse gives, and leaves the rest
// to it.
func TestParseUTCSecondsMatchesTimeParse(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", r.IntN(3000), r.IntN(14), r.IntN(33), r.IntN(26), r.IntN(62), r.IntN(62))
		var got, want Time
		gotErr := got.parse([]byte(s))
		parsed, wantErr := time.Parse(time.RFC3339Nano, s)
		want = NewTime(parsed)
		if (gotErr != nil) != (wantErr != nil) || got != want {
			t.Fatalf("%s: %v (%v), want %v (%v)", s, got, gotErr, want, wantErr)
		}
	}
}

// A Time keeps what the API can write, whole seconds of years 0 to 9999 and fractions to
// the microsecond, orders as the times it holds, and its zero value is the zero time.
func TestTimeHoldsWhatTheAPIWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	first, last := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
	edges := []time.Time{first, last, time.Unix(0, 0).UTC(), time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)}
	var prev time.Time
	var prevT Time
	for i := range 20000 {
		var tt time.Time
		if i < len(edges) {
			tt = edges[i]
		} else {
			tt = first.Add(time.Duration(r.Int64N(int64(last.Sub(first)/time.Microsecond))) * time.Microsecond)
		}
		got := NewTime(tt)
		if !got.Time().Equal(tt) {
			t.Fatalf("NewTime(%v).Time() = %v", tt, got.Time())
		}
		text, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var back Time
		if err := json.Unmarshal(text, &back); err != nil || back != got {
			t.Fatalf("%v: %s decodes to %v (%v)", tt, text, back, err)
		}
		if i > 0 && got.Compare(prevT) != tt.Compare(prev) {
			t.Fatalf("%v against %v: Compare %d, time.Time's %d", tt, prev, got.Compare(prevT), tt.Compare(prev))
		}
		prev, prevT = tt, got
	}
	if z := NewTime(time.Time{}); !z.IsZero() || z != (Time{}) || !(Time{}).Time().IsZero() {
		t.Errorf("the zero time: %v", z)
	}
	if got := NewTime(time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.UTC)).Time().Nanosecond(); got != 123456000 {
		t.Errorf("a fraction is kept to the microsecond: %d ns", got)
	}
}

// A time RFC 3339 cannot write is moved to the nearest one a Time holds.
func TestNewTimeClampsToTheYearsItHolds(t *testing.T) {
	for _, c := range []struct{ in, want time.Time }{
		{time.Date(10000, 1, 1, 0, 0, 0, 5000, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)},
		{time.Date(-1, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if got := NewTime(c.in).Time(); !got.Equal(c.want) {
			t.Errorf("NewTime(%v) holds %v, want %v", c.in, got, c.want)
		}
	}
}
