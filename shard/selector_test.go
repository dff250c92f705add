package shard

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSelectorString(t *testing.T) {
	tests := []struct {
		name string
		sel  Selector
		want string
	}{
		{"zero", Selector{}, ""},
		{"field without ranges", Selector{Field: UID}, ""},
		{"all", All(Namespace), "shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')"},
		{
			"halves, in the order given",
			Selector{Field: UID, Ranges: []Range{{1 << 63, math.MaxUint64}, {0, 1<<63 - 1}}},
			"shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000') || " +
				"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
		},
		{
			"lower-case digits, end is last+1",
			Selector{Field: Namespace, Ranges: []Range{{0xaa, 0xfe}}},
			"shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
		},
		{
			"one hash below the top",
			Selector{Field: UID, Ranges: []Range{{math.MaxUint64 - 1, math.MaxUint64 - 1}}},
			"shardRange(object.metadata.uid, '0xfffffffffffffffe', '0xffffffffffffffff')",
		},
		{
			"the top hash alone",
			Selector{Field: UID, Ranges: []Range{{math.MaxUint64, math.MaxUint64}}},
			"shardRange(object.metadata.uid, '0xffffffffffffffff', '0x10000000000000000')",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sel.String(); got != tt.want {
				t.Errorf("String() = %q\nwant       %q", got, tt.want)
			}
		})
	}
}

// TestMatchesBoundaries places a value's hash exactly on the bounds of wire ranges: the
// start is included, the end excluded, and the top of the space is reachable only
// through the 17-digit end.
func TestMatchesBoundaries(t *testing.T) {
	const v = "team-a"
	h := Hash(v)
	if h < 2 || h > math.MaxUint64-2 {
		t.Fatalf("pick another value: the hash of %q is too near an end of the space for h±2", v)
	}
	wire := func(start, end string) string {
		return "shardRange(object.metadata.namespace, '" + start + "', '" + end + "')"
	}
	tests := []struct {
		name     string
		selector string
		want     bool
	}{
		{"hash is the start", wire(hex16(h), topOfSpace), true},
		{"hash is the end", wire("0x0000000000000000", hex16(h)), false},
		{"hash is the end's predecessor", wire("0x0000000000000000", hex16(h+1)), true},
		{"one-hash range on it", wire(hex16(h), hex16(h+1)), true},
		{"one-hash range just above", wire(hex16(h+1), hex16(h+2)), false},
		{"one-hash range just below", wire(hex16(h-1), hex16(h)), false},
		{"whole space", wire("0x0000000000000000", topOfSpace), true},
		{"second of two terms", wire(hex16(h+1), topOfSpace) + " || " + wire(hex16(h), hex16(h+1)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Parse(tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Matches(v); got != tt.want {
				t.Errorf("Matches(%q) (hash %s) on %s = %v, want %v", v, hex16(h), tt.selector, got, tt.want)
			}
		})
	}

	// No value is known to hash to 2^64-1, so check the top on the ranges themselves.
	top := []struct {
		selector string
		want     bool
	}{
		{wire("0xffffffffffffffff", topOfSpace), true},
		{wire("0x8000000000000000", topOfSpace), true},
		{wire("0x8000000000000000", "0xffffffffffffffff"), false},
	}
	for _, tt := range top {
		sel, err := Parse(tt.selector)
		if err != nil {
			t.Fatal(err)
		}
		if got := sel.Ranges[0].Contains(math.MaxUint64); got != tt.want {
			t.Errorf("%s holds 2^64-1: %v, want %v", tt.selector, got, tt.want)
		}
	}
}

func TestMatchesWithoutRangesSelectsEverything(t *testing.T) {
	for _, sel := range []Selector{{}, {Field: Namespace}, {Field: UID, Ranges: []Range{}}} {
		if !sel.IsZero() {
			t.Errorf("%+v.IsZero() = false", sel)
		}
		if !sel.Matches("anything") || !sel.Matches("") {
			t.Errorf("%+v does not match everything", sel)
		}
	}
	if All(UID).IsZero() {
		t.Error("All(UID).IsZero() = true")
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   []Range
		want []Range
	}{
		{"none", nil, nil},
		{"one", []Range{{5, 9}}, []Range{{5, 9}}},
		{"sorted", []Range{{20, 30}, {0, 9}}, []Range{{0, 9}, {20, 30}}},
		{"adjacent merge", []Range{{10, 19}, {0, 9}, {20, 29}}, []Range{{0, 29}}},
		{"overlapping merge", []Range{{0, 15}, {10, 19}}, []Range{{0, 19}}},
		{"contained", []Range{{0, 100}, {10, 19}}, []Range{{0, 100}}},
		{"duplicates", []Range{{3, 4}, {3, 4}}, []Range{{3, 4}}},
		{"gap of one kept", []Range{{0, 9}, {11, 19}}, []Range{{0, 9}, {11, 19}}},
		{"up to the top", []Range{{1 << 63, math.MaxUint64}, {0, 1<<63 - 1}}, []Range{Whole()}},
		{"after the top", []Range{{math.MaxUint64, math.MaxUint64}, {5, math.MaxUint64}}, []Range{{5, math.MaxUint64}}},
		{"inverted kept last", []Range{{9, 1}, {0, 4}, {5, 6}}, []Range{{0, 6}, {9, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Selector{Field: UID, Ranges: append([]Range(nil), tt.in...)}
			got := in.Normalize()
			if diff := cmp.Diff(Selector{Field: UID, Ranges: tt.want}, got); diff != "" {
				t.Errorf("Normalize(%v) (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.in, in.Ranges); diff != "" {
				t.Errorf("Normalize modified its receiver (-before +after):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		sel  Selector
		err  string // "" for valid
	}{
		{"zero", Selector{}, ""},
		{"no ranges, unknown field", Selector{Field: "x"}, ""},
		{"all", All(UID), ""},
		{"unknown field", Selector{Field: "object.metadata.name", Ranges: []Range{Whole()}}, "not one the server hashes"},
		{"no field", Selector{Ranges: []Range{Whole()}}, "not one the server hashes"},
		{"inverted", Selector{Field: Namespace, Ranges: []Range{Whole(), {2, 1}}}, "range 1 is inverted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.sel.Validate()
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.err)
			}
		})
	}
}

func TestWithout(t *testing.T) {
	const top = math.MaxUint64
	for _, tc := range []struct {
		name       string
		have, drop []Range
		want       []Range
	}{
		{"nothing dropped", []Range{{10, 20}}, nil, []Range{{10, 20}}},
		{"all dropped", []Range{{10, 20}}, []Range{{0, top}}, nil},
		{"a hole", []Range{{10, 20}}, []Range{{13, 15}}, []Range{{10, 12}, {16, 20}}},
		{"the ends", []Range{{10, 20}}, []Range{{0, 10}, {20, 30}}, []Range{{11, 19}}},
		{"disjoint", []Range{{10, 20}}, []Range{{30, 40}}, []Range{{10, 20}}},
		{"the top of the space", []Range{{0, top}}, []Range{{top - 1, top}}, []Range{{0, top - 2}}},
		{"several, merged", []Range{{0, 9}, {10, 19}, {30, 39}}, []Range{{30, 39}}, []Range{{0, 19}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Without(tc.have, tc.drop), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Without (-want +got):\n%s", diff)
			}
		})
	}
}
