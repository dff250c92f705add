package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kinformer/kinformer/listwatch"
)

// command is one command of the command line: how it is called and what it does, which
// the top-level help, the command's own -h and its usage errors all show, and the
// function that runs it.
type command struct {
	name     string // the words before the flags: "demo", "cache dump"
	synopsis string // its arguments and flags, with a default or a placeholder each
	does     string // what it does, in a phrase of the help
	run      func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands are the commands, in the order of the help. A command of two words (cache
// dump) is run with the words after the first as its first arguments.
func commands() []command {
	return []command{demoCommand(), simCommand(), watchCommand(), cacheCommand("dump"), cacheCommand("verify"),
		benchSyncCommand(), controllerManagerCommand(), shardsCommand(), fakeKubeletCommand()}
}

// targetFlags are the flags of the commands that run one informer (target.flags).
const targetFlags = "[-n NS | -A] [-l SELECTOR] [--field-selector SELECTOR] [--kubeconfig FILE] [--context NAME] " +
	encodingSynopsis + " [--websocket] [--streaming-list] [-v]"

// encodingSynopsis is --encoding as the synopsis of every command that has it shows it.
const encodingSynopsis = "[--encoding auto|json|protobuf]"

// encodingFlag is --encoding, the flag of every command that talks to an apiserver: what
// its reads ask the apiserver for (listwatch.Config.Encoding, which loadConfig sets).
// register adds it to a command's FlagSet; check, called once the flags are parsed, reads
// it, so that a wrong value is a usage error before any file is read or request made.
type encodingFlag struct {
	text string             // as given
	enc  listwatch.Encoding // text, read by check
}

// encodingUsage is the flag's line in a command's -h.
const encodingUsage = "what reads ask the apiserver for: auto (protobuf for the types that decode from it, " +
	"such as Pods, ReplicaSets, Deployments and Leases; JSON for the others and for raw objects, which watch, cache and bench read), json, " +
	"or protobuf (raw objects too; an error for a type that cannot be decoded from it)"

func (e *encodingFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&e.text, "encoding", string(listwatch.EncodingAuto), encodingUsage)
}

// check reads the flag: a usage error for a value other than auto, json or protobuf.
func (e *encodingFlag) check() error {
	enc, err := listwatch.ParseEncoding(e.text)
	if err != nil {
		return usageError{err.Error()}
	}
	e.enc = enc
	return nil
}

func controllerManagerCommand() command {
	return command{name: "controller-manager", synopsis: strings.TrimPrefix(controllerManagerUsage, "usage: kinformer controller-manager "),
		does: "run the ReplicaSet and Deployment controllers as kube-controller-manager runs them: leader election " +
			"with warm standbys, /metrics, /healthz and /readyz over HTTPS with callers checked by the apiserver; " +
			"or, with --shard-group, as one of several managers that divide the namespaces between them",
		run: runControllerManager}
}

// usageLine is the command as its usage error shows it.
func (c command) usageLine() string { return "usage: kinformer " + c.name + " " + c.synopsis }

func (c command) usageError() usageError { return usageError{c.usageLine()} }

// flagSet is the command's FlagSet: errors are returned, and -h prints the usage line,
// what the command does and its flags on stderr.
func (c command) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		lead := "usage: kinformer " + c.name + " "
		fmt.Fprintf(stderr, "%s\n%s\nFlags:\n", wrap(c.usageLine(), helpWidth, "", hanging(lead)), wrap(c.does, helpWidth, "  ", "  "))
		fs.PrintDefaults()
	}
	return fs
}

// helpWidth is the width of the help: a terminal's default.
const helpWidth = 80

// usage is the top-level help.
func usage() string {
	var b strings.Builder
	b.WriteString(wrap("kinformer: a Kubernetes informer engine, the controllers built on it, and tools to watch, "+
		"check and measure informers against any cluster.", helpWidth, "", ""))
	b.WriteString("\nUsage:\n")
	for _, c := range commands() {
		b.WriteString(wrap("kinformer "+c.name+" "+c.synopsis, helpWidth, "  ", hanging("  kinformer "+c.name+" ")))
		b.WriteString(wrap(c.does, helpWidth, "      ", "      "))
	}
	b.WriteString("\nRun 'kinformer help COMMAND' (or 'kinformer COMMAND -h') for the flags of a\n" +
		"command, and 'kinformer version' for the version and commit built.\n")
	return b.String()
}

// hanging is the indent of a synopsis's continuation lines: under its first flag, or
// less for a long command name, so that its longest bracket still fits the width.
func hanging(lead string) string { return strings.Repeat(" ", min(len(lead), 30)) }

// wrap breaks text into lines of at most width columns (unless a word is longer), at
// spaces outside brackets, so that a synopsis's "[-n NS | -A]" stays on one line. The
// first line starts with first, the others with indent; every line ends with a newline.
func wrap(text string, width int, first, indent string) string {
	var words []string
	depth, start := 0, 0
	for i, r := range text {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ' ':
			if depth == 0 {
				if i > start {
					words = append(words, text[start:i])
				}
				start = i + 1
			}
		}
	}
	if start < len(text) {
		words = append(words, text[start:])
	}
	var b strings.Builder
	line := first
	empty := true // line holds no word yet
	for _, w := range words {
		if !empty && len([]rune(line))+1+len([]rune(w)) > width {
			b.WriteString(line + "\n")
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}
