package manager

import (
	"errors"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
)

// An address already taken fails New with a ListenError that names the address and the
// option, and leaves no listener of the manager open.
func TestTakenAddressIsAListenError(t *testing.T) {
	f := newFixture(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		name, option string
		opts         func(free string) Options
	}{
		{"plain", "MetricsAddr", func(string) Options { return Options{MetricsAddr: taken.Addr().String()} }},
		{"secure", "SecureServing.Addr", func(string) Options {
			return Options{SecureServing: SecureServing{Addr: taken.Addr().String()}}
		}},
		{"plain taken, secure free", "MetricsAddr", func(free string) Options {
			return Options{MetricsAddr: taken.Addr().String(), SecureServing: SecureServing{Addr: free}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			free := freeAddr(t)
			opts := tc.opts(free)
			opts.Client = f.c
			m, err := New(t.Context(), opts)
			var le *ListenError
			if !errors.As(err, &le) || le.Option != tc.option || le.Addr != taken.Addr().String() || !errors.Is(err, syscall.EADDRINUSE) {
				t.Fatalf("New: %v (%#v), want a ListenError for %s on %s, address in use", err, le, tc.option, taken.Addr())
			}
			if m != nil {
				t.Error("New returned a manager with its error")
			}
			want := "cannot listen on " + taken.Addr().String() + " (" + tc.option + "): bind: address already in use"
			if err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			// The address New did listen on is free again.
			l, err := net.Listen("tcp", free)
			if err != nil {
				t.Fatalf("%s is still held: %v", free, err)
			}
			l.Close()
		})
	}
}

// freeAddr is a loopback address nothing listens on (for a moment).
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// An endpoint that stops serving stops the manager: Run logs it and returns it, and a
// leader hands its Lease over first.
func TestServeErrorStopsRun(t *testing.T) {
	for _, elect := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "leader"}[elect], func(t *testing.T) {
			f := newFixture(t)
			var logs logbuf.Buffer
			opts := Options{Client: f.c, MetricsAddr: "127.0.0.1:0", Workers: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			if elect {
				opts.LeaderElect = true
				opts.LeaderElection = LeaderElection{Identity: "a", LeaseDuration: 1500 * time.Millisecond,
					RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond}
			}
			r := start(t, opts)
			addr := r.m.Addr()
			if code, _ := get(t, addr, "/healthz"); code != 200 {
				t.Fatalf("/healthz: %d", code)
			}
			if elect {
				// Leading by its own account: the Lease may name it before its answer arrived.
				testwait.Eventually(t, 5*time.Second, func() bool {
					_, metrics := get(t, addr, "/metrics")
					return strings.Contains(metrics, `leader_election_master_status{name="`+LeaseName+`"} 1`)
				}, "a never led")
			}
			_ = r.m.plain.Close() // as if the listener broke
			select {
			case err := <-r.done:
				close(r.done)
				if err == nil || !strings.Contains(err.Error(), "serving http://"+addr) {
					t.Errorf("Run ended with %v, want the serving error on %s", err, addr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the manager runs on without its endpoints")
			}
			if !strings.Contains(logs.String(), "the HTTP endpoints stopped") {
				t.Errorf("not logged:\n%s", logs.String())
			}
			if elect && f.holder(t) != "" {
				t.Errorf("the Lease is still held by %q", f.holder(t))
			}
		})
	}
}
