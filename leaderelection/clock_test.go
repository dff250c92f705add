package leaderelection

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/lease"
	"github.com/kinformer/kinformer/object"
)

// armedClock is a fake clock that tells the test of every timer armed on it, so that the
// test steps it only once the elector waits on it.
type armedClock struct {
	*clock.Fake
	armed chan time.Duration
}

func newArmedClock() *armedClock {
	// Buffered so that the elector never blocks on a test that is not listening: the
	// tests below arm a few timers per step, and step a few times.
	return &armedClock{
		Fake:  clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)),
		armed: make(chan time.Duration, 256),
	}
}

func (c *armedClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := c.Fake.AfterFunc(d, f)
	c.armed <- d
	return t
}

// awaitWait waits for the elector to arm a wait between two attempts and returns how
// long it is. It skips the timeouts of requests, which with these tests' timings are
// longer than a RetryPeriod with its jitter (at least RenewDeadline - RetryPeriod).
func (c *armedClock) awaitWait(t *testing.T) time.Duration {
	t.Helper()
	limit := retryPeriod + lease.Timing{RetryPeriod: retryPeriod}.MaxJitter()
	timeout := time.After(2 * time.Second)
	for {
		select {
		case d := <-c.armed:
			if d <= limit {
				return d
			}
		case <-timeout:
			t.Fatal("the elector armed no wait in 2s")
		}
	}
}

// A leader frozen past its renew deadline (SIGSTOP, a long pause) knows on waking,
// before its loop has run: IsLeader and Check read the elector's clock when called.
// Here the freeze is a step of a fake clock while the leader's renewal hangs on the
// server. The fake clock runs its due timers in order, already at its new time; a probe
// due before the elector's own timers sees the elector exactly as a process that has
// just woken, none of whose goroutines has run yet.
func TestFrozenPastRenewDeadline(t *testing.T) {
	env := newEnv(t)
	clk := newArmedClock()
	a := newCandidate(t, env, "a", candidateOptions{clock: clk})
	leaderOf(t, 2*time.Second, a)
	if d := clk.awaitWait(t); d != retryPeriod {
		t.Fatalf("a's first wait as leader is %v, want RetryPeriod (%v)", d, retryPeriod)
	}

	// The server stops answering a; its next renewal, a RetryPeriod on, hangs.
	env.front.hang("a")
	reads := env.front.readsBy("a")
	clk.Step(retryPeriod)
	if !env.front.awaitReads("a", reads+1, 2*time.Second) {
		t.Fatal("a made no renewal attempt after its RetryPeriod")
	}
	if !a.e.IsLeader() || a.e.Check() != nil {
		t.Fatalf("a RetryPeriod after renewing: IsLeader() = %v, Check() = %v; want true, nil", a.e.IsLeader(), a.e.Check())
	}

	// Frozen, then woken past RenewDeadline + RetryPeriod since the last renewal, which
	// started when the clock began: Check's limit.
	var leading bool
	var status float64
	var checkErr error
	clk.AfterFunc(0, func() {
		leading, checkErr, status = a.e.IsLeader(), a.e.Check(), masterStatus(t, a.reg)
	})
	clk.Step(renewDeadline + time.Millisecond)
	if leading || status != 0 {
		t.Errorf("on waking past the renew deadline: IsLeader() = %v, leader_election_master_status = %v; want false, 0", leading, status)
	}
	if checkErr == nil {
		t.Error("on waking past the renew deadline + RetryPeriod: Check() = nil, want an error")
	} else {
		t.Logf("Check() = %v", checkErr)
	}

	// The hung renewal's timeout fell due in the same step: the loop then gives up too.
	if err := a.returned(t, 2*time.Second); !errors.Is(err, ErrLeadershipLost) {
		t.Errorf("a's Run = %v, want ErrLeadershipLost", err)
	}
	if _, ok := env.tl.last("a", "cancelled"); !ok {
		t.Errorf("a's work was not cancelled; timeline:\n%s", env.tl)
	}
}

// Another holder's lease expires on the elector's clock, from when the elector first saw
// its record: here no real time passes at all, and the record's renewTime (far in the
// future) plays no part.
func TestExpiryOnTheElectorsClock(t *testing.T) {
	env := newEnv(t)
	future := object.NewMicroTime(time.Now().Add(time.Hour))
	env.putLease(t, object.LeaseSpec{
		HolderIdentity: ptr("dead"), LeaseDurationSeconds: ptr[int32](1), RenewTime: &future, AcquireTime: &future,
	})
	clk := newArmedClock()
	start := clk.Now()
	a := newCandidate(t, env, "a", candidateOptions{clock: clk})
	step := retryPeriod + lease.Timing{RetryPeriod: retryPeriod}.MaxJitter()
	for {
		// Every step makes exactly one attempt, the elector's wait being at most step.
		clk.awaitWait(t)
		elapsed := clk.Now().Sub(start)
		if a.e.IsLeader() {
			if elapsed < time.Second {
				t.Errorf("a took over %v after first seeing the lease, want at least its 1s", elapsed)
			}
			if elapsed >= time.Second+step {
				t.Errorf("a took over %v after first seeing the lease, want at its first attempt from 1s", elapsed)
			}
			break
		}
		if elapsed >= time.Second+step {
			t.Fatalf("a still stands by %v after first seeing the lease (1s)", elapsed)
		}
		clk.Step(step)
	}
	// The spec had no leaseTransitions: taking it over is its first transition.
	if d := cmp.Diff(holderView{"a", 2, 1}, viewOf(env.lease(t))); d != "" {
		t.Errorf("lease after the takeover (-want +got):\n%s", d)
	}
	l := env.lease(t)
	if !l.Spec.RenewTime.Equal(clk.Now().Truncate(time.Microsecond)) || !l.Spec.AcquireTime.Equal(l.Spec.RenewTime.Time) {
		t.Errorf("acquireTime %v, renewTime %v: want both the elector's clock at the takeover, %v",
			l.Spec.AcquireTime.Time, l.Spec.RenewTime.Time, clk.Now())
	}
}
