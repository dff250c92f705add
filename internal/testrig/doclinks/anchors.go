package doclinks

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// link matches a Markdown link's target and its optional #Lnn line.
var link = regexp.MustCompile(`\]\(([^()#\s]+)(?:#L(\d+))?\)`)

// anchor is a code line a document links to: the file (relative to the repository's
// root), its number, and its text, trimmed.
type anchor struct {
	path string
	line int
	text string
}

func (a anchor) key() string { return a.path + "#L" + strconv.Itoa(a.line) }

// readAnchors reads the recorded anchors: one per line, "path#Lnn<TAB>text".
func readAnchors(file string) (map[string]anchor, error) {
	out := map[string]anchor{}
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for i, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		loc, text, ok := strings.Cut(l, "\t")
		path, n, ok2 := strings.Cut(loc, "#L")
		line, err := strconv.Atoi(n)
		if !ok || !ok2 || err != nil {
			return nil, fmt.Errorf("%s:%d: want path#Lnn<TAB>text, got %q", file, i+1, l)
		}
		a := anchor{path: path, line: line, text: text}
		out[a.key()] = a
	}
	return out, nil
}

func writeAnchors(file string, anchors map[string]anchor) error {
	var lines []string
	for _, a := range anchors {
		lines = append(lines, a.key()+"\t"+a.text)
	}
	slices.SortFunc(lines, func(x, y string) int {
		px, _, _ := strings.Cut(x, "\t")
		py, _, _ := strings.Cut(y, "\t")
		return strings.Compare(sortable(px), sortable(py))
	})
	return os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// sortable orders path#Lnn by path, then by line number.
func sortable(loc string) string {
	path, n, _ := strings.Cut(loc, "#L")
	line, _ := strconv.Atoi(n)
	return fmt.Sprintf("%s#%08d", path, line)
}

// fileLines reads a file's lines, trimmed, cached.
type fileLines map[string][]string

func (c fileLines) get(path string) ([]string, error) {
	if lines, ok := c[path]; ok {
		return lines, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	c[path] = lines
	return lines, sc.Err()
}

// follow finds where a's text is now: its own line if it still holds it, else the
// occurrence nearest to it; ok is false when the text is nowhere in the file.
func follow(a anchor, lines []string) (int, bool) {
	best := -1
	for i, l := range lines {
		if l != a.text {
			continue
		}
		if best < 0 || abs(i+1-a.line) < abs(best-a.line) {
			best = i + 1
		}
	}
	return best, best > 0
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// docLink is one link to a line, in a document.
type docLink struct {
	doc    string
	target string // as written, relative to the document
	path   string // relative to the root
	line   int
}

// linksIn returns a document's links to lines, and checks that every relative link's
// file exists.
func linksIn(root, doc string, body string) (lines []docLink, missing []string, checked int) {
	for _, m := range link.FindAllStringSubmatch(body, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		full := filepath.Join(filepath.Dir(doc), target)
		if _, err := os.Stat(full); err != nil {
			missing = append(missing, target)
			continue
		}
		checked++
		if m[2] == "" {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		rel, _ := filepath.Rel(root, full)
		lines = append(lines, docLink{doc: doc, target: target, path: filepath.ToSlash(rel), line: n})
	}
	return lines, missing, checked
}
