package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/reflector"
)

// encodingCommands are the commands that talk to an apiserver, each with the arguments
// it needs besides its kubeconfig.
var encodingCommands = []struct {
	name string
	args []string
}{
	{"watch", []string{"watch", "pods"}},
	{"cache dump", []string{"cache", "dump", "pods"}},
	{"cache verify", []string{"cache", "verify", "pods"}},
	{"bench sync", []string{"bench", "sync", "pods"}},
	{"controller-manager", []string{"controller-manager"}},
	{"fake-kubelet", []string{"fake-kubelet"}},
	{"shards", []string{"shards", "--shard-group", "g"}},
	{"demo", []string{"demo"}},
}

// errBuilt stops a command once it has built its client's Config (see seeConfig).
var errBuilt = errors.New("config built")

// seeConfig makes newClient keep each Config a command builds in *built and fail with
// errBuilt, so the command goes no further, until the test ends.
func seeConfig(t *testing.T, built **listwatch.Config) {
	t.Helper()
	newClient = func(cfg *listwatch.Config) (*listwatch.Client, error) {
		*built = cfg
		return nil, errBuilt
	}
	t.Cleanup(func() { newClient = listwatch.New })
}

// writeKubeconfig writes a kubeconfig for a server that is never asked.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\ncurrent-context: c\n"+
		"clusters: [{name: c, cluster: {server: \"http://127.0.0.1:1\"}}]\ncontexts: [{name: c, context: {cluster: c}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

// Every command that talks to an apiserver has --encoding, auto by default, and the
// Config it builds carries the value given.
func TestEncodingFlagSetsTheConfig(t *testing.T) {
	kc := writeKubeconfig(t)
	var built *listwatch.Config
	seeConfig(t, &built)
	for _, c := range encodingCommands {
		for _, tc := range []struct {
			flags []string
			want  listwatch.Encoding
		}{
			{nil, listwatch.EncodingAuto},
			{[]string{"--encoding", "auto"}, listwatch.EncodingAuto},
			{[]string{"--encoding", "json"}, listwatch.EncodingJSON},
			{[]string{"--encoding=protobuf"}, listwatch.EncodingProtobuf},
		} {
			args := append(append(append([]string{}, c.args...), "--kubeconfig", kc), tc.flags...)
			t.Run(strings.Join(args[:len(c.args)], " ")+" "+strings.Join(tc.flags, " "), func(t *testing.T) {
				built = nil
				var out, errOut logbuf.Buffer
				err := run(context.Background(), args, &out, &errOut)
				if !errors.Is(err, errBuilt) || built == nil {
					t.Fatalf("%q: %v, want the command to build its client\n%s", args, err, &errOut)
				}
				if built.Encoding != tc.want {
					t.Errorf("%q: the Config's Encoding is %q, want %q", args, built.Encoding, tc.want)
				}
			})
		}
	}
}

// A value other than auto, json or protobuf is a usage error that says what the flag
// takes, before any kubeconfig is read or client built.
func TestEncodingFlagRejectsAnUnknownValue(t *testing.T) {
	var built *listwatch.Config
	seeConfig(t, &built)
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range encodingCommands {
		args := append(append([]string{}, c.args...), "--kubeconfig", missing, "--encoding", "xml")
		var out, errOut logbuf.Buffer
		err := run(context.Background(), args, &out, &errOut)
		if want := `unknown encoding "xml": want auto, json or protobuf`; err == nil || err.Error() != want || exitCode(err) != 2 {
			t.Errorf("%q: %v (exit %d), want a usage error %q", args, err, exitCode(err), want)
		}
		if built != nil {
			t.Errorf("%q: a client was built", args)
		}
	}
}

// The demo reads its simulated apiserver as auto does: --encoding is for --kubeconfig.
func TestDemoEncodingGoesWithKubeconfig(t *testing.T) {
	var built *listwatch.Config
	seeConfig(t, &built)
	err := run(context.Background(), []string{"demo", "--encoding", "json"}, &logbuf.Buffer{}, &logbuf.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--encoding goes with --kubeconfig") || exitCode(err) != 2 || built != nil {
		t.Errorf("demo --encoding json: %v (exit %d), want a usage error", err, exitCode(err))
	}
	if err := run(context.Background(), []string{"demo", "--encoding", "auto"}, &logbuf.Buffer{}, &logbuf.Buffer{}); !errors.Is(err, errBuilt) {
		t.Fatalf("demo --encoding auto: %v, want the simulator's client built", err)
	}
	if built.Encoding != "" {
		t.Errorf("the demo's simulator is read in encoding %q, want the default", built.Encoding)
	}
}

// Every such command's -h shows the flag, its values and its default.
func TestEncodingFlagIsDocumented(t *testing.T) {
	for _, c := range encodingCommands {
		var out, errOut logbuf.Buffer
		if err := run(context.Background(), append(append([]string{}, c.args[:len(strings.Fields(c.name))]...), "-h"), &out, &errOut); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("%s -h: %v", c.name, err)
		}
		help := errOut.String()
		for _, want := range []string{encodingSynopsis, "  -encoding string\n", "json, or protobuf", `(default "auto")`} {
			if !strings.Contains(strings.Join(strings.Fields(help), " "), strings.Join(strings.Fields(want), " ")) {
				t.Errorf("%s -h lacks %q:\n%s", c.name, want, help)
			}
		}
	}
}

// The lines that name the informer say what its reads ask for: watch's "synced", the
// trace's summary (see TestWatchTrace), cache verify's result, bench sync's, and the
// line of a sync that takes a while.
func TestStatusLinesSayTheEncoding(t *testing.T) {
	leakcheck.Check(t)
	_, kc, pods := simPods(t)
	if _, err := pods.Create(context.Background(), &object.Pod{ObjectMeta: object.ObjectMeta{Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	for _, enc := range []string{"json", "protobuf"} {
		ctx, cancel := context.WithCancel(context.Background())
		var out, errOut logbuf.Buffer
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"watch", "pods", "--kubeconfig", kc, "--encoding", enc}, &out, &errOut)
		}()
		waitForOutput(t, &errOut, "kinformer: synced default/pods (encoding="+enc+"): 1 object(s); watching")
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watch --encoding %s: %v", enc, err)
		}

		var vout logbuf.Buffer
		if err := run(context.Background(), []string{"cache", "verify", "pods", "--kubeconfig", kc, "--encoding", enc}, &vout, &errOut); err != nil {
			t.Fatalf("cache verify --encoding %s: %v\n%s", enc, err, &errOut)
		}
		if want := "(encoding=" + enc + "): 0 difference(s)"; !strings.Contains(vout.String(), want) {
			t.Errorf("cache verify --encoding %s printed %q, want %q", enc, vout.String(), want)
		}

		var bout logbuf.Buffer
		if err := run(context.Background(), []string{"bench", "sync", "pods", "--kubeconfig", kc, "--encoding", enc}, &bout, &errOut); err != nil {
			t.Fatalf("bench sync --encoding %s: %v\n%s", enc, err, &errOut)
		}
		if want := "(list-watch, encoding=" + enc + ")"; !strings.Contains(bout.String(), want) {
			t.Errorf("bench sync --encoding %s printed %q, want %q", enc, bout.String(), want)
		}
	}

	st := informer.SyncStatus{Status: reflector.Status{State: reflector.StateListing}, Encoding: listwatch.EncodingProtobuf}
	if got, want := waitingFor("default/pods", st), "kinformer: waiting for default/pods (encoding=protobuf) to sync: "+
		string(reflector.StateListing); got != want {
		t.Errorf("waitingFor: %q, want %q", got, want)
	}
	st.Encoding = "" // an informer whose ListerWatcher does not say
	if got := waitingFor("pods", st); strings.Contains(got, "encoding") {
		t.Errorf("waitingFor without an encoding: %q", got)
	}
}
