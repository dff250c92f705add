package jsonscan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// members reads the object at data[i] with FirstMember, Member and NextMember, and
// returns its members as name=value texts, and the index past it.
func members(data []byte, i int) ([]string, int) {
	var got []string
	j, more := FirstMember(data, i)
	for more {
		nameEnd, _, value := Member(data, j)
		if value < 0 {
			return got, -1
		}
		end := ValueEnd(data, value)
		if end < 0 {
			return got, -1
		}
		got = append(got, string(data[j+1:nameEnd-1])+"="+string(data[value:end]))
		j, more = NextMember(data, end)
	}
	return got, j
}

func TestMembers(t *testing.T) {
	for _, tt := range []struct {
		data    string
		members []string
		end     int
	}{
		{`{}`, nil, 2},
		{` { } `, nil, 4},
		{`{"a":1}`, []string{"a=1"}, 7},
		{`{ "type" : "ADDED" , "object" : {"x":[1]} } tail`, []string{`type="ADDED"`, `object={"x":[1]}`}, 43},
		{`{"a\"b":"}"}`, []string{`a\"b="}"`}, 12},
		{`{"a":1,}`, []string{"a=1"}, -1},
		{`{"a" 1}`, nil, -1},
		{`{"a":1 "b":2}`, []string{"a=1"}, -1},
		{`{"a":`, nil, -1},
		{`{`, nil, -1},
		{`{1:2}`, nil, -1},
	} {
		got, end := members([]byte(tt.data), SkipSpace([]byte(tt.data), 0))
		if d := cmp.Diff(tt.members, got); d != "" || end != tt.end {
			t.Errorf("%q: end %d, want %d; members (-want +got):\n%s", tt.data, end, tt.end, d)
		}
	}
}

func TestMemberNameEscapes(t *testing.T) {
	data := []byte(`{"pl\u0061in":1}`)
	nameEnd, plain, value := Member(data, 1)
	if nameEnd != 13 || plain || value != 14 {
		t.Errorf("Member = %d, %v, %d; want 13, false, 14", nameEnd, plain, value)
	}
}
