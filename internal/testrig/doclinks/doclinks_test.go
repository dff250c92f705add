package doclinks

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "move links whose line has moved, and record the lines of new links")

const anchorsFile = "testdata/anchors.txt"

func TestMarkdownLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..", "..") // from internal/testrig/doclinks
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	anchors, err := readAnchors(anchorsFile)
	if err != nil {
		t.Fatal(err)
	}
	code := fileLines{}
	used := map[string]anchor{}
	moves := map[string]map[string]string{} // doc → old target#L → new one
	checked := 0
	for _, doc := range docs {
		body, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		links, missing, n := linksIn(root, doc, string(body))
		checked += n
		for _, m := range missing {
			t.Errorf("%s: link to %s: no such file", doc, m)
		}
		for _, l := range links {
			lines, err := code.get(filepath.Join(root, l.path))
			if err != nil {
				t.Fatal(err)
			}
			a, known := anchors[anchor{path: l.path, line: l.line}.key()]
			if !known {
				if l.line > len(lines) || lines[l.line-1] == "" || lines[l.line-1] == "}" {
					t.Errorf("%s: %s#L%d: a new link, to a line that is not code", doc, l.target, l.line)
					continue
				}
				if !*update {
					t.Errorf("%s: %s#L%d: a new link: run go test ./internal/testrig/doclinks -update to record its line (%q)", doc, l.target, l.line, lines[l.line-1])
					continue
				}
				a = anchor{path: l.path, line: l.line, text: lines[l.line-1]}
			}
			now, found := follow(a, lines)
			switch {
			case !found:
				t.Errorf("%s: %s#L%d pointed at %q, which is no longer in the file: re-point the link", doc, l.target, l.line, a.text)
				continue
			case now != l.line && !*update:
				t.Errorf("%s: %s#L%d: the line it points at (%q) is now line %d: run go test ./internal/testrig/doclinks -update", doc, l.target, l.line, a.text, now)
				continue
			case now != l.line:
				if moves[doc] == nil {
					moves[doc] = map[string]string{}
				}
				moves[doc][l.target+"#L"+strconv.Itoa(l.line)] = l.target + "#L" + strconv.Itoa(now)
			}
			a.line = now
			used[a.key()] = a
		}
	}
	if checked < 100 {
		t.Errorf("only %d links checked: the pattern no longer matches the guides", checked)
	}
	if !*update {
		return
	}
	for doc, m := range moves {
		body, _ := os.ReadFile(doc)
		text := string(body)
		// Placeholders first, so that a link moved to where another one was is not moved twice.
		i := 0
		back := map[string]string{}
		for old, now := range m {
			ph := fmt.Sprintf("\x00%d\x00", i)
			i++
			text = strings.ReplaceAll(text, "("+old+")", "("+ph+")")
			back[ph] = now
		}
		for ph, now := range back {
			text = strings.ReplaceAll(text, ph, now)
		}
		if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: moved %d links", doc, len(m))
	}
	if err := writeAnchors(anchorsFile, used); err != nil {
		t.Fatal(err)
	}
}
