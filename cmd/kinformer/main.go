// Command kinformer is the command line of the kinformer engine: a self-contained demo,
// a simulated apiserver, commands that watch, check and measure an informer against any
// cluster, and the controller manager and fake kubelet built on the engine (see usage).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kinformer:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitCode is 0 for help asked for (-h), 2 for usage errors and 1 for everything else.
func exitCode(err error) int {
	var ue usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return usageError{"no command given"}
	}
	switch args[0] {
	case "help", "-h", "--help":
		if len(args) > 1 { // help COMMAND: the command's own -h, on stdout
			return helpFor(ctx, args[1:], stdout)
		}
		fmt.Fprint(stdout, usage())
		return nil
	case "version", "--version":
		fmt.Fprintln(stdout, version())
		return nil
	}
	for _, c := range commands() {
		if first, _, _ := strings.Cut(c.name, " "); first == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprint(stderr, usage())
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

// helpFor prints on out the help of the commands named by words: one (help cache dump),
// or each of those it begins (help cache).
func helpFor(ctx context.Context, words []string, out io.Writer) error {
	found := false
	for _, c := range commands() {
		if name := strings.Fields(c.name); len(words) <= len(name) && slices.Equal(name[:len(words)], words) {
			if found {
				fmt.Fprintln(out)
			}
			found = true
			if err := c.run(ctx, append(slices.Clone(name[1:]), "-h"), out, out); !errors.Is(err, flag.ErrHelp) {
				return err
			}
		}
	}
	if !found {
		return usageError{fmt.Sprintf("no command %q: run 'kinformer help' for the list", strings.Join(words, " "))}
	}
	return nil
}

// version is the module's version and the commit it was built from, as the Go build
// recorded them ("(devel)" for a build in a clone), and the Go version.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "kinformer (no build information)"
	}
	v := "kinformer " + info.Main.Version
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		v += " commit " + rev[:min(len(rev), 12)]
		if settings["vcs.modified"] == "true" {
			v += " (modified)"
		}
	}
	return v + " " + info.GoVersion
}

// parseInterspersed parses flags that may come before or after positional arguments
// (kubectl style: "watch pods -n default") and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
