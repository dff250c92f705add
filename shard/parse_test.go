package shard

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	lo  = "'0x0000000000000000'"
	mid = "'0x8000000000000000'"
	top = "'0x10000000000000000'"
)

func uidRange(start, end string) string {
	return "shardRange(object.metadata.uid, " + start + ", " + end + ")"
}

func lowerHalf() Range { return Range{0, 1<<63 - 1} }
func upperHalf() Range { return Range{1 << 63, math.MaxUint64} }

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Selector
	}{
		{"one term", uidRange(lo, mid), Selector{UID, []Range{lowerHalf()}}},
		{"whole space", uidRange(lo, top), Selector{UID, []Range{Whole()}}},
		{
			"namespace",
			"shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
			Selector{Namespace, []Range{{0xaa, 0xfe}}},
		},
		{"two terms", uidRange(lo, mid) + " || " + uidRange(mid, top), Selector{UID, []Range{lowerHalf(), upperHalf()}}},
		{
			"three terms, order kept",
			uidRange("'0x000000000000000a'", "'0x000000000000000f'") + "||" +
				uidRange(lo, "'0x0000000000000005'") + " || " +
				uidRange("'0x0000000000000005'", "'0x000000000000000a'"),
			Selector{UID, []Range{{10, 14}, {0, 4}, {5, 9}}},
		},
		{"overlaps kept", uidRange(lo, top) + " || " + uidRange(lo, mid), Selector{UID, []Range{Whole(), lowerHalf()}}},
		{"no spaces", "shardRange(object.metadata.uid," + lo + "," + mid + ")", Selector{UID, []Range{lowerHalf()}}},
		{
			"CEL white space between tokens",
			"  shardRange\t( object . metadata\n. uid ,\r\n " + lo + " ,\f" + mid + " )  ",
			Selector{UID, []Range{lowerHalf()}},
		},
		{"Unicode space around the whole", "\u00a0\v" + uidRange(lo, mid) + "\v\u0085", Selector{UID, []Range{lowerHalf()}}},
		{
			"comments",
			"// first half\n" + uidRange(lo, mid) + " // to 2^63\n|| // second half\n" + uidRange(mid, top) + " // end",
			Selector{UID, []Range{lowerHalf(), upperHalf()}},
		},
		{"parenthesized term", "(" + uidRange(lo, mid) + ")", Selector{UID, []Range{lowerHalf()}}},
		{
			"parenthesized groups",
			"((" + uidRange(lo, mid) + ") || (" + uidRange(mid, top) + " || " + uidRange(lo, top) + "))",
			Selector{UID, []Range{lowerHalf(), upperHalf(), Whole()}},
		},
		{"parenthesized arguments", "shardRange((object.metadata.uid), ((" + lo + ")), (" + mid + "))", Selector{UID, []Range{lowerHalf()}}},
		{"parenthesized path prefix", "shardRange(((object).metadata).uid, " + lo + ", " + mid + ")", Selector{UID, []Range{lowerHalf()}}},
		{"double quotes", `shardRange(object.metadata.uid, "0x0000000000000000", "0x8000000000000000")`, Selector{UID, []Range{lowerHalf()}}},
		{"raw strings", `shardRange(object.metadata.uid, r'0x0000000000000000', R"0x8000000000000000")`, Selector{UID, []Range{lowerHalf()}}},
		{"triple quotes", `shardRange(object.metadata.uid, '''0x0000000000000000''', """0x8000000000000000""")`, Selector{UID, []Range{lowerHalf()}}},
		{
			"escapes",
			`shardRange(object.metadata.uid, '\x30x\060000000000000000', "0x\u0038\U00000030\X300000000000000")`,
			Selector{UID, []Range{lowerHalf()}},
		},
		{"64 levels of parentheses", strings.Repeat("(", 64) + uidRange(lo, mid) + strings.Repeat(")", 64), Selector{UID, []Range{lowerHalf()}}},
		{
			"top hash alone",
			uidRange("'0xffffffffffffffff'", top),
			Selector{UID, []Range{{math.MaxUint64, math.MaxUint64}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Parse(%q) gave a selector that fails Validate: %v", tt.in, err)
			}
		})
	}
}

// TestParseRefuses holds what the server refuses (its parser tests' cases, and more from
// reading its parser and CEL's grammar), plus the one form it accepts and Parse does not.
func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name string
		in   string
		err  string // a fragment of the error, to be sure it fails for the right reason
	}{
		{"empty", "", "empty selector"},
		{"only white space", " \t\n\u00a0", "empty selector"},
		{"only a comment", "// nothing", "expected shardRange"},

		// Bounds.
		{"start without 0x", uidRange("'0000000000000000'", mid), `start "0000000000000000" must start with 0x`},
		{"end without 0x", uidRange(lo, "'8000000000000000'"), `end "8000000000000000" must start with 0x`},
		{"upper-case 0X", uidRange("'0X0000000000000000'", mid), "must start with 0x"},
		{"nothing after 0x", uidRange("'0x'", mid), "no digits after 0x"},
		{"short start", uidRange("'0x0'", mid), `start "0x0" must have exactly 16 hex digits (did you mean "0x0000000000000000"?)`},
		{"short end", uidRange(lo, "'0xff'"), `end "0xff" must have exactly 16 hex digits (did you mean "0x00000000000000ff"?)`},
		{"17 digits, not 2^64", uidRange(lo, "'0x10000000000000001'"), "has 17 digits"},
		{"17 digits with a leading zero", uidRange("'0x00000000000000000'", mid), "has 17 digits"},
		{"18 digits", uidRange("'0x000000000000000000'", top), "has 18 digits"},
		{"upper-case digit", uidRange(lo, "'0x8000000000000ABC'"), "upper-case hex digit 'A'"},
		{"not hex", uidRange("'0x0g00000000000000'", mid), `has 'g', not a hex digit`},
		{"non-ASCII", uidRange("'0x0é00000000000000'", mid), `has 'é', not a hex digit`},
		{"space inside the quotes", uidRange("' 0x0000000000000000'", mid), "must start with 0x"},
		{"start equals end", uidRange(mid, mid), "is not below end"},
		{"start above end", uidRange("'0xffffffffffffffff'", lo), "is not below end"},
		{"start is 2^64", uidRange(top, top), "is not below end"},
		{"integer bounds", "shardRange(object.metadata.uid, 0, 8)", "number"},
		{"unquoted hex", "shardRange(object.metadata.uid, 0x0000000000000000, 0x8000000000000000)", "number"},
		{"bytes literal", "shardRange(object.metadata.uid, b'0x0000000000000000', " + mid + ")", "bytes literal"},
		{"raw bytes literal", "shardRange(object.metadata.uid, " + lo + ", bR'0x8000000000000000')", "bytes literal"},
		{"bound is a field", "shardRange(object.metadata.uid, object.metadata.uid, " + mid + ")", "must be a quoted string"},
		{"bound is a call", "shardRange(object.metadata.uid, hex(0), " + mid + ")", "function calls are not allowed"},
		{"field of a string", "shardRange(object.metadata.uid, '0x0000000000000000'.x, " + mid + ")", "a string has no fields"},

		// Fields.
		{"name is not hashed", "shardRange(object.metadata.name, " + lo + ", " + mid + ")", "field object.metadata.name is not one the server hashes"},
		{"labels", "shardRange(object.metadata.labels, " + lo + ", " + mid + ")", "is not one the server hashes"},
		{"no object. root", "shardRange(metadata.uid, " + lo + ", " + mid + ")", "is not one the server hashes"},
		{"field as a string", "shardRange('object.metadata.uid', " + lo + ", " + mid + ")", "first argument is the field"},
		{"mixed fields", uidRange(lo, mid) + " || shardRange(object.metadata.namespace, " + mid + ", " + top + ")", "terms hash different fields"},
		{"index instead of select", "shardRange(object.metadata['uid'], " + lo + ", " + mid + ")", `unexpected '['`},
		{"optional select", "shardRange(object.?metadata.uid, " + lo + ", " + mid + ")", `unexpected '?'`},
		{"quoted identifier", "shardRange(object.metadata.`uid`, " + lo + ", " + mid + ")", "quoted identifiers"},
		{"method call in the path", "shardRange(object.metadata.uid(), " + lo + ", " + mid + ")", "function calls are not allowed"},

		// Shape.
		{"other function", "invalidFunc(object.metadata.uid, " + lo + ", " + mid + ")", "function invalidFunc is not allowed"},
		{"leading dot", "." + uidRange(lo, mid), "expected shardRange(…), found '.'"},
		{"receiver, which the server ignores", "x." + uidRange(lo, mid), `expected shardRange(…), found "x"`},
		{"&&", uidRange(lo, mid) + " && " + uidRange(mid, top), `unexpected '&'`},
		{"single |", uidRange(lo, mid) + " | " + uidRange(mid, top), `unexpected '|'`},
		{"negation", "!" + uidRange(lo, mid), `unexpected '!'`},
		{"comparison", "object.metadata.uid > '0x0'", `expected shardRange(…), found "object"`},
		{"two arguments", "shardRange(object.metadata.uid, " + lo + ")", "takes 3 arguments (field, start, end), not 2"},
		{"four arguments", "shardRange(object.metadata.uid, " + lo + ", " + mid + ", " + top + ")", "not 4"},
		{"no arguments", "shardRange()", "not 0"},
		{"trailing comma", "shardRange(object.metadata.uid, " + lo + ", " + mid + ",)", "expected a field or a quoted bound, found ')'"},
		{"no parentheses", "shardRange", `expected shardRange(…), found "shardRange"`},
		{"trailing ||", uidRange(lo, mid) + " ||", "found end of selector"},
		{"two terms without ||", uidRange(lo, mid) + " " + uidRange(mid, top), "after a complete term"},
		{"unbalanced (", "(" + uidRange(lo, mid), "expected ')' or '||'"},
		{"unbalanced )", uidRange(lo, mid) + ")", "after a complete term"},
		{"select on a term", "(" + uidRange(lo, mid) + ").x", "after a complete term"},
		{"ternary", "true ? " + uidRange(lo, mid) + " : " + uidRange(mid, top), `unexpected '?'`},
		{"65 levels of parentheses", strings.Repeat("(", 65) + uidRange(lo, mid) + strings.Repeat(")", 65), "nested more than 64 deep"},
		{"65 levels in an argument", "shardRange(" + strings.Repeat("(", 65) + "object.metadata.uid" + strings.Repeat(")", 65) + ", " + lo + ", " + mid + ")", "nested more than 64 deep"},
		{"longer than the server reads", uidRange(lo, mid) + " //" + strings.Repeat("x", 100_000), "more than the server's 100000"},

		// Strings.
		{"unclosed at the end", "shardRange(object.metadata.uid, " + lo + ", '0x8000000000000000", "string never closed"},
		{"newline in a single-quoted string", "shardRange(object.metadata.uid, '0x00000000\n00000000', " + mid + ")", "end of its line"},
		{"newline in a triple-quoted string", "shardRange(object.metadata.uid, '''0x00000000\n00000000''', " + mid + ")", `has '\n', not a hex digit`},
		{"unknown escape", `shardRange(object.metadata.uid, '\q0x0000000000000000', ` + mid + ")", "invalid escape sequence"},
		{"short \\x escape", `shardRange(object.metadata.uid, '\x3', ` + mid + ")", "invalid escape sequence"},
		{"octal escape above \\377", `shardRange(object.metadata.uid, '\400', ` + mid + ")", "invalid escape sequence"},
		{"surrogate escape", `shardRange(object.metadata.uid, '\ud800', ` + mid + ")", "invalid escape sequence"},
		{"raw string keeps the backslash", `shardRange(object.metadata.uid, r'\x30x0000000000000000', ` + mid + ")", "must start with 0x"},
		{"escape decodes to a non-hex", `shardRange(object.metadata.uid, '0x\x410000000000000000', ` + mid + ")", "upper-case hex digit 'A'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error containing %q", tt.in, sel, tt.err)
			}
			if !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q) error %q, want it to contain %q", tt.in, err, tt.err)
			}
			if !strings.HasPrefix(err.Error(), "shard: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestParseErrorOffset(t *testing.T) {
	// The offset counts from the caller's text, leading white space included.
	_, err := Parse("  " + uidRange(lo, "'0xff'"))
	want := "shard: at offset 56: end \"0xff\" must have exactly 16 hex digits"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v, want it to start with %q", err, want)
	}
}

// TestParseRoundTrip checks String against Parse both ways: the server's canonical texts
// come back byte for byte, and random selectors survive String then Parse.
func TestParseRoundTrip(t *testing.T) {
	for _, in := range []string{
		uidRange(lo, mid),
		uidRange(mid, top),
		uidRange(lo, top),
		"shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
		uidRange(lo, mid) + " || " + uidRange(mid, top),
	} {
		sel, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if got := sel.String(); got != in {
			t.Errorf("Parse(%q).String() = %q", in, got)
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	edges := []uint64{0, 1, 1<<63 - 1, 1 << 63, math.MaxUint64 - 1, math.MaxUint64}
	pick := func() uint64 {
		if rng.IntN(3) == 0 {
			return edges[rng.IntN(len(edges))]
		}
		return rng.Uint64()
	}
	for range 2000 {
		sel := Selector{Field: [2]Field{Namespace, UID}[rng.IntN(2)]}
		for range 1 + rng.IntN(5) {
			a, b := pick(), pick()
			sel.Ranges = append(sel.Ranges, Range{First: min(a, b), Last: max(a, b)})
		}
		got, err := Parse(sel.String())
		if err != nil {
			t.Fatalf("Parse(%q): %v", sel, err)
		}
		if diff := cmp.Diff(sel, got); diff != "" {
			t.Fatalf("Parse(String()) of %q (-want +got):\n%s", sel, diff)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		uidRange(lo, mid),
		uidRange(lo, mid) + " || " + uidRange(mid, top),
		"(shardRange((object.metadata).namespace, \"0x00000000000000aa\", r'0x00000000000000ff')) // c",
		`shardRange(object.metadata.uid, '''0x0000000000000000''', '\x30x8000000000000000')`,
		uidRange("'0x0'", mid),
		uidRange(lo, "'0x10000000000000001'"),
		"shardRange(object.metadata.uid, '0x0000000000000000'",
		"((((",
		"x.shardRange(object.metadata.uid, 0, 8) && !y",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		sel, err := Parse(in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "shard: ") {
				t.Fatalf("Parse(%q) error %q lacks the package prefix", in, err)
			}
			return
		}
		if sel.IsZero() {
			t.Fatalf("Parse(%q) succeeded with no ranges", in)
		}
		if err := sel.Validate(); err != nil {
			t.Fatalf("Parse(%q) gave an invalid selector: %v", in, err)
		}
		// What parses prints to its canonical form, which parses back to the same thing.
		again, err := Parse(sel.String())
		if err != nil {
			t.Fatalf("%q parsed, but its String() %q does not: %v", in, sel.String(), err)
		}
		if diff := cmp.Diff(sel, again); diff != "" {
			t.Fatalf("Parse(String()) of %q (-first +second):\n%s", in, diff)
		}
		if again.String() != sel.String() {
			t.Fatalf("String() not stable: %q vs %q", sel.String(), again.String())
		}
		// Normalizing keeps what is selected.
		norm := sel.Normalize()
		for _, r := range sel.Ranges {
			for _, h := range []uint64{r.First, r.Last} {
				found := false
				for _, n := range norm.Ranges {
					found = found || n.Contains(h)
				}
				if !found {
					t.Fatalf("Normalize of %q lost hash %#x", sel, h)
				}
			}
		}
	})
}
