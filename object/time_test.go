package object

import (
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
		want.Time = parsed
		if (gotErr != nil) != (wantErr != nil) || got != want {
			t.Fatalf("%s: %v (%v), want %v (%v)", s, got, gotErr, want, wantErr)
		}
	}
}
