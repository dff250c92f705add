package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock is the part of package time the engine uses.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d, unless the timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a stoppable, resettable AfterFunc timer.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Fake is a manual clock: time moves only on Step, which runs the timers that fall due,
// in order, before it returns.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake returns a fake clock set at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// AfterFunc registers f to run when Step passes now+d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{clock: f, fn: fn, at: f.now.Add(d), active: true}
	f.timers = append(f.timers, t)
	return t
}

// Step advances the clock by d and runs every timer due by then, earliest first.
func (f *Fake) Step(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	var due []*fakeTimer
	for _, t := range f.timers {
		if t.active && !t.at.After(f.now) {
			t.active = false
			due = append(due, t)
		}
	}
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	f.compact()
	f.mu.Unlock()
	for _, t := range due {
		t.fn()
	}
}

// Pending returns how many timers are armed.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.timers {
		if t.active {
			n++
		}
	}
	return n
}

func (f *Fake) compact() {
	live := f.timers[:0]
	for _, t := range f.timers {
		if t.active {
			live = append(live, t)
		}
	}
	f.timers = live
}

type fakeTimer struct {
	clock  *Fake
	fn     func()
	at     time.Time
	active bool
}

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := t.active
	t.at = t.clock.now.Add(d)
	if !t.active {
		t.active = true
		t.clock.timers = append(t.clock.timers, t)
	}
	return was
}
