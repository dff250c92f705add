package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/controllers/manager"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/object"
)

// view shows what flows through the engine while the story runs: per informer the
// watch events per second and the cache size, per controller the queue depth, syncs per
// second and retries, and per ReplicaSet of the demo Deployment its revision and a bar of
// desired, ready and available pods. On a terminal it redraws in place; otherwise it
// prints a line every two seconds.
type view struct {
	out      io.Writer
	tty      bool
	where    string
	gatherer prometheus.Gatherer

	deploys *informer.Informer[*object.Deployment]
	rss     *informer.Informer[*object.ReplicaSet]
	pods    *informer.Informer[*object.Pod]
	ns      string

	mu       sync.Mutex
	chapters []string // finished chapters, with their durations
	current  string
	began    time.Time
	last     sample
	lastAt   time.Time
	rates    map[string]float64
	drawn    int // lines of the last frame on the terminal
	width    int // of the terminal: longer lines would wrap and break the redraw
	stopped  chan struct{}
	stopOnce sync.Once
}

func newView(ctx context.Context, env *demoEnv, m *manager.Manager, out io.Writer, tty bool) (*view, error) {
	var f *informer.Factory
	var g prometheus.Gatherer
	if m != nil {
		f, g = m.Factory(), m.Gatherer()
	} else {
		reg := prometheus.NewRegistry()
		metrics, err := informer.NewMetrics(reg)
		if err != nil {
			return nil, err
		}
		f, g = informer.NewFactory(env.client, informer.FactoryOptions{Metrics: metrics}), reg
		f.Start(ctx)
		go func() { <-ctx.Done(); f.Shutdown() }()
	}
	sel := informer.Selectors{Namespace: env.namespace}
	v := &view{out: out, tty: tty, width: terminalWidth(), where: env.where, gatherer: g, ns: env.namespace, stopped: make(chan struct{}), rates: map[string]float64{}}
	var err error
	if v.deploys, err = informer.For[*object.Deployment](ctx, f, "deployments.apps", sel); err != nil {
		return nil, err
	}
	if v.rss, err = informer.For[*object.ReplicaSet](ctx, f, "replicasets.apps", sel); err != nil {
		return nil, err
	}
	if v.pods, err = informer.For[*object.Pod](ctx, f, "pods", sel); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *view) waitForSync(ctx context.Context) error {
	return informer.WaitForSync(ctx, v.deploys, v.rss, v.pods)
}

// run draws until ctx ends or stop is called, then draws a last frame.
func (v *view) run(ctx context.Context) {
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

func (v *view) stop() { v.stopOnce.Do(func() { close(v.stopped) }) }

func (v *view) chapter(n, of int, title string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.current = fmt.Sprintf("%d/%d %s", n, of, title)
	v.began = time.Now()
	if !v.tty {
		fmt.Fprintf(v.out, "▸ %s\n", v.current)
	}
}

func (v *view) done() {
	v.mu.Lock()
	defer v.mu.Unlock()
	line := fmt.Sprintf("✓ %-56s %5.1fs", v.current, time.Since(v.began).Seconds())
	v.chapters = append(v.chapters, line)
	v.current = ""
	if !v.tty {
		fmt.Fprintln(v.out, line)
	}
}

// draw renders one frame: in place on a terminal (cursor up over the last frame, clear
// to the end of the screen), as one summary line otherwise.
func (v *view) draw() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.updateRates()
	if !v.tty {
		fmt.Fprintln(v.out, v.summary())
		return
	}
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\r\x1b[J", v.drawn)
	}
	frame := fitWidth(v.frame(), v.width)
	b.WriteString(frame)
	v.drawn = strings.Count(frame, "\n")
	_, _ = io.WriteString(v.out, b.String())
}

func (v *view) frame() string {
	var b strings.Builder
	for _, c := range v.chapters {
		b.WriteString(" " + c + "\n")
	}
	if v.current != "" {
		fmt.Fprintf(&b, " ▸ %-56s %5.1fs\n", v.current, time.Since(v.began).Seconds())
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, " %-12s %8s %6s   %-11s %5s %7s %7s\n", "informer", "events/s", "cached", "queue", "depth", "syncs/s", "retries")
	infs := v.informerRows()
	queues := v.queueRows()
	for i := range max(len(infs), len(queues)) {
		left, right := strings.Repeat(" ", 28), ""
		if i < len(infs) {
			left = infs[i]
		}
		if i < len(queues) {
			right = queues[i]
		}
		fmt.Fprintf(&b, " %s   %s\n", left, right)
	}
	b.WriteString("\n")
	for _, l := range v.rolloutRows() {
		b.WriteString(" " + l + "\n")
	}
	return b.String()
}

func (v *view) informerRows() []string {
	var rows []string
	for _, r := range []struct {
		label string
		name  string
		n     int
	}{{"deployments", v.deploys.Name(), v.deploys.Cache().Len()}, {"replicasets", v.rss.Name(), v.rss.Cache().Len()}, {"pods", v.pods.Name(), v.pods.Cache().Len()}} {
		rows = append(rows, fmt.Sprintf("%-12s %8.1f %6d", r.label, v.rates["events|"+r.name], r.n))
	}
	return rows
}

func (v *view) queueRows() []string {
	var rows []string
	for _, q := range []string{"deployment", "replicaset"} {
		if _, ok := v.last["depth|"+q]; !ok {
			continue
		}
		rows = append(rows, fmt.Sprintf("%-11s %5.0f %7.1f %7.0f", q, v.last["depth|"+q], v.rates["syncs|"+q], v.last["retries|"+q]))
	}
	return rows
}

// rolloutRows shows the Deployment and, per ReplicaSet by revision, a bar: █ available,
// ▓ ready but not yet available, ░ desired but not ready.
func (v *view) rolloutRows() []string {
	d, ok := v.deploys.Lister().Namespace(v.ns).Get(demoDeployment)
	if !ok {
		return []string{"deployment/web: none"}
	}
	st := d.Status
	rows := []string{fmt.Sprintf("deployment/web rev %d: %d replicas, %d updated, %d ready, %d available%s",
		revisionOf(&d.ObjectMeta), st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas, pausedNote(d)),
		"ReplicaSets   (█ available  ▓ ready  ░ starting)      desired/ready/available"}
	for _, rs := range v.owned(d) {
		desired := int32(0)
		if rs.Spec.Replicas != nil {
			desired = *rs.Spec.Replicas
		}
		s := rs.Status
		bar := strings.Repeat("█", int(min(s.AvailableReplicas, 40))) +
			strings.Repeat("▓", int(max(0, min(s.ReadyReplicas-s.AvailableReplicas, 40)))) +
			strings.Repeat("░", int(max(0, min(desired-s.ReadyReplicas, 40))))
		rows = append(rows, fmt.Sprintf("rev %-2d %-16s %-11s %-13s %2d/%2d/%2d", revisionOf(&rs.ObjectMeta), rs.Name,
			imageOf(rs.Spec.Template), bar, desired, s.ReadyReplicas, s.AvailableReplicas))
	}
	return rows
}

func pausedNote(d *object.Deployment) string {
	if d.Spec.Paused {
		return "  (paused)"
	}
	return ""
}

// summary is the periodic line when the output is not a terminal.
func (v *view) summary() string {
	var b strings.Builder
	d, ok := v.deploys.Lister().Namespace(v.ns).Get(demoDeployment)
	if ok {
		fmt.Fprintf(&b, "  web rev %d: %d replicas, %d updated, %d available%s |", revisionOf(&d.ObjectMeta),
			d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas, pausedNote(d))
		for _, rs := range v.owned(d) {
			fmt.Fprintf(&b, " rev%d %d/%d/%d", revisionOf(&rs.ObjectMeta), replicasOrZero(rs), rs.Status.ReadyReplicas, rs.Status.AvailableReplicas)
		}
		b.WriteString(" |")
	}
	fmt.Fprintf(&b, " events/s deploy %.0f rs %.0f pods %.0f | cached pods %d", v.rates["events|"+v.deploys.Name()],
		v.rates["events|"+v.rss.Name()], v.rates["events|"+v.pods.Name()], v.pods.Cache().Len())
	if _, ok := v.last["depth|deployment"]; ok {
		fmt.Fprintf(&b, " | queues %.0f/%.0f syncs/s %.0f retries %.0f", v.last["depth|deployment"], v.last["depth|replicaset"],
			v.rates["syncs|deployment"]+v.rates["syncs|replicaset"], v.last["retries|deployment"]+v.last["retries|replicaset"])
	}
	return b.String()
}

func replicasOrZero(rs *object.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 0
	}
	return *rs.Spec.Replicas
}

// owned returns the Deployment's ReplicaSets, by revision.
func (v *view) owned(d *object.Deployment) []*object.ReplicaSet {
	var out []*object.ReplicaSet
	for _, rs := range v.rss.Lister().Namespace(v.ns).List(object.Everything()) {
		if ref := object.ControllerRef(&rs.ObjectMeta); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	slices.SortFunc(out, func(a, b *object.ReplicaSet) int { return int(revisionOf(&a.ObjectMeta) - revisionOf(&b.ObjectMeta)) })
	return out
}

func imageOf(t object.PodTemplateSpec) string {
	var spec struct{ Containers []struct{ Image string } }
	if json.Unmarshal(t.Spec, &spec) != nil || len(spec.Containers) == 0 {
		return ""
	}
	return spec.Containers[0].Image
}

// sample holds metric values by "kind|label": events|informer, syncs|controller,
// depth|queue, retries|queue.
type sample map[string]float64

func (v *view) updateRates() {
	now := time.Now()
	cur := sample{}
	families, err := v.gatherer.Gather()
	if err != nil {
		return
	}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			label := func(name string) string {
				for _, l := range m.GetLabel() {
					if l.GetName() == name {
						return l.GetValue()
					}
				}
				return ""
			}
			switch mf.GetName() {
			case "kinformer_reflector_watch_events_total":
				cur["events|"+label("name")] += m.GetCounter().GetValue()
			case "kinformer_controller_sync_duration_seconds":
				cur["syncs|"+label("controller")] += float64(m.GetHistogram().GetSampleCount())
			case "workqueue_depth":
				cur["depth|"+label("name")] = m.GetGauge().GetValue()
			case "workqueue_retries_total":
				cur["retries|"+label("name")] = m.GetCounter().GetValue()
			}
		}
	}
	if v.last != nil {
		dt := now.Sub(v.lastAt).Seconds()
		for k, val := range cur {
			if strings.HasPrefix(k, "events|") || strings.HasPrefix(k, "syncs|") {
				v.rates[k] = (val - v.last[k]) / dt
			}
		}
	}
	v.last, v.lastAt = cur, now
}

// The conditions the story waits for, read from the caches.

func (v *view) deployment() (*object.Deployment, bool) {
	return v.deploys.Lister().Namespace(v.ns).Get(demoDeployment)
}

func (v *view) rolledOut(replicas int32, image string) func() (bool, string) {
	return func() (bool, string) {
		d, ok := v.deployment()
		if !ok {
			return false, "the Deployment"
		}
		st := d.Status
		done := st.ObservedGeneration >= d.Generation && imageOf(d.Spec.Template) == image &&
			st.Replicas == replicas && st.UpdatedReplicas == replicas && st.AvailableReplicas == replicas
		return done, fmt.Sprintf("%d updated and available replicas of %s (status %+v)", replicas, image, st)
	}
}

// started: the new ReplicaSet of image exists and has grown, while old pods still run.
func (v *view) started(image string) func() (bool, string) {
	return func() (bool, string) {
		d, ok := v.deployment()
		if !ok {
			return false, "the Deployment"
		}
		var newDesired, oldDesired int32
		for _, rs := range v.owned(d) {
			if imageOf(rs.Spec.Template) == image {
				newDesired = replicasOrZero(rs)
			} else {
				oldDesired += replicasOrZero(rs)
			}
		}
		return newDesired >= 1 && oldDesired >= 1, "the rollout to " + image + " to begin"
	}
}

func (v *view) pausedCondition() func() (bool, string) {
	return func() (bool, string) {
		d, ok := v.deployment()
		if !ok {
			return false, "the Deployment"
		}
		for _, c := range d.Status.Conditions {
			if c.Type == "Progressing" && c.Reason == "DeploymentPaused" {
				return true, ""
			}
		}
		return false, "the DeploymentPaused condition"
	}
}

func (v *view) gone() func() (bool, string) {
	return func() (bool, string) {
		_, d := v.deployment()
		n := len(v.rss.Lister().Namespace(v.ns).List(object.Everything())) + len(v.pods.Lister().Namespace(v.ns).List(object.Everything()))
		return !d && n == 0, fmt.Sprintf("the Deployment, its ReplicaSets and pods to be gone (%d left)", n)
	}
}

func (v *view) revision() int64 {
	d, ok := v.deployment()
	if !ok {
		return 0
	}
	return revisionOf(&d.ObjectMeta)
}

func (v *view) replicaSetOfRevision(rev int64) *object.ReplicaSet {
	d, ok := v.deployment()
	if !ok {
		return nil
	}
	for _, rs := range v.owned(d) {
		if revisionOf(&rs.ObjectMeta) == rev {
			return rs
		}
	}
	return nil
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
