package object

import (
	"fmt"
	"strings"
)

// CheckFieldSelector checks the syntax of a ?fieldSelector= as the apiserver parses it:
// terms joined by commas (empty terms are skipped, as the apiserver skips them), each a
// field, an operator (=, == or !=) and a value, which may be empty; a backslash escapes
// the next byte. It refuses nothing the apiserver takes. Which fields a resource can be selected by
// only the server knows: a field it does not have is its 400, not an error here.
func CheckFieldSelector(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	for term := range splitUnescaped(s, ',') {
		if term == "" {
			continue
		}
		field, _, ok := cutOperator(term)
		if !ok {
			return fmt.Errorf("invalid field selector %q: %q is not field=value, field==value or field!=value", s, term)
		}
		if strings.TrimSpace(field) == "" {
			return fmt.Errorf("invalid field selector %q: %q names no field", s, term)
		}
	}
	return nil
}

// splitUnescaped yields the parts of s between unescaped seps.
func splitUnescaped(s string, sep byte) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case sep:
				if !yield(s[start:i]) {
					return
				}
				start = i + 1
			}
		}
		yield(s[start:])
	}
}

// cutOperator splits a term at its first unescaped operator.
func cutOperator(term string) (field, value string, ok bool) {
	for i := 0; i < len(term); i++ {
		switch term[i] {
		case '\\':
			i++
		case '!':
			if i+1 < len(term) && term[i+1] == '=' {
				return term[:i], term[i+2:], true
			}
		case '=':
			if i+1 < len(term) && term[i+1] == '=' {
				return term[:i], term[i+2:], true
			}
			return term[:i], term[i+1:], true
		}
	}
	return "", "", false
}
