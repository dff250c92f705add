package main

import (
	"context"
	"errors"
	"flag"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/internal/testrig/logbuf"
)

// helpEntry is a command as a help shows it: its synopsis and what it does, each with
// its lines joined.
type helpEntry struct {
	Synopsis, Does string
}

// topLevelHelp reads the top-level help as a user does: a line "  kinformer NAME ..."
// starts a command, lines indented deeper than six spaces continue its synopsis, and
// lines indented six spaces say what it does.
func topLevelHelp(help string) (names []string, entries map[string]helpEntry) {
	entries = map[string]helpEntry{}
	var name string
	var synopsis, does []string
	flush := func() {
		if name != "" {
			entries[name] = helpEntry{strings.Join(synopsis, " "), strings.Join(does, " ")}
			names = append(names, name)
		}
		name, synopsis, does = "", nil, nil
	}
	for _, line := range strings.Split(help, "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case indent == 2 && strings.HasPrefix(line, "  kinformer "):
			flush()
			words := strings.Fields(line)[1:]
			// The name is the words before the first argument or flag.
			n := slices.IndexFunc(words, func(w string) bool {
				return w == strings.ToUpper(w) || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "-")
			})
			if n < 0 {
				n = len(words)
			}
			name, synopsis = strings.Join(words[:n], " "), words[n:]
		case name != "" && indent == 6:
			does = append(does, strings.Fields(line)...)
		case name != "" && indent > 6 && does == nil:
			synopsis = append(synopsis, strings.Fields(line)...)
		default:
			flush()
		}
	}
	flush()
	return names, entries
}

// commandHelp reads a command's -h: "usage: kinformer NAME SYNOPSIS", continued on
// indented lines, a blank line, what it does, a blank line, then the FlagSet's defaults.
func commandHelp(name, text string) (helpEntry, []string) {
	head, defaults, _ := strings.Cut(text, "\nFlags:\n")
	usage, does, _ := strings.Cut(head, "\n\n")
	synopsis := strings.TrimPrefix(strings.Join(strings.Fields(usage), " "), "usage: kinformer "+name+" ")
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(defaults, -1) {
		flags = append(flags, m[1])
	}
	slices.Sort(flags)
	return helpEntry{synopsis, strings.Join(strings.Fields(does), " ")}, flags
}

// synopsisFlags are the flags a synopsis shows, without their dashes.
func synopsisFlags(t *testing.T, synopsis string) []string {
	t.Helper()
	var flags []string
	for _, m := range regexp.MustCompile(`(?:^|[\s\[|])(-{1,2})([A-Za-z][\w-]*)`).FindAllStringSubmatch(synopsis, -1) {
		// As kubectl's: one dash for a one-letter flag, two for the others.
		if (len(m[2]) == 1) != (m[1] == "-") {
			t.Errorf("%s%s: one dash for a one-letter flag, two for the others", m[1], m[2])
		}
		flags = append(flags, m[2])
	}
	slices.Sort(flags)
	return slices.Compact(flags)
}

// The top-level help shows every command, each as its own -h shows it, and every flag a
// synopsis shows is one of the command's flags, and each of its flags is shown.
func TestHelpShowsEveryCommandAndItsFlags(t *testing.T) {
	var out, errOut logbuf.Buffer
	if err := run(context.Background(), []string{"--help"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, line := range strings.Split(help, "\n") {
		if n := len([]rune(line)); n > helpWidth {
			t.Errorf("a line of %d columns in the help:\n%s", n, line)
		}
	}
	names, entries := topLevelHelp(help)
	want := []string{"demo", "sim", "watch", "cache dump", "cache verify", "bench sync", "controller-manager", "shards", "fake-kubelet"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("commands in the help (-want +got):\n%s\n%s", d, help)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			var out, errOut logbuf.Buffer
			err := run(context.Background(), append(strings.Fields(name), "-h"), &out, &errOut)
			if !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("%s -h: %v, want flag.ErrHelp", name, err)
			}
			own, flags := commandHelp(name, errOut.String())
			if d := cmp.Diff(entries[name], own); d != "" {
				t.Errorf("the top-level help and %s -h differ (-top-level +own):\n%s", name, d)
			}
			if len(flags) == 0 {
				t.Fatalf("%s -h shows no flags:\n%s", name, errOut.String())
			}
			if d := cmp.Diff(flags, synopsisFlags(t, own.Synopsis)); d != "" {
				t.Errorf("flags of %s (-the FlagSet's +the synopsis's):\n%s", name, d)
			}
			if own.Does == "" {
				t.Errorf("%s -h does not say what it does:\n%s", name, errOut.String())
			}
		})
	}
}

// A usage error shows the same synopsis as the help.
func TestUsageErrorsShowTheSynopsis(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want command
	}{
		{[]string{"demo", "extra"}, demoCommand()},
		{[]string{"watch"}, watchCommand()},
		{[]string{"cache", "dump"}, cacheCommand("dump")},
		{[]string{"cache", "list"}, cacheCommand("verify")},
		{[]string{"bench", "sync"}, benchSyncCommand()},
		{[]string{"bench"}, benchSyncCommand()},
		{[]string{"fake-kubelet", "extra"}, fakeKubeletCommand()},
		{[]string{"controller-manager", "extra"}, controllerManagerCommand()},
		{[]string{"shards", "extra"}, shardsCommand()},
	} {
		var out, errOut logbuf.Buffer
		err := run(context.Background(), tt.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tt.want.usageLine()) || exitCode(err) != 2 {
			t.Errorf("%q: %v (exit %d), want a usage error with %q", tt.args, err, exitCode(err), tt.want.usageLine())
		}
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		text, first, indent string
		width               int
		want                string
	}{
		{"a b c", "", "", 80, "a b c\n"},
		{"aa bb cc", "> ", "  ", 7, "> aa bb\n  cc\n"},
		{"x [-n NS | -A] [-l SELECTOR]", "", "  ", 16, "x [-n NS | -A]\n  [-l SELECTOR]\n"},
		{"longword b", "", "", 4, "longword\nb\n"},
	}
	for _, tt := range tests {
		if got := wrap(tt.text, tt.width, tt.first, tt.indent); got != tt.want {
			t.Errorf("wrap(%q, %d): %q, want %q", tt.text, tt.width, got, tt.want)
		}
	}
}
