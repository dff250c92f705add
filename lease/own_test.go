package lease_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

const (
	ns   = "kube-system"
	name = "worker"
)

var timing = lease.Timing{}.WithDefaults()

// ownEnv is an Own that reaches a simulated apiserver through a front recording its
// requests, and another writer reaching the simulator directly.
type ownEnv struct {
	sim   *apisim.Server
	clk   *clock.Fake
	own   *lease.Own
	other *listwatch.Resource[*object.Lease]

	mu       sync.Mutex
	requests []string              // the methods of Own's requests
	hook     func(r *http.Request) // runs before the simulator serves each of Own's requests
}

func newOwnEnv(t *testing.T) *ownEnv {
	t.Helper()
	sim, direct := simtest.Start(t, apisim.Options{})
	env := &ownEnv{
		sim:   sim,
		clk:   clock.NewFake(epoch),
		other: listwatch.For[*object.Lease](direct, listwatch.LeaseResource(), ns),
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env.mu.Lock()
		env.requests = append(env.requests, r.Method)
		hook := env.hook
		env.mu.Unlock()
		if hook != nil {
			hook(r)
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	c, err := listwatch.New(&listwatch.Config{Host: front.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	env.own = lease.NewOwn(listwatch.For[*object.Lease](c, listwatch.LeaseResource(), ns), name, timing, env.clk)
	return env
}

func (env *ownEnv) setHook(h func(r *http.Request)) {
	env.mu.Lock()
	env.hook = h
	env.mu.Unlock()
}

// takeRequests returns the methods of Own's requests since the last call.
func (env *ownEnv) takeRequests() []string {
	env.mu.Lock()
	defer env.mu.Unlock()
	r := env.requests
	env.requests = nil
	return r
}

// stored is the Lease as the server has it, nil when absent.
func (env *ownEnv) stored(t *testing.T) *object.Lease {
	t.Helper()
	l, err := env.other.Get(context.Background(), name)
	if object.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// putBy creates the Lease held by holder, as another process would.
func (env *ownEnv) putBy(t *testing.T, holder string) *object.Lease {
	t.Helper()
	l, err := env.other.Create(context.Background(), &object.Lease{
		ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name},
		Spec:       lease.Stamp(object.LeaseSpec{}, holder, timing, env.clk.Now()),
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// annotate changes the stored Lease by another hand, and returns it.
func (env *ownEnv) annotate(t *testing.T, value string) *object.Lease {
	t.Helper()
	l := env.stored(t)
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations["note"] = value
	l, err := env.other.Update(context.Background(), l)
	if err != nil {
		t.Error(err) // not Fatal: hooks call it on the server's goroutines
	}
	return l
}

// hold is the change of a process "a" holding the Lease: it takes it when absent or
// released, renews it when its own, and refuses it when another holds it.
func (env *ownEnv) hold(cur *object.Lease) (*object.Lease, error) {
	if cur == nil {
		return &object.Lease{
			ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name},
			Spec:       lease.Stamp(object.LeaseSpec{}, "a", timing, env.clk.Now()),
		}, nil
	}
	if h := lease.Holder(cur.Spec); h != "" && h != "a" {
		return nil, lease.ErrRefused
	}
	cur.Spec = lease.Stamp(cur.Spec, "a", timing, env.clk.Now())
	return cur, nil
}

func TestOwnWrite(t *testing.T) {
	errBroken := errors.New("broken")
	tests := []struct {
		name string
		// setup prepares the server and Own's knowledge of the Lease; it returns the
		// resourceVersions the change must be given, in order ("" for nil).
		setup  func(t *testing.T, env *ownEnv) []string
		change func(env *ownEnv) func(*object.Lease) (*object.Lease, error) // nil: env.hold
		want   lease.Outcome
		// wantErr is what errors.Is must find in Write's error; nil for no error, and
		// errAny for any.
		wantErr      error
		wantRequests []string
		wantHolder   string // of the stored Lease afterwards; "-" for none stored
		wantNote     string // the stored Lease's note annotation afterwards
	}{
		{name: "created when absent",
			setup:        func(t *testing.T, env *ownEnv) []string { return []string{""} },
			want:         lease.Written,
			wantRequests: []string{"GET", "POST"}, wantHolder: "a"},
		{name: "updated with the resourceVersion read",
			setup: func(t *testing.T, env *ownEnv) []string {
				return []string{env.putBy(t, "").ResourceVersion}
			},
			want:         lease.Written,
			wantRequests: []string{"GET", "PUT"}, wantHolder: "a"},
		{name: "renewed from the Lease last written, in one request",
			setup: func(t *testing.T, env *ownEnv) []string {
				writeOwn(t, env)
				return []string{env.own.Current().ResourceVersion}
			},
			want:         lease.Written,
			wantRequests: []string{"PUT"}, wantHolder: "a"},
		{name: "written by another since: Conflict, read again, changed again",
			setup: func(t *testing.T, env *ownEnv) []string {
				writeOwn(t, env)
				mine := env.own.Current().ResourceVersion
				return []string{mine, env.annotate(t, "theirs").ResourceVersion}
			},
			want:         lease.Written,
			wantRequests: []string{"PUT", "GET", "PUT"}, wantHolder: "a", wantNote: "theirs"},
		{name: "taken by another since: Conflict, read again, refused",
			setup: func(t *testing.T, env *ownEnv) []string {
				writeOwn(t, env)
				mine := env.own.Current().ResourceVersion
				l := env.stored(t)
				l.Spec = lease.Stamp(l.Spec, "b", timing, env.clk.Now())
				l, err := env.other.Update(context.Background(), l)
				if err != nil {
					t.Fatal(err)
				}
				return []string{mine, l.ResourceVersion}
			},
			want: lease.Refused, wantErr: lease.ErrRefused,
			wantRequests: []string{"PUT", "GET"}, wantHolder: "b"},
		{name: "another writer first every time: Failed after three",
			setup: func(t *testing.T, env *ownEnv) []string {
				env.putBy(t, "")
				var n atomic.Int32
				env.setHook(func(r *http.Request) {
					// A write that changes nothing leaves the resourceVersion as it was.
					if r.Method == http.MethodPut {
						env.annotate(t, fmt.Sprint("theirs-", n.Add(1)))
					}
				})
				return []string{"*", "*", "*"}
			},
			want: lease.Failed, wantErr: errAny,
			wantRequests: []string{"GET", "PUT", "GET", "PUT", "GET", "PUT"}, wantHolder: "", wantNote: "theirs-3"},
		{name: "held by another: refused",
			setup: func(t *testing.T, env *ownEnv) []string {
				return []string{env.putBy(t, "b").ResourceVersion}
			},
			want: lease.Refused, wantErr: lease.ErrRefused,
			wantRequests: []string{"GET"}, wantHolder: "b"},
		{name: "no change for a stored Lease: refused",
			setup: func(t *testing.T, env *ownEnv) []string {
				return []string{env.putBy(t, "b").ResourceVersion}
			},
			change: declineAll,
			want:   lease.Refused, wantErr: lease.ErrRefused,
			wantRequests: []string{"GET"}, wantHolder: "b"},
		{name: "absent and not to be created: gone",
			setup:        func(t *testing.T, env *ownEnv) []string { return []string{""} },
			change:       declineAll,
			want:         lease.Gone,
			wantRequests: []string{"GET"}, wantHolder: "-"},
		{name: "deleted since the last write: NotFound, read again, gone",
			setup: func(t *testing.T, env *ownEnv) []string {
				writeOwn(t, env)
				mine := env.own.Current().ResourceVersion
				if err := env.other.Delete(context.Background(), name, listwatch.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				return []string{mine, ""}
			},
			change:       renewOnly,
			want:         lease.Gone,
			wantRequests: []string{"PUT", "GET"}, wantHolder: "-"},
		{name: "deleted since the last write: NotFound, read again, created",
			setup: func(t *testing.T, env *ownEnv) []string {
				writeOwn(t, env)
				mine := env.own.Current().ResourceVersion
				if err := env.other.Delete(context.Background(), name, listwatch.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				return []string{mine, ""}
			},
			want:         lease.Written,
			wantRequests: []string{"PUT", "GET", "POST"}, wantHolder: "a"},
		{name: "created by another first: AlreadyExists, read again, refused",
			setup: func(t *testing.T, env *ownEnv) []string {
				env.setHook(func(r *http.Request) {
					if r.Method == http.MethodPost {
						env.putBy(t, "b")
					}
				})
				return []string{"", "*"}
			},
			want: lease.Refused, wantErr: lease.ErrRefused,
			wantRequests: []string{"GET", "POST", "GET"}, wantHolder: "b"},
		{name: "the change's own error",
			setup:  func(t *testing.T, env *ownEnv) []string { return []string{env.putBy(t, "").ResourceVersion} },
			change: func(*ownEnv) func(*object.Lease) (*object.Lease, error) { return failWith(errBroken) },
			want:   lease.Failed, wantErr: errBroken,
			wantRequests: []string{"GET"}, wantHolder: ""},
		{name: "the server refuses",
			setup: func(t *testing.T, env *ownEnv) []string {
				rv := env.putBy(t, "").ResourceVersion
				env.sim.Faults().FailRequests(1, http.StatusInternalServerError, 0,
					func(r *http.Request) bool { return r.Method == http.MethodPut })
				return []string{rv}
			},
			want: lease.Failed, wantErr: errAny,
			wantRequests: []string{"GET", "PUT"}, wantHolder: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newOwnEnv(t)
			wantGiven := tt.setup(t, env)
			env.takeRequests()
			change := env.hold
			if tt.change != nil {
				change = tt.change(env)
			}
			var given []string
			out, err := env.own.Write(context.Background(), func(cur *object.Lease) (*object.Lease, error) {
				if cur == nil {
					given = append(given, "")
				} else {
					given = append(given, cur.ResourceVersion)
				}
				return change(cur)
			})
			if out != tt.want {
				t.Errorf("Write = %v (%v), want %v", out, err, tt.want)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("Write error = %v, want none", err)
			case tt.wantErr == errAny && err == nil:
				t.Error("Write error = nil, want one")
			case tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Errorf("Write error = %v, want %v", err, tt.wantErr)
			}
			env.setHook(nil)
			if d := cmp.Diff(tt.wantRequests, env.takeRequests()); d != "" {
				t.Errorf("requests (-want +got):\n%s", d)
			}
			if d := cmp.Diff(wantGiven, given, cmp.Comparer(func(a, b string) bool { return a == b || a == "*" || b == "*" })); d != "" {
				t.Errorf("resourceVersions the change was given (-want +got):\n%s", d)
			}

			l := env.stored(t)
			switch {
			case tt.wantHolder == "-" && l != nil:
				t.Errorf("a Lease is stored, held by %q; want none", lease.Holder(l.Spec))
			case tt.wantHolder == "-":
			case l == nil:
				t.Fatalf("no Lease stored, want one held by %q", tt.wantHolder)
			default:
				if got := lease.Holder(l.Spec); got != tt.wantHolder {
					t.Errorf("stored holder = %q, want %q", got, tt.wantHolder)
				}
				if got := l.Annotations["note"]; got != tt.wantNote {
					t.Errorf("stored note = %q, want %q", got, tt.wantNote)
				}
			}
			// Current is the Lease as written when Written, the base of the next write.
			if out == lease.Written && (env.own.Current() == nil || env.own.Current().ResourceVersion != l.ResourceVersion) {
				t.Errorf("Current() = %v after Written, want the stored Lease (resourceVersion %s)", env.own.Current(), l.ResourceVersion)
			}
		})
	}
}

// errAny stands for any error in TestOwnWrite's table.
var errAny = errors.New("any error")

func declineAll(*ownEnv) func(*object.Lease) (*object.Lease, error) {
	return func(*object.Lease) (*object.Lease, error) { return nil, nil }
}

// renewOnly is env.hold for a process that must not create the Lease (it was given one
// and lost it).
func renewOnly(env *ownEnv) func(*object.Lease) (*object.Lease, error) {
	return func(cur *object.Lease) (*object.Lease, error) {
		if cur == nil {
			return nil, nil
		}
		return env.hold(cur)
	}
}

func failWith(err error) func(*object.Lease) (*object.Lease, error) {
	return func(*object.Lease) (*object.Lease, error) { return nil, err }
}

// writeOwn has env's Own take the Lease, as a setup.
func writeOwn(t *testing.T, env *ownEnv) {
	t.Helper()
	if out, err := env.own.Write(context.Background(), env.hold); out != lease.Written {
		t.Fatalf("setup: Write = %v, %v", out, err)
	}
}

// The renewal counts from the start of the write, after the change was made and before
// the server applied it; nothing else moves it.
func TestOwnRenewalTiming(t *testing.T) {
	env := newOwnEnv(t)
	if !env.own.Renewed().IsZero() || env.own.Current() != nil {
		t.Fatalf("before any write: Renewed() = %v, Current() = %v; want zero, nil", env.own.Renewed(), env.own.Current())
	}
	// The server takes a second to apply each write; the change itself takes one.
	env.setHook(func(r *http.Request) {
		if r.Method != http.MethodGet {
			env.clk.Step(time.Second)
		}
	})
	slowHold := func(cur *object.Lease) (*object.Lease, error) {
		l, err := env.hold(cur)
		env.clk.Step(time.Second)
		return l, err
	}
	for i := range 2 { // a creation, then an update
		env.clk.Step(time.Minute)
		start := env.clk.Now().Add(time.Second) // once the change is made
		if out, err := env.own.Write(context.Background(), slowHold); out != lease.Written {
			t.Fatalf("write %d: Write = %v, %v", i, out, err)
		}
		if got := env.own.Renewed(); !got.Equal(start) {
			t.Errorf("write %d: Renewed() = %v, want the start of the write, %v", i, got.Sub(epoch), start.Sub(epoch))
		}
		if got := env.own.Deadline(); !got.Equal(start.Add(timing.RenewDeadline)) {
			t.Errorf("write %d: Deadline() = %v, want RenewDeadline after the write's start", i, got.Sub(epoch))
		}
	}
	renewed := env.own.Renewed()

	// A failed write, a refused one, and a fresh read change nothing of the renewal.
	env.sim.Faults().FailRequests(1, http.StatusInternalServerError, 0, func(r *http.Request) bool { return r.Method == http.MethodPut })
	env.clk.Step(time.Minute)
	if out, _ := env.own.Write(context.Background(), env.hold); out != lease.Failed {
		t.Errorf("Write against a failing server = %v, want Failed", out)
	}
	if out, _ := env.own.Write(context.Background(), failWith(lease.ErrRefused)); out != lease.Refused {
		t.Errorf("Write refused by its change = %v, want Refused", out)
	}
	env.own.Invalidate()
	if env.own.Current() != nil {
		t.Error("Current() after Invalidate is not nil")
	}
	if got := env.own.Renewed(); !got.Equal(renewed) {
		t.Errorf("Renewed() moved from %v to %v without a successful write", renewed.Sub(epoch), got.Sub(epoch))
	}

	// Observed sets the base of the next write, without a read.
	stored := env.stored(t)
	env.own.Observed(stored)
	env.takeRequests()
	var given string
	if out, _ := env.own.Write(context.Background(), func(cur *object.Lease) (*object.Lease, error) {
		given = cur.ResourceVersion
		return env.hold(cur)
	}); out != lease.Written {
		t.Errorf("Write after Observed = %v", out)
	}
	if given != stored.ResourceVersion {
		t.Errorf("the change was given resourceVersion %s, want the observed %s", given, stored.ResourceVersion)
	}
	if d := cmp.Diff([]string{"PUT"}, env.takeRequests()); d != "" {
		t.Errorf("requests after Observed (-want +got):\n%s", d)
	}

	env.own.Forget()
	if !env.own.Renewed().IsZero() || env.own.Current() != nil {
		t.Errorf("after Forget: Renewed() = %v, Current() = %v; want zero, nil", env.own.Renewed(), env.own.Current())
	}
	if got := env.own.Name(); got != name {
		t.Errorf("Name() = %q, want %q", got, name)
	}
}

// The change is given a copy: what it does to a Lease it then refuses is not kept.
func TestOwnChangeGetsACopy(t *testing.T) {
	env := newOwnEnv(t)
	writeOwn(t, env)
	before := object.DeepCopy(env.own.Current())
	out, _ := env.own.Write(context.Background(), func(cur *object.Lease) (*object.Lease, error) {
		cur.Spec.HolderIdentity = ptr("scribbled")
		cur.Annotations = map[string]string{"scribbled": "yes"}
		return nil, lease.ErrRefused
	})
	if out != lease.Refused {
		t.Fatalf("Write = %v, want Refused", out)
	}
	if d := cmp.Diff(before, env.own.Current(), cmp.Comparer(func(a, b object.Unknown) bool { return a.Equal(b) })); d != "" {
		t.Errorf("Current() changed by a refused change (-before +after):\n%s", d)
	}
}
