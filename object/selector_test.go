package object

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in      string
		want    []Requirement
		matches map[string]string
		misses  map[string]string
	}{
		{in: "", want: nil, matches: map[string]string{"any": "thing"}},
		{in: "app=web", want: []Requirement{{"app", OpEquals, []string{"web"}}},
			matches: map[string]string{"app": "web"}, misses: map[string]string{"app": "db"}},
		{in: " app == web , tier!=db", want: []Requirement{{"app", OpDoubleEquals, []string{"web"}}, {"tier", OpNotEquals, []string{"db"}}},
			matches: map[string]string{"app": "web"}, misses: map[string]string{"app": "web", "tier": "db"}},
		{in: "env in (prod, staging),track notin (canary)", want: []Requirement{{"env", OpIn, []string{"prod", "staging"}}, {"track", OpNotIn, []string{"canary"}}},
			matches: map[string]string{"env": "staging"}, misses: map[string]string{"env": "prod", "track": "canary"}},
		{in: "owner,!legacy", want: []Requirement{{"owner", OpExists, nil}, {"legacy", OpDoesNotExist, nil}},
			matches: map[string]string{"owner": ""}, misses: map[string]string{"owner": "", "legacy": "1"}},
		{in: "gen>3,gen<10", want: []Requirement{{"gen", OpGreaterThan, []string{"3"}}, {"gen", OpLessThan, []string{"10"}}},
			matches: map[string]string{"gen": "5"}, misses: map[string]string{"gen": "x"}},
		{in: "example.com/role=", want: []Requirement{{"example.com/role", OpEquals, []string{""}}},
			matches: map[string]string{"example.com/role": ""}, misses: map[string]string{}},
		{in: "x in ()", want: []Requirement{{"x", OpIn, []string{""}}},
			matches: map[string]string{"x": ""}, misses: map[string]string{"x": "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseSelector(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, s.Requirements, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("requirements (-want +got):\n%s", d)
			}
			if tt.matches != nil && !s.Matches(tt.matches) {
				t.Errorf("does not match %v", tt.matches)
			}
			if tt.misses != nil && s.Matches(tt.misses) {
				t.Errorf("matches %v", tt.misses)
			}
			again, err := ParseSelector(s.String())
			if err != nil {
				t.Fatalf("String() %q does not parse: %v", s.String(), err)
			}
			if again.String() != s.String() {
				t.Errorf("String() not stable: %q then %q", s.String(), again.String())
			}
		})
	}
}

func TestParseSelectorErrors(t *testing.T) {
	tests := []struct{ in, wantSub string }{
		{"app=web,", "expected a key"},
		{"=web", "expected a key"},
		{"app web", "expected an operator"},
		{"app in prod", "expected '('"},
		{"app in (a b)", "expected ',' or ')'"},
		{"app in (a", "expected a value"},
		{"app=(x)", "expected a value"},
		{"gen>x", "integer value"},
		{"-bad=x", "invalid label key"},
		{"Bad.Prefix/x=1", "prefix must be a DNS subdomain"},
		{"app=" + strings.Repeat("v", 64), "invalid label value"},
		{"!", "expected a key after '!'"},
		{"a=b c", "expected ',' or end"},
	}
	for _, tt := range tests {
		_, err := ParseSelector(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.wantSub) {
			t.Errorf("ParseSelector(%q) error = %v, want it to mention %q", tt.in, err, tt.wantSub)
		}
	}
}

func TestLabelSelectorAsSelector(t *testing.T) {
	var nilSel *LabelSelector
	if s, _ := nilSel.AsSelector(); s.Matches(map[string]string{}) {
		t.Error("a nil selector must match nothing")
	}
	if s, _ := (&LabelSelector{}).AsSelector(); !s.Matches(map[string]string{"a": "b"}) {
		t.Error("an empty selector must match everything")
	}
	ls := &LabelSelector{MatchLabels: map[string]string{"app": "web"},
		MatchExpressions: []LabelSelectorRequirement{{Key: "tier", Operator: OpNotIn, Values: []string{"db"}}}}
	s, err := ls.AsSelector()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "app=web,tier notin (db)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	for _, bad := range []LabelSelectorRequirement{
		{Key: "a", Operator: "Equals", Values: []string{"b"}},
		{Key: "a", Operator: OpIn},
		{Key: "a", Operator: OpExists, Values: []string{"b"}},
	} {
		if _, err := (&LabelSelector{MatchExpressions: []LabelSelectorRequirement{bad}}).AsSelector(); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
}

func FuzzParseSelector(f *testing.F) {
	for _, seed := range []string{"", "a=b", "a in (x,y),!c", "x.io/k notin (),d", "g>1", "a==b,c!=d", "(", "a=b=c", "!!a"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSelector(in)
		if err != nil {
			return
		}
		// Whatever parses must print to something that parses to the same selector.
		again, err := ParseSelector(s.String())
		if err != nil {
			t.Fatalf("%q parsed, but its String() %q does not: %v", in, s.String(), err)
		}
		if again.String() != s.String() {
			t.Fatalf("%q: String() not stable: %q vs %q", in, s.String(), again.String())
		}
		s.Matches(map[string]string{"a": "b"})
	})
}
