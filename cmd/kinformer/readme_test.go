package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/internal/testrig/logbuf"
)

// Every `kinformer ...` command line in the README's shell blocks names a command that
// exists and only flags that command has: a renamed flag or command fails here, not in
// a reader's terminal.
func TestREADMECommandLinesExist(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := readmeCommandLines(string(readme))
	if len(lines) < 10 {
		t.Fatalf("found %d kinformer command lines in the README: the parser is off", len(lines))
	}
	flagsOf := map[string][]string{} // command name → its flags, from its -h
	for _, c := range commands() {
		var out, errOut logbuf.Buffer
		_ = c.run(context.Background(), append(strings.Fields(c.name)[1:], "-h"), &out, &errOut)
		_, flagsOf[c.name] = commandHelp(c.name, errOut.String())
	}
	for _, line := range lines {
		words := strings.Fields(line)[1:]
		name := ""
		for c := range flagsOf { // the longest command name the line starts with
			if n := strings.Fields(c); len(n) <= len(words) && slices.Equal(n, words[:len(n)]) && len(c) > len(name) {
				name = c
			}
		}
		if name == "" {
			if len(words) > 0 && (words[0] == "help" || words[0] == "version") {
				continue
			}
			t.Errorf("README: %q names no kinformer command", line)
			continue
		}
		for _, f := range synopsisFlags(t, line) {
			if !slices.Contains(flagsOf[name], f) {
				t.Errorf("README: %q: kinformer %s has no flag %q", line, name, f)
			}
		}
	}
}

// readmeCommandLines are the lines of the README's ```sh blocks that run kinformer,
// with their continuation lines (ending in a backslash) joined.
func readmeCommandLines(readme string) []string {
	var out []string
	in := false
	var cur string
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			in = strings.HasPrefix(line, "```sh")
			continue
		case !in:
			continue
		}
		line = strings.TrimSpace(line)
		if cur != "" {
			cur += " " + strings.TrimSuffix(line, "\\")
		} else if strings.HasPrefix(line, "kinformer ") {
			cur = strings.TrimSuffix(line, "\\")
		}
		if cur != "" && !strings.HasSuffix(line, "\\") {
			out = append(out, strings.Join(strings.Fields(cur), " "))
			cur = ""
		}
	}
	return out
}
