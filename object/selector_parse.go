package object

import (
	"fmt"
	"strings"
)

// ParseSelector parses the label selector syntax of ?labelSelector=:
//
//	app=web, tier!=db, env in (prod,staging), track notin (canary), owner, !legacy, gen>3
//
// Requirements are joined by commas (all must hold). The empty string selects everything.
// Errors name the position and what was expected.
func ParseSelector(s string) (Selector, error) {
	p := selectorParser{lex: selectorLexer{in: s}}
	var sel Selector
	if strings.TrimSpace(s) == "" {
		return sel, nil
	}
	for {
		r, err := p.requirement()
		if err != nil {
			return Selector{}, fmt.Errorf("invalid label selector %q: %w", s, err)
		}
		sel.Requirements = append(sel.Requirements, r)
		t := p.lex.next()
		switch t.kind {
		case tokEOF:
			return sel, nil
		case tokComma:
			continue
		default:
			return Selector{}, fmt.Errorf("invalid label selector %q: at %d: expected ',' or end, found %q", s, t.pos, t.text)
		}
	}
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokNot      // !
	tokEq       // =
	tokDoubleEq // ==
	tokNotEq    // !=
	tokGt       // >
	tokLt       // <
	tokOpenPar  // (
	tokClosePar // )
	tokComma    // ,
)

type token struct {
	kind tokKind
	text string
	pos  int
}

// selectorLexer splits the input into identifiers and the punctuation !,=,==,!=,<,>,(,),
// skipping white space. Keywords (in, notin) are identifiers; the parser tells them apart.
type selectorLexer struct {
	in  string
	pos int
	// peeked holds a token read ahead by peek.
	peeked *token
}

func (l *selectorLexer) peek() token {
	if l.peeked == nil {
		t := l.scan()
		l.peeked = &t
	}
	return *l.peeked
}

func (l *selectorLexer) next() token {
	t := l.peek()
	l.peeked = nil
	return t
}

func (l *selectorLexer) scan() token {
	for l.pos < len(l.in) && isSpace(l.in[l.pos]) {
		l.pos++
	}
	start := l.pos
	if l.pos >= len(l.in) {
		return token{kind: tokEOF, pos: start}
	}
	two := ""
	if l.pos+1 < len(l.in) {
		two = l.in[l.pos : l.pos+2]
	}
	switch two {
	case "==":
		l.pos += 2
		return token{tokDoubleEq, two, start}
	case "!=":
		l.pos += 2
		return token{tokNotEq, two, start}
	}
	if k, ok := punctuation(l.in[l.pos]); ok {
		l.pos++
		return token{k, l.in[start:l.pos], start}
	}
	for l.pos < len(l.in) && !isSpace(l.in[l.pos]) && !isPunct(l.in[l.pos]) {
		l.pos++
	}
	return token{tokIdent, l.in[start:l.pos], start}
}

func punctuation(c byte) (tokKind, bool) {
	switch c {
	case '!':
		return tokNot, true
	case '=':
		return tokEq, true
	case '>':
		return tokGt, true
	case '<':
		return tokLt, true
	case '(':
		return tokOpenPar, true
	case ')':
		return tokClosePar, true
	case ',':
		return tokComma, true
	}
	return 0, false
}

func isPunct(c byte) bool { _, ok := punctuation(c); return ok }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

type selectorParser struct{ lex selectorLexer }

func (p *selectorParser) requirement() (Requirement, error) {
	t := p.lex.next()
	if t.kind == tokNot {
		k := p.lex.next()
		if k.kind != tokIdent {
			return Requirement{}, fmt.Errorf("at %d: expected a key after '!', found %q", k.pos, k.text)
		}
		return NewRequirement(k.text, OpDoesNotExist, nil)
	}
	if t.kind != tokIdent {
		return Requirement{}, fmt.Errorf("at %d: expected a key, found %q", t.pos, describe(t))
	}
	key := t.text
	op := p.lex.peek()
	switch op.kind {
	case tokEOF, tokComma:
		return NewRequirement(key, OpExists, nil)
	case tokEq, tokDoubleEq, tokNotEq, tokGt, tokLt:
		p.lex.next()
		v := p.lex.peek()
		value := ""
		if v.kind == tokIdent {
			value = p.lex.next().text
		} else if v.kind != tokEOF && v.kind != tokComma {
			return Requirement{}, fmt.Errorf("at %d: expected a value after %q, found %q", v.pos, op.text, v.text)
		}
		ops := map[tokKind]Operator{tokEq: OpEquals, tokDoubleEq: OpDoubleEquals, tokNotEq: OpNotEquals, tokGt: OpGreaterThan, tokLt: OpLessThan}
		return NewRequirement(key, ops[op.kind], []string{value})
	case tokIdent:
		if op.text != "in" && op.text != "notin" {
			break
		}
		p.lex.next()
		values, err := p.values()
		if err != nil {
			return Requirement{}, err
		}
		o := OpIn
		if op.text == "notin" {
			o = OpNotIn
		}
		return NewRequirement(key, o, values)
	}
	return Requirement{}, fmt.Errorf("at %d: expected an operator (=, ==, !=, in, notin, <, >) or ',' after key %q, found %q", op.pos, key, describe(op))
}

// values parses "(a, b, c)". An empty slot is the empty value, as in Kubernetes.
func (p *selectorParser) values() ([]string, error) {
	if t := p.lex.next(); t.kind != tokOpenPar {
		return nil, fmt.Errorf("at %d: expected '(' to open a value set, found %q", t.pos, describe(t))
	}
	var values []string
	current := ""
	for {
		t := p.lex.next()
		switch t.kind {
		case tokIdent:
			if current != "" {
				return nil, fmt.Errorf("at %d: expected ',' or ')' between values, found %q", t.pos, t.text)
			}
			current = t.text
		case tokComma:
			values = append(values, current)
			current = ""
		case tokClosePar:
			return append(values, current), nil
		default:
			return nil, fmt.Errorf("at %d: expected a value, ',' or ')', found %q", t.pos, describe(t))
		}
	}
}

func describe(t token) string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return t.text
}
