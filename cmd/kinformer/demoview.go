package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/clock"
)

// view shows the story's progress and a snapshot of the engine while the story runs: on
// a terminal a frame redrawn in place, otherwise each chapter and a summary line every
// two seconds.
type view struct {
	out    io.Writer
	tty    bool
	width  int // of the terminal: longer lines would wrap and break the redraw
	clock  clock.Clock
	sample func() snapshot

	mu       sync.Mutex
	chapters []string // finished, with their durations
	current  string
	began    time.Time
	drawn    int // lines of the last frame on the terminal

	stopped  chan struct{}
	finished chan struct{} // closed when run has returned
	stopOnce sync.Once
}

func newView(out io.Writer, tty bool, clk clock.Clock, sample func() snapshot) *view {
	return &view{out: out, tty: tty, width: terminalWidth(), clock: clk, sample: sample,
		stopped: make(chan struct{}), finished: make(chan struct{})}
}

// run draws until ctx ends or stop is called, then draws a last frame.
func (v *view) run(ctx context.Context) {
	defer close(v.finished)
	every := 2 * time.Second
	if v.tty {
		every = 250 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-v.stopped:
			v.draw()
			return
		case <-tick.C:
			v.draw()
		}
	}
}

// stop has run draw its last frame and waits for it, so that nothing the caller prints
// next comes before it (or, on a terminal, is drawn over).
func (v *view) stop() {
	v.stopOnce.Do(func() { close(v.stopped) })
	<-v.finished
}

// chapter and done tell the view of the story's progress.
func (v *view) chapter(n, of int, title string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.current = fmt.Sprintf("%d/%d %s", n, of, title)
	v.began = v.clock.Now()
	if !v.tty {
		fmt.Fprintf(v.out, "▸ %s\n", v.current)
	}
}

func (v *view) done() {
	v.mu.Lock()
	defer v.mu.Unlock()
	line := fmt.Sprintf("✓ %-56s %5.1fs", v.current, v.clock.Now().Sub(v.began).Seconds())
	v.chapters = append(v.chapters, line)
	v.current = ""
	if !v.tty {
		fmt.Fprintln(v.out, line)
	}
}

// draw renders one frame: in place on a terminal (cursor up over the last frame, clear
// to the end of the screen), as one summary line otherwise.
func (v *view) draw() {
	s := v.sample()
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.tty {
		fmt.Fprintln(v.out, summary(s))
		return
	}
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\r\x1b[J", v.drawn)
	}
	var current string
	if v.current != "" {
		current = fmt.Sprintf("▸ %-56s %5.1fs", v.current, v.clock.Now().Sub(v.began).Seconds())
	}
	frame := fitWidth(frame(v.chapters, current, s), v.width)
	b.WriteString(frame)
	v.drawn = strings.Count(frame, "\n")
	_, _ = io.WriteString(v.out, b.String())
}

// frame is the terminal's view: the chapters, the informers and queues, the rollout.
func frame(chapters []string, current string, s snapshot) string {
	var b strings.Builder
	for _, c := range chapters {
		b.WriteString(" " + c + "\n")
	}
	if current != "" {
		b.WriteString(" " + current + "\n")
	}
	b.WriteString("\n")
	header := fmt.Sprintf("%-12s %8s %6s", "informer", "events/s", "cached")
	if len(s.queues) > 0 {
		header += fmt.Sprintf("   %-11s %5s %7s %7s %6s", "queue", "depth", "syncs/s", "retries", "stale")
	}
	b.WriteString(" " + header + "\n")
	counted := s.err == nil
	for i := range max(len(s.informers), len(s.queues)) {
		left, right := strings.Repeat(" ", 28), ""
		if i < len(s.informers) {
			r := s.informers[i]
			left = fmt.Sprintf("%-12s %8s %6d", r.label, figure(r.eventsPerSec, 1, counted), r.cached)
		}
		if i < len(s.queues) {
			q := s.queues[i]
			right = fmt.Sprintf("   %-11s %5d %7s %7s %6s", q.name, q.depth, figure(q.syncsPerSec, 1, counted),
				figure(q.retries, 0, counted), figure(q.stale, 0, counted))
		}
		b.WriteString(strings.TrimRight(" "+left+right, " ") + "\n")
	}
	if s.err != nil {
		b.WriteString(" metrics: " + s.err.Error() + "\n")
	}
	b.WriteString("\n")
	for _, l := range rolloutRows(s) {
		b.WriteString(" " + l + "\n")
	}
	return b.String()
}

// figure formats a value read from the engine's counters, or "?" when they could not be
// read: a missing figure must not look like a zero.
func figure(v float64, decimals int, counted bool) string {
	if !counted {
		return "?"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// rolloutRows shows the Deployment and, per ReplicaSet by revision, a bar: █ available,
// ▓ ready but not yet available, ░ desired but not ready.
func rolloutRows(s snapshot) []string {
	d := s.deployment
	if d == nil {
		return []string{"deployment/" + demoDeployment + ": none"}
	}
	st := d.Status
	rows := []string{fmt.Sprintf("deployment/%s rev %d: %d replicas, %d updated, %d ready, %d available%s", d.Name,
		revisionOf(&d.ObjectMeta), st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas, pausedNote(d.Spec.Paused)),
		"ReplicaSets   (█ available  ▓ ready  ░ starting)      desired/ready/available"}
	for _, rs := range s.replicaSets {
		desired, rst := replicasOrZero(rs), rs.Status
		bar := strings.Repeat("█", int(min(rst.AvailableReplicas, 40))) +
			strings.Repeat("▓", int(max(0, min(rst.ReadyReplicas-rst.AvailableReplicas, 40)))) +
			strings.Repeat("░", int(max(0, min(desired-rst.ReadyReplicas, 40))))
		rows = append(rows, fmt.Sprintf("rev %-2d %-16s %-11s %-13s %2d/%2d/%2d", revisionOf(&rs.ObjectMeta), rs.Name,
			imageOf(rs.Spec.Template), bar, desired, rst.ReadyReplicas, rst.AvailableReplicas))
	}
	return rows
}

func pausedNote(paused bool) string {
	if paused {
		return "  (paused)"
	}
	return ""
}

// summary is the periodic line when the output is not a terminal.
func summary(s snapshot) string {
	var b strings.Builder
	if d := s.deployment; d != nil {
		fmt.Fprintf(&b, "  %s rev %d: %d replicas, %d updated, %d available%s |", d.Name, revisionOf(&d.ObjectMeta),
			d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas, pausedNote(d.Spec.Paused))
		for _, rs := range s.replicaSets {
			fmt.Fprintf(&b, " rev%d %d/%d/%d", revisionOf(&rs.ObjectMeta), replicasOrZero(rs), rs.Status.ReadyReplicas, rs.Status.AvailableReplicas)
		}
		b.WriteString(" |")
	}
	counted := s.err == nil
	b.WriteString(" events/s")
	for _, r := range s.informers {
		fmt.Fprintf(&b, " %s %s", r.short, figure(r.eventsPerSec, 0, counted))
	}
	for _, r := range s.informers {
		if r.label == "pods" {
			fmt.Fprintf(&b, " | cached pods %d", r.cached)
		}
	}
	if len(s.queues) > 0 {
		var depths []string
		var syncs, retries, stale float64
		for _, q := range s.queues {
			depths = append(depths, strconv.Itoa(q.depth))
			syncs, retries, stale = syncs+q.syncsPerSec, retries+q.retries, stale+q.stale
		}
		fmt.Fprintf(&b, " | queues %s syncs/s %s retries %s stale %s", strings.Join(depths, "/"),
			figure(syncs, 0, counted), figure(retries, 0, counted), figure(stale, 0, counted))
	}
	if s.err != nil {
		fmt.Fprintf(&b, " | metrics: %v", s.err)
	}
	return b.String()
}

// terminalWidth is $COLUMNS when the shell exports it, else 80: no terminal library
// (and no ioctl) is needed for a frame that fits in 80 columns anyway.
func terminalWidth() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 20 {
		return n
	}
	return 80
}

// fitWidth cuts every line of frame to width characters.
func fitWidth(frame string, width int) string {
	lines := strings.SplitAfter(frame, "\n")
	for i, l := range lines {
		r := []rune(strings.TrimSuffix(l, "\n"))
		if len(r) > width {
			lines[i] = string(r[:width]) + "\n"
		}
	}
	return strings.Join(lines, "")
}
