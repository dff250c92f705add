package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"
)

// readList times reading the whole list, page by page (o.Limit objects a page):
// mode "frame" reads each body with a 1 MiB buffer and finds the items' boundaries with
// a byte scanner that tracks strings and nesting; "tokenize" runs Decoder.Token over
// every item.
func readList(ctx context.Context, o options, mode string) (result, error) {
	o.defaults()
	res := result{Mode: "list-" + mode}
	if mode != "frame" && mode != "tokenize" {
		return res, fmt.Errorf("unknown mode %q (frame or tokenize)", mode)
	}
	start := time.Now()
	buf := make([]byte, 1<<20)
	cont := ""
	for {
		q := url.Values{}
		if o.Limit > 0 {
			q.Set("limit", strconv.Itoa(o.Limit))
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		resp, err := o.get(ctx, q, true)
		if err != nil {
			return res, err
		}
		var n int64
		if mode == "frame" {
			n, cont, err = frameList(resp.Body, buf, &res)
		} else {
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
	res.finish(time.Since(start))
	return res, nil
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
