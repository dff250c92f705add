package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/bench/measure"
)

// readList times reading the whole list, page by page (o.Limit objects a page):
// mode "frame" reads each body with a 1 MiB buffer and finds the items' boundaries with
// a byte scanner that tracks strings and nesting, or with o.Protobuf by the items'
// length prefixes; "tokenize" runs Decoder.Token over every item.
func readList(ctx context.Context, o options, mode string) (result, error) {
	o.defaults()
	res := result{Mode: "list-" + mode, Protobuf: o.Protobuf}
	if mode != "frame" && mode != "tokenize" {
		return res, fmt.Errorf("unknown mode %q (frame or tokenize)", mode)
	}
	if err := o.check(mode); err != nil {
		return res, err
	}
	start, cpu := time.Now(), measure.CPUTime()
	buf := make([]byte, 1<<20)
	var pb *bufio.Reader
	if o.Protobuf {
		pb = bufio.NewReaderSize(nil, 1<<20)
	}
	cont := ""
	for {
		q := url.Values{}
		if o.Limit > 0 {
			q.Set("limit", strconv.Itoa(o.Limit))
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		resp, err := o.get(ctx, q, true, o.Protobuf)
		if err != nil {
			return res, err
		}
		var n int64
		switch {
		case o.Protobuf:
			n, cont, err = frameProtobufList(resp.Body, pb, &res)
		case mode == "frame":
			n, cont, err = frameList(resp.Body, buf, &res)
		default:
			n, cont, err = tokenizeList(resp.Body, &res)
		}
		resp.Body.Close()
		if err != nil {
			return res, fmt.Errorf("page %d: %w", res.Pages+1, err)
		}
		res.Bytes += n
		res.Pages++
		if cont == "" {
			break
		}
	}
	res.finish(time.Since(start), measure.CPUTime()-cpu)
	return res, nil
}

// protobufMagic starts a protobuf list body.
const protobufMagic = "k8s\x00"

// pbStream reads protobuf's framing from a buffered body, counting the bytes read.
type pbStream struct {
	in *bufio.Reader
	n  int64
}

func (s *pbStream) varint() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		c, err := s.in.ReadByte()
		if err != nil {
			return 0, err
		}
		s.n++
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("overlong varint")
}

// skip skips a field's value of wire type wt.
func (s *pbStream) skip(wt uint64) error {
	var n uint64
	switch wt {
	case 0:
		_, err := s.varint()
		return err
	case 1:
		n = 8
	case 2:
		var err error
		if n, err = s.varint(); err != nil {
			return err
		}
	case 5:
		n = 4
	default:
		return fmt.Errorf("wire type %d", wt)
	}
	m, err := s.in.Discard(int(n))
	s.n += int64(m)
	return err
}

// bytes reads a length-delimited value whole (the ListMeta: small).
func (s *pbStream) bytes() ([]byte, error) {
	n, err := s.varint()
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	m, err := io.ReadFull(s.in, b)
	s.n += int64(m)
	return b, err
}

// frameProtobufList reads a protobuf list body with in (reset onto body): the k8s\x00
// magic, then a runtime.Unknown whose raw (field 2) is the List message, whose items (2)
// it counts and skips by their lengths, reading no further into them, and whose ListMeta
// (1) gives the continue token (its field 3).
func frameProtobufList(body io.Reader, in *bufio.Reader, res *result) (n int64, cont string, err error) {
	in.Reset(body)
	s := &pbStream{in: in}
	defer func() {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	}()
	var magic [len(protobufMagic)]byte
	m, err := io.ReadFull(in, magic[:])
	s.n += int64(m)
	if err != nil {
		return s.n, "", err
	}
	if string(magic[:]) != protobufMagic {
		return s.n, "", fmt.Errorf("no k8s\\x00 magic: %q", magic)
	}
	for {
		tag, err := s.varint()
		if err == io.EOF {
			return s.n, cont, nil
		}
		if err != nil {
			return s.n, "", err
		}
		if tag != 2<<3|2 { // not the raw List
			if err := s.skip(tag & 7); err != nil {
				return s.n, "", err
			}
			continue
		}
		size, err := s.varint()
		if err != nil {
			return s.n, "", err
		}
		for end := s.n + int64(size); s.n < end; {
			tag, err := s.varint()
			if err != nil {
				return s.n, "", err
			}
			switch tag {
			case 1<<3 | 2: // metadata
				meta, err := s.bytes()
				if err != nil {
					return s.n, "", err
				}
				if cont, err = continueOf(meta); err != nil {
					return s.n, "", fmt.Errorf("list metadata: %w", err)
				}
			case 2<<3 | 2: // an item
				if err := s.skip(2); err != nil {
					return s.n, "", err
				}
				res.Objects++
			default:
				if err := s.skip(tag & 7); err != nil {
					return s.n, "", err
				}
			}
			if s.n > end {
				return s.n, "", errors.New("a field overruns the list")
			}
		}
	}
}

// continueOf is the continue token (field 3) of a ListMeta message.
func continueOf(meta []byte) (string, error) {
	s := &pbStream{in: bufio.NewReader(bytes.NewReader(meta))}
	cont := ""
	for s.n < int64(len(meta)) {
		tag, err := s.varint()
		if err != nil {
			return "", err
		}
		if tag == 3<<3|2 {
			b, err := s.bytes()
			if err != nil {
				return "", err
			}
			cont = string(b)
			continue
		}
		if err := s.skip(tag & 7); err != nil {
			return "", err
		}
	}
	return cont, nil
}

// frameList reads a list body, counting the items (objects closed at depth 3: the list,
// its items array, the item) and taking metadata.continue from the head.
func frameList(body io.Reader, buf []byte, res *result) (n int64, cont string, err error) {
	var head []byte
	depth, inStr, esc := 0, false, false
	for {
		m, rerr := body.Read(buf)
		data := buf[:m]
		if len(head) < 4096 {
			head = append(head, data[:min(len(data), 4096-len(head))]...)
		}
		n += int64(m)
		for i := 0; i < len(data); i++ {
			c := data[i]
			if inStr {
				if esc { // the escaped byte
					esc = false
					continue
				}
				// Skip to the next quote or backslash.
				j := bytes.IndexAny(data[i:], `"\`)
				if j < 0 {
					break // the rest of the read is inside the string
				}
				i += j
				if data[i] == '\\' {
					esc = true
				} else {
					inStr = false
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 2 && c == '}' {
					res.Objects++
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return n, "", rerr
		}
	}
	if depth != 0 || inStr {
		return n, "", errors.New("truncated list body")
	}
	const key = `"continue":"`
	if i := bytes.Index(head, []byte(key)); i >= 0 {
		rest := head[i+len(key):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 {
			cont = string(rest[:j])
		}
	}
	return n, cont, nil
}

// tokenizeList runs Token over a list body: the metadata is decoded (for continue), every
// item is tokenized.
func tokenizeList(body io.Reader, res *result) (n int64, cont string, err error) {
	dec := json.NewDecoder(body)
	if _, err := dec.Token(); err != nil { // {
		return 0, "", err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, "", err
		}
		switch tok {
		case "metadata":
			var md struct {
				Continue string `json:"continue"`
			}
			if err := dec.Decode(&md); err != nil {
				return 0, "", err
			}
			cont = md.Continue
		case "items":
			if _, err := dec.Token(); err != nil { // [
				return 0, "", err
			}
			for dec.More() {
				if err := skipValue(dec); err != nil {
					return 0, "", err
				}
				res.Objects++
			}
			if _, err := dec.Token(); err != nil { // ]
				return 0, "", err
			}
		default:
			if err := skipValue(dec); err != nil {
				return 0, "", err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return 0, "", err
	}
	return dec.InputOffset(), cont, nil
}
