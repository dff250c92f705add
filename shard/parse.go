package shard

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The server reads shardSelector with a CEL parser and then walks the syntax tree, so what
// it accepts is CEL syntax narrowed to one shape. Parse reads that shape directly, without
// a CEL parser. The limits below are the server parser's, or stricter.
const (
	// maxSelectorRunes is the CEL parser's default limit on an expression's length, in
	// code points.
	maxSelectorRunes = 100_000
	// maxNesting bounds nested parentheses. The CEL parser gives up at about 250 levels
	// (its default recursion limit); nothing real nests more than a few, and a bound
	// well under it keeps Parse's recursion shallow whatever the input.
	maxNesting = 64
)

// Parse reads a shardSelector as the server does, and accepts and refuses what it does:
//
//   - one or more shardRange(field, 'start', 'end') terms joined by ||, each term or group
//     optionally in parentheses; all terms must name the same field;
//   - field is object.metadata.namespace or object.metadata.uid;
//   - start and end are quoted strings: 0x and exactly 16 lower-case hex digits, the end
//     also 0x10000000000000000 (2^64) for the top of the space; start < end;
//   - CEL's white space and // comments between tokens, CEL's string quoting (single,
//     double or triple quotes, raw strings such as r'…', escapes), and Unicode white
//     space around the whole.
//
// Parse keeps the ranges in the text's order, overlaps and all, as the server does;
// Normalize them to compare selectors. The result always has at least one range and
// passes Validate; its String is the form the server echoes back.
//
// Two things the server accepts are refused here. A receiver before shardRange, as in
// x.shardRange(object.metadata.uid, '…', '…'): the server ignores the x, whatever it
// is; Parse refuses it rather than drop part of what it was given. And parentheses
// nested more than 64 deep, which the server reads up to its parser's recursion limit
// of about 250.
func Parse(text string) (Selector, error) {
	lead := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	text = strings.TrimSpace(text)
	if text == "" {
		return Selector{}, errors.New("shard: empty selector; to select everything, send no shardSelector at all")
	}
	if n := utf8.RuneCountInString(text); n > maxSelectorRunes {
		return Selector{}, fmt.Errorf("shard: selector is %d characters long, more than the server's %d", n, maxSelectorRunes)
	}
	p := &parser{src: text, lead: lead}
	var sel Selector
	err := p.next()
	if err == nil {
		err = p.expr(&sel, 0)
	}
	if err == nil && p.tok.kind != tokEOF {
		err = p.errorf(p.tok.pos, "unexpected %s after a complete term; join terms with ||", p.tok)
	}
	if err != nil {
		return Selector{}, err
	}
	return sel, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokString
	tokDot
	tokComma
	tokLParen
	tokRParen
	tokOr
)

type token struct {
	kind tokKind
	pos  int    // offset of the token's first byte in parser.src
	text string // the identifier, or the string literal as written
	val  string // a string literal's value, quotes removed and escapes decoded
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of selector"
	case tokIdent:
		return fmt.Sprintf("%q", t.text)
	case tokString:
		return "string " + t.text
	case tokDot:
		return "'.'"
	case tokComma:
		return "','"
	case tokLParen:
		return "'('"
	case tokRParen:
		return "')'"
	default:
		return "'||'"
	}
}

// parser is a recursive-descent reader with one token of lookahead.
type parser struct {
	src  string // the selector, trimmed
	lead int    // bytes trimmed off the front, so errors give offsets in the caller's text
	end  int    // offset just past tok
	tok  token
}

func (p *parser) errorf(pos int, format string, args ...any) error {
	return fmt.Errorf("shard: at offset %d: %s", p.lead+pos, fmt.Sprintf(format, args...))
}

// next reads the token after p.tok into p.tok.
func (p *parser) next() error {
	src, i := p.src, p.end
	// CEL's white space and comments; nothing else separates tokens.
skip:
	for i < len(src) {
		switch {
		case src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r' || src[i] == '\f':
			i++
		case strings.HasPrefix(src[i:], "//"):
			if nl := strings.IndexByte(src[i:], '\n'); nl >= 0 {
				i += nl
			} else {
				i = len(src)
			}
		default:
			break skip
		}
	}
	if i == len(src) {
		p.tok, p.end = token{kind: tokEOF, pos: i}, i
		return nil
	}
	c := src[i]
	if k := punctuation(c); k != tokEOF {
		p.tok, p.end = token{kind: k, pos: i, text: src[i : i+1]}, i+1
		return nil
	}
	switch {
	case strings.HasPrefix(src[i:], "||"):
		p.tok, p.end = token{kind: tokOr, pos: i, text: "||"}, i+2
		return nil
	case c == '\'' || c == '"':
		return p.lexString(i, i, false)
	case isLetter(c) || c == '_':
		j := i + 1
		for j < len(src) && (isLetter(src[j]) || isDigit(src[j]) || src[j] == '_') {
			j++
		}
		word := src[i:j]
		if j < len(src) && (src[j] == '\'' || src[j] == '"') {
			// CEL's string prefixes: r for raw, b for bytes.
			switch word {
			case "r", "R":
				return p.lexString(i, j, true)
			case "b", "B", "br", "bR", "Br", "BR":
				return p.errorf(i, "bytes literal %s…; bounds are strings such as '0x8000000000000000'", word)
			}
		}
		p.tok, p.end = token{kind: tokIdent, pos: i, text: word}, j
		return nil
	case isDigit(c):
		return p.errorf(i, "number; bounds are quoted strings such as '0x8000000000000000'")
	case c == '`':
		return p.errorf(i, "quoted identifiers (`…`) are not CEL the server reads")
	default:
		r, _ := utf8.DecodeRuneInString(src[i:])
		return p.errorf(i, "unexpected %q; a selector is shardRange(field, 'start', 'end') terms joined by ||", r)
	}
}

// lexString reads the string literal that starts at start (at its r prefix, if any) and
// whose quotes start at q, with CEL's rules: ', " or a tripled quote as delimiters; a
// single-quoted string ends at its line; escapes are decoded unless the string is raw.
func (p *parser) lexString(start, q int, raw bool) error {
	src := p.src
	delim := src[q : q+1]
	if strings.HasPrefix(src[q:], strings.Repeat(delim, 3)) {
		delim = src[q : q+3]
	}
	var val []byte
	for i := q + len(delim); ; {
		switch {
		case i >= len(src):
			return p.errorf(start, "string never closed")
		case strings.HasPrefix(src[i:], delim):
			end := i + len(delim)
			p.tok, p.end = token{kind: tokString, pos: start, text: src[start:end], val: string(val)}, end
			return nil
		case len(delim) == 1 && (src[i] == '\n' || src[i] == '\r'):
			return p.errorf(start, "string not closed before the end of its line")
		case src[i] == '\\' && !raw:
			r, n, ok := unescape(src[i:])
			if !ok {
				return p.errorf(i, "invalid escape sequence in string")
			}
			val = utf8.AppendRune(val, r)
			i += n
		default:
			val = append(val, src[i])
			i++
		}
	}
}

// unescape decodes the CEL escape sequence at the start of s (which begins with a
// backslash) and reports its length.
func unescape(s string) (r rune, n int, ok bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	if i := strings.IndexByte(`abfnrtv"'\?`+"`", s[1]); i >= 0 {
		return rune("\a\b\f\n\r\t\v\"'\\?`"[i]), 2, true
	}
	digits, base := 0, rune(16)
	switch s[1] {
	case 'x', 'X':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	case '0', '1', '2', '3':
		// Octal: exactly three digits, the first at most 3.
		digits, base = 3, 8
	default:
		return 0, 0, false
	}
	start := 2
	if base == 8 {
		start = 1
	}
	if len(s) < start+digits {
		return 0, 0, false
	}
	for _, c := range []byte(s[start : start+digits]) {
		d := rune(-1)
		switch {
		case isDigit(c):
			d = rune(c - '0')
		case 'a' <= c && c <= 'f':
			d = rune(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = rune(c-'A') + 10
		}
		if d < 0 || d >= base {
			return 0, 0, false
		}
		r = r*base + d
	}
	if !utf8.ValidRune(r) {
		return 0, 0, false
	}
	return r, start + digits, true
}

// punctuation is the token a one-byte punctuation mark makes, or tokEOF for other bytes.
func punctuation(c byte) tokKind {
	switch c {
	case '.':
		return tokDot
	case ',':
		return tokComma
	case '(':
		return tokLParen
	case ')':
		return tokRParen
	}
	return tokEOF
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

func (p *parser) expect(k tokKind, what string) error {
	if p.tok.kind != k {
		return p.errorf(p.tok.pos, "expected %s, found %s", what, p.tok)
	}
	return p.next()
}

// expr reads terms joined by ||, appending their ranges to sel.
func (p *parser) expr(sel *Selector, depth int) error {
	for {
		if err := p.term(sel, depth); err != nil {
			return err
		}
		if p.tok.kind != tokOr {
			return nil
		}
		if err := p.next(); err != nil {
			return err
		}
	}
}

// term reads one shardRange call or a parenthesized expr.
func (p *parser) term(sel *Selector, depth int) error {
	switch p.tok.kind {
	case tokLParen:
		if depth >= maxNesting {
			return p.errorf(p.tok.pos, "parentheses nested more than %d deep", maxNesting)
		}
		if err := p.next(); err != nil {
			return err
		}
		if err := p.expr(sel, depth+1); err != nil {
			return err
		}
		return p.expect(tokRParen, "')' or '||'")
	case tokIdent:
		return p.call(sel, depth)
	default:
		return p.errorf(p.tok.pos, "expected shardRange(…), found %s", p.tok)
	}
}

// call reads shardRange(field, 'start', 'end') and appends its range to sel.
func (p *parser) call(sel *Selector, depth int) error {
	name, pos := p.tok.text, p.tok.pos
	if err := p.next(); err != nil {
		return err
	}
	if p.tok.kind != tokLParen {
		return p.errorf(pos, "expected shardRange(…), found %q", name)
	}
	if name != "shardRange" {
		return p.errorf(pos, "function %s is not allowed; a selector is shardRange(…) terms joined by ||", name)
	}
	if err := p.next(); err != nil {
		return err
	}
	var args []arg
	for p.tok.kind != tokRParen {
		if len(args) > 0 {
			if err := p.expect(tokComma, "',' or ')'"); err != nil {
				return err
			}
		}
		a, err := p.arg(depth)
		if err != nil {
			return err
		}
		args = append(args, a)
	}
	if err := p.next(); err != nil {
		return err
	}
	if len(args) != 3 {
		return p.errorf(pos, "shardRange takes 3 arguments (field, start, end), not %d", len(args))
	}

	f, start, end := args[0], args[1], args[2]
	if !f.isPath {
		return p.errorf(f.pos, "shardRange's first argument is the field (%s or %s), not a string", Namespace, UID)
	}
	field := Field(f.text)
	if !field.valid() {
		return p.errorf(f.pos, "field %s is not one the server hashes (want %s or %s)", field, Namespace, UID)
	}
	if len(sel.Ranges) > 0 && field != sel.Field {
		return p.errorf(f.pos, "terms hash different fields, %s and %s; a selector hashes one field", sel.Field, field)
	}
	var bounds [2]bound
	for i, a := range []arg{start, end} {
		which := [2]string{"start", "end"}[i]
		if a.isPath {
			return p.errorf(a.pos, "%s must be a quoted string such as '0x8000000000000000', not %s", which, a.text)
		}
		b, err := parseBound(a.text)
		if err != nil {
			return p.errorf(a.pos, "%s %s", which, err)
		}
		bounds[i] = b
	}
	r, ok := bounds[0].rangeTo(bounds[1])
	if !ok {
		return p.errorf(pos, "start %s is not below end %s", start.text, end.text)
	}
	sel.Field = field
	sel.Ranges = append(sel.Ranges, r)
	return nil
}

// arg is one argument of shardRange: a field path such as object.metadata.uid, or a
// string literal's value.
type arg struct {
	isPath bool
	pos    int
	text   string // the dotted path, or the string's value
}

// arg reads an argument: a string, or a path of identifiers joined by dots, any part of
// which may be in parentheses ((object.metadata).uid is CEL for object.metadata.uid).
func (p *parser) arg(depth int) (arg, error) {
	a := arg{pos: p.tok.pos}
	switch p.tok.kind {
	case tokLParen:
		if depth >= maxNesting {
			return a, p.errorf(p.tok.pos, "parentheses nested more than %d deep", maxNesting)
		}
		if err := p.next(); err != nil {
			return a, err
		}
		inner, err := p.arg(depth + 1)
		if err != nil {
			return a, err
		}
		if err := p.expect(tokRParen, "')'"); err != nil {
			return a, err
		}
		a.isPath, a.text = inner.isPath, inner.text
	case tokIdent:
		a.isPath, a.text = true, p.tok.text
		if err := p.next(); err != nil {
			return a, err
		}
	case tokString:
		a.text = p.tok.val
		if err := p.next(); err != nil {
			return a, err
		}
	default:
		return a, p.errorf(p.tok.pos, "expected a field or a quoted bound, found %s", p.tok)
	}
	for p.tok.kind == tokDot {
		if !a.isPath {
			return a, p.errorf(p.tok.pos, "a string has no fields")
		}
		if err := p.next(); err != nil {
			return a, err
		}
		if p.tok.kind != tokIdent {
			return a, p.errorf(p.tok.pos, "expected a field name after '.', found %s", p.tok)
		}
		a.text += "." + p.tok.text
		if err := p.next(); err != nil {
			return a, err
		}
	}
	if p.tok.kind == tokLParen {
		return a, p.errorf(p.tok.pos, "function calls are not allowed inside shardRange(…)")
	}
	return a, nil
}

// bound is one end of a wire range: a value in [0, 2^64], top meaning 2^64.
type bound struct {
	v   uint64
	top bool
}

// rangeTo turns the half-open [b, end) into a Range, if it holds anything.
func (b bound) rangeTo(end bound) (Range, bool) {
	switch {
	case b.top:
		return Range{}, false
	case end.top:
		return Range{First: b.v, Last: math.MaxUint64}, true
	case b.v < end.v:
		return Range{First: b.v, Last: end.v - 1}, true
	}
	return Range{}, false
}

// parseBound reads a bound as the server spells it: 0x and exactly 16 lower-case hex
// digits, or 0x10000000000000000 for 2^64. Shorter forms such as 0x0 are refused, not
// padded: the server refuses them too, and sending them would fail there.
func parseBound(s string) (bound, error) {
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return bound{}, fmt.Errorf("%q must start with 0x", s)
	}
	if digits == "" {
		return bound{}, fmt.Errorf("%q has no digits after 0x", s)
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		switch {
		case isDigit(c):
			v = v<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		case 'A' <= c && c <= 'F':
			return bound{}, fmt.Errorf("%q has upper-case hex digit %q; the server reads lower case only", s, c)
		default:
			r, _ := utf8.DecodeRuneInString(digits[i:])
			return bound{}, fmt.Errorf("%q has %q, not a hex digit", s, r)
		}
	}
	switch {
	case s == topOfSpace:
		return bound{top: true}, nil
	case len(digits) > 16:
		return bound{}, fmt.Errorf("%q has %d digits; 16 are allowed, or exactly %s for the top of the space", s, len(digits), topOfSpace)
	case len(digits) < 16:
		return bound{}, fmt.Errorf("%q must have exactly 16 hex digits (did you mean %q?)", s, hex16(v))
	}
	return bound{v: v}, nil
}
