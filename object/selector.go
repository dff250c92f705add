package object

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Operator is a label selector operator.
type Operator string

// Operators of the selector string syntax and of matchExpressions.
const (
	OpEquals       Operator = "="
	OpDoubleEquals Operator = "=="
	OpNotEquals    Operator = "!="
	OpIn           Operator = "In"
	OpNotIn        Operator = "NotIn"
	OpExists       Operator = "Exists"
	OpDoesNotExist Operator = "DoesNotExist"
	OpGreaterThan  Operator = "Gt"
	OpLessThan     Operator = "Lt"
)

// Requirement is one term of a selector: key, operator and values.
type Requirement struct {
	Key      string
	Operator Operator
	Values   []string
}

// Matches reports whether labels satisfy the requirement.
func (r Requirement) Matches(labels map[string]string) bool {
	v, has := labels[r.Key]
	switch r.Operator {
	case OpEquals, OpDoubleEquals, OpIn:
		return has && slices.Contains(r.Values, v)
	case OpNotEquals, OpNotIn:
		return !has || !slices.Contains(r.Values, v)
	case OpExists:
		return has
	case OpDoesNotExist:
		return !has
	case OpGreaterThan, OpLessThan:
		if !has {
			return false
		}
		got, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		want, _ := strconv.ParseInt(r.Values[0], 10, 64) // validated when built
		if r.Operator == OpGreaterThan {
			return got > want
		}
		return got < want
	}
	return false
}

func (r Requirement) String() string {
	switch r.Operator {
	case OpExists:
		return r.Key
	case OpDoesNotExist:
		return "!" + r.Key
	case OpIn, OpNotIn:
		op := " in "
		if r.Operator == OpNotIn {
			op = " notin "
		}
		vals := slices.Clone(r.Values)
		slices.Sort(vals)
		return r.Key + op + "(" + strings.Join(vals, ",") + ")"
	case OpGreaterThan:
		return r.Key + ">" + r.Values[0]
	case OpLessThan:
		return r.Key + "<" + r.Values[0]
	}
	return r.Key + string(r.Operator) + r.Values[0]
}

// Selector is a conjunction of requirements. The zero Selector matches everything.
type Selector struct {
	Requirements []Requirement
	nothing      bool
}

// Everything matches all objects.
func Everything() Selector { return Selector{} }

// Nothing matches no object (what a nil LabelSelector means).
func Nothing() Selector { return Selector{nothing: true} }

// Matches reports whether labels satisfy every requirement.
func (s Selector) Matches(labels map[string]string) bool {
	if s.nothing {
		return false
	}
	for _, r := range s.Requirements {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector matches everything.
func (s Selector) Empty() bool { return !s.nothing && len(s.Requirements) == 0 }

// String returns the selector in the ?labelSelector= syntax, requirements sorted by key.
// Nothing has no string form and returns "".
func (s Selector) String() string {
	reqs := slices.Clone(s.Requirements)
	slices.SortStableFunc(reqs, func(a, b Requirement) int { return strings.Compare(a.Key, b.Key) })
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// SelectorFromSet returns the selector that matches exactly these key=value pairs.
func SelectorFromSet(set map[string]string) Selector {
	var s Selector
	for k, v := range set {
		s.Requirements = append(s.Requirements, Requirement{Key: k, Operator: OpEquals, Values: []string{v}})
	}
	return s
}

// LabelSelector is the structured selector of a workload's spec.selector.
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty" pb:"1"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty" pb:"2"`
}

// LabelSelectorRequirement is one entry of matchExpressions.
type LabelSelectorRequirement struct {
	Key      string   `json:"key" pb:"1"`
	Operator Operator `json:"operator" pb:"2"`
	Values   []string `json:"values,omitempty" pb:"3"`
}

// AsSelector converts a LabelSelector. As in Kubernetes, a nil selector matches nothing and
// an empty one matches everything. Bad operators, keys or values are errors.
func (ls *LabelSelector) AsSelector() (Selector, error) {
	if ls == nil {
		return Nothing(), nil
	}
	var s Selector
	keys := make([]string, 0, len(ls.MatchLabels))
	for k := range ls.MatchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r, err := NewRequirement(k, OpEquals, []string{ls.MatchLabels[k]})
		if err != nil {
			return Selector{}, err
		}
		s.Requirements = append(s.Requirements, r)
	}
	for _, e := range ls.MatchExpressions {
		switch e.Operator {
		case OpIn, OpNotIn, OpExists, OpDoesNotExist:
		default:
			return Selector{}, fmt.Errorf("matchExpressions: %q is not a valid operator (In, NotIn, Exists, DoesNotExist)", e.Operator)
		}
		r, err := NewRequirement(e.Key, e.Operator, e.Values)
		if err != nil {
			return Selector{}, err
		}
		s.Requirements = append(s.Requirements, r)
	}
	return s, nil
}

// NewRequirement validates key, operator and values and builds a Requirement.
func NewRequirement(key string, op Operator, values []string) (Requirement, error) {
	if err := ValidateLabelKey(key); err != nil {
		return Requirement{}, err
	}
	switch op {
	case OpIn, OpNotIn:
		if len(values) == 0 {
			return Requirement{}, fmt.Errorf("label selector %q: operator %s needs at least one value", key, op)
		}
	case OpEquals, OpDoubleEquals, OpNotEquals:
		if len(values) != 1 {
			return Requirement{}, fmt.Errorf("label selector %q: operator %s needs exactly one value", key, op)
		}
	case OpExists, OpDoesNotExist:
		if len(values) != 0 {
			return Requirement{}, fmt.Errorf("label selector %q: operator %s takes no values", key, op)
		}
	case OpGreaterThan, OpLessThan:
		if len(values) != 1 {
			return Requirement{}, fmt.Errorf("label selector %q: operator %s needs exactly one value", key, op)
		}
		if _, err := strconv.ParseInt(values[0], 10, 64); err != nil {
			return Requirement{}, fmt.Errorf("label selector %q: operator %s needs an integer value, got %q", key, op, values[0])
		}
		return Requirement{Key: key, Operator: op, Values: values}, nil
	default:
		return Requirement{}, fmt.Errorf("label selector %q: unknown operator %q", key, op)
	}
	for _, v := range values {
		if err := ValidateLabelValue(v); err != nil {
			return Requirement{}, fmt.Errorf("label selector %q: %w", key, err)
		}
	}
	return Requirement{Key: key, Operator: op, Values: values}, nil
}

// ValidateLabelKey checks a label key: an optional DNS-subdomain prefix and "/", then a
// name of at most 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric.
func ValidateLabelKey(key string) error {
	prefix, name, hasPrefix := strings.Cut(key, "/")
	if !hasPrefix {
		name, prefix = prefix, ""
	}
	if hasPrefix {
		if prefix == "" || len(prefix) > 253 || !isDNSSubdomain(prefix) {
			return fmt.Errorf("invalid label key %q: prefix must be a DNS subdomain (lowercase alphanumerics, '-' and '.')", key)
		}
	}
	if name == "" {
		return fmt.Errorf("invalid label key %q: name part must not be empty", key)
	}
	if len(name) > 63 || !isQualifiedName(name) {
		return fmt.Errorf("invalid label key %q: name part must be at most 63 characters of [A-Za-z0-9-_.], starting and ending with an alphanumeric", key)
	}
	return nil
}

// ValidateLabelValue checks a label value: empty, or at most 63 characters of
// [A-Za-z0-9-_.] starting and ending alphanumeric.
func ValidateLabelValue(v string) error {
	if v == "" {
		return nil
	}
	if len(v) > 63 || !isQualifiedName(v) {
		return fmt.Errorf("invalid label value %q: must be at most 63 characters of [A-Za-z0-9-_.], starting and ending with an alphanumeric", v)
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isQualifiedName(s string) bool {
	if !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isDNSSubdomain(s string) bool {
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			lowerAlnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
			if !lowerAlnum && (c != '-' || i == 0 || i == len(label)-1) {
				return false
			}
		}
	}
	return true
}
