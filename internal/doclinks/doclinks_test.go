package doclinks

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var link = regexp.MustCompile(`\]\(([^()#\s]+)(?:#L(\d+))?\)`)

func TestMarkdownLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	checked := 0
	for _, doc := range docs {
		body, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(body), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := filepath.Join(filepath.Dir(doc), target)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link to %s: %v", doc, target, err)
				continue
			}
			checked++
			if m[2] == "" {
				continue
			}
			n, _ := strconv.Atoi(m[2])
			line, ok := lineOf(t, path, n)
			switch {
			case !ok:
				t.Errorf("%s: %s#L%d: the file has fewer lines", doc, target, n)
			case strings.TrimSpace(line) == "" || strings.TrimSpace(line) == "}":
				t.Errorf("%s: %s#L%d: points at %q", doc, target, n, line)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d links checked: the pattern no longer matches the guides", checked)
	}
}

func lineOf(t *testing.T, path string, n int) (string, bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 1; sc.Scan(); i++ {
		if i == n {
			return sc.Text(), true
		}
	}
	return "", false
}
