package shardgroup

import (
	"context"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// trun is one row's runner: a member "a" of the group on a simulated apiserver, on a
// fake clock, whose Run has not started; step is driven by hand.
type trun struct {
	t      *testing.T
	sim    *apisim.Server
	clk    *clock.Fake
	leases *listwatch.Resource[*object.Lease]
	r      *runner
	cancel context.CancelFunc
}

func newTrun(t *testing.T) *trun {
	t.Helper()
	sim, c := simtest.Start(t, apisim.Options{})
	clk := clock.NewFake(epoch)
	nop := func(context.Context, shard.Set) error { return nil }
	m, err := New(c, Options{Group: group, ID: "a", Namespace: namespace, Clock: clk, Acquire: nop, Release: nop})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &trun{t: t, sim: sim, clk: clk, leases: listwatch.For[*object.Lease](c, listwatch.LeaseResource(), namespace),
		r: newRunner(m, ctx), cancel: cancel}
}

// joined runs the runner to a member with its Lease written and its claims acquired.
func (tr *trun) joined() state {
	tr.t.Helper()
	var s state = joining{}
	for range 4 {
		s = tr.r.step(s)
		if cb := tr.r.cb; cb != nil {
			<-cb.finished
		}
	}
	if _, ok := s.(member); !ok || tr.r.acting.IsEmpty() {
		tr.t.Fatalf("the runner did not join and acquire: %#v, acting %v", s, tr.r.acting)
	}
	return s
}

// other writes a live Lease of this member's ID in another incarnation.
func (tr *trun) other(holder string) {
	tr.t.Helper()
	l := testLease("a", "", "", whole, whole)
	l.Namespace, l.Spec.HolderIdentity = namespace, &holder
	l.Annotations[IncarnationAnnotation] = "inc-other"
	renewed(l, 0)
	if _, err := tr.leases.Create(context.Background(), l); err != nil {
		tr.t.Fatal(err)
	}
}

// stuckCallback is a callback that never returns.
func (tr *trun) stuckCallback(since time.Duration) {
	tr.r.cb = &callback{kind: releaseCall, part: shard.WholeSet(), cancel: func() {}, finished: make(chan struct{}),
		start: tr.clk.Now().Add(-since)}
}

// scenarios are keyed by the state and the event's words in the package doc's table
// ("Joining: the read or the write fails"); each returns the
// state the row starts from, its runner set up for the event.
func transitionScenarios() map[string]func(tr *trun) state {
	return map[string]func(tr *trun) state{
		"Joining: no live Lease of its ID stands: it writes its own, claiming nothing": func(tr *trun) state { return joining{} },
		"Joining: another live process of its ID holds the Lease": func(tr *trun) state {
			tr.other("a")
			return joining{}
		},
		"Joining: the read or the write fails": func(tr *trun) state {
			tr.sim.Faults().FailRequests(1<<30, http.StatusServiceUnavailable, 0, nil)
			return joining{}
		},
		"Joining: the Lease belongs to another group or member": func(tr *trun) state {
			tr.other("b")
			return joining{}
		},
		"Joining: Run's context has ended": func(tr *trun) state {
			tr.cancel()
			return joining{}
		},
		"Waiting: that process's Lease is released, or expires": func(tr *trun) state {
			tr.other("a")
			s := tr.r.step(joining{})
			tr.clk.Step(DefaultLeaseDuration)
			return s
		},
		"Waiting: it still stands: the member marks it, every LeaseDuration": func(tr *trun) state {
			tr.other("a")
			return tr.r.step(joining{})
		},
		"Member: a round: read, release, acquire, claim, renew": func(tr *trun) state { return tr.joined() },
		"Member: RenewDeadline has passed since the start of the last renewal": func(tr *trun) state {
			s := tr.joined()
			tr.clk.Step(DefaultRenewDeadline)
			return s
		},
		"Member: its Lease was deleted, or another process took it over": func(tr *trun) state {
			s := tr.joined()
			if err := tr.leases.Delete(context.Background(), leaseName(group, "a"), listwatch.DeleteOptions{}); err != nil {
				tr.t.Fatal(err)
			}
			return s
		},
		"Member: an Acquire or Release has run a round past HandoverTimeout": func(tr *trun) state {
			s := tr.joined()
			tr.stuckCallback(DefaultHandoverTimeout + DefaultRetryPeriod)
			return s
		},
		"Member: a Release has kept failing for HandoverTimeout": func(tr *trun) state {
			s := tr.joined()
			tr.r.acting, tr.r.unreleased = shard.Set{}, shard.WholeSet()
			tr.r.unreleasedSince = tr.clk.Now().Add(-DefaultHandoverTimeout)
			return s
		},
		"Leaving: a round, still handing over": func(tr *trun) state {
			tr.joined()
			tr.r.leaving = true
			return leaving{}
		},
		"Leaving: everything released, an empty claim written: the Lease is deleted": func(tr *trun) state {
			tr.joined()
			tr.r.leaving = true
			tr.r.acting = shard.Set{}
			return leaving{}
		},
		"Lost: the callback it stopped has not returned": func(tr *trun) state {
			tr.joined()
			tr.stuckCallback(0)
			return lost{reason: "test"}
		},
		"Lost: everything is released, but its claims still stand for the others": func(tr *trun) state {
			tr.joined()
			tr.r.acting = shard.Set{}
			return lost{reason: "test", until: tr.clk.Now().Add(time.Second)}
		},
		"Lost: everything is released, and its claims have lapsed": func(tr *trun) state {
			tr.joined()
			tr.r.acting = shard.Set{}
			return lost{reason: "test", until: tr.clk.Now()}
		},
		"Waiting: Run's context has ended": func(tr *trun) state {
			tr.other("a")
			s := tr.r.step(joining{})
			tr.cancel()
			return s
		},
		"Member: Run's context has ended": func(tr *trun) state {
			s := tr.joined()
			tr.cancel()
			return s
		},
		"Leaving: RenewDeadline has passed since the start of the last renewal": func(tr *trun) state {
			tr.joined()
			tr.r.leaving = true
			tr.clk.Step(DefaultRenewDeadline)
			return leaving{}
		},
		"Lost: Run's context had ended": func(tr *trun) state {
			tr.joined()
			tr.r.acting = shard.Set{}
			tr.cancel()
			return lost{reason: "test"}
		},
	}
}

// describe names where step led, as the table does.
func describe(s state, r *runner) string {
	if s == nil {
		if r.err != nil {
			return "Stopped (error)"
		}
		return "Stopped"
	}
	return string(s.name())
}

var tableRow = regexp.MustCompile(`^//\t(\w+) {2,}(.+?) {2,}→ (.+)$`)

// TestTransitions runs every row of the package doc's table against step: from the
// row's state, with the row's event set up, step must lead to the row's state.
func TestTransitions(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	scenarios := transitionScenarios()
	used := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(string(doc), "\n") {
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		from, event, to := m[1], m[2], strings.TrimSpace(m[3])
		setup, ok := scenarios[from+": "+event]
		if !ok {
			t.Errorf("no scenario for the row %q", line)
			continue
		}
		used[from+": "+event] = true
		t.Run(from+": "+event, func(t *testing.T) {
			tr := newTrun(t)
			s := setup(tr)
			if got := string(s.name()); got != from {
				t.Fatalf("the scenario starts from %s, the row from %s", got, from)
			}
			next := tr.r.step(s)
			if got := describe(next, tr.r); got != to {
				t.Errorf("%s, %s: step led to %s, want %s", from, event, got, to)
			}
		})
	}
	if rows < 15 {
		t.Fatalf("only %d rows read from the table", rows)
	}
	for event := range scenarios {
		if !used[event] {
			t.Errorf("scenario %q is in no row of the table", event)
		}
	}
}
