package overshoot

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Window is how long a larger spec.replicas still justifies the pods it had.
const Window = 30 * time.Second

// Watch polls ns every interval until Stop and keeps the first overshoot seen.
type Watch struct {
	mu      sync.Mutex
	first   string
	history map[string][]sample // by ReplicaSet UID
	seen    map[string]bool     // pod UIDs of earlier snapshots
	polls   int
	stop    chan struct{}
	done    chan struct{}
}

type sample struct {
	at   time.Time
	spec int32
}

// Start begins polling ns through c (use a client that sees no injected faults). Every
// version of every ReplicaSet also comes from a watch: a spec that went up and back down
// between two polls still counts.
func Start(ctx context.Context, c *listwatch.Client, ns string, interval time.Duration) (*Watch, error) {
	rsInfo, err := c.Discover(ctx, "replicasets.apps")
	if err != nil {
		return nil, err
	}
	podInfo, err := c.Discover(ctx, "pods")
	if err != nil {
		return nil, err
	}
	rss, pods := listwatch.For[*object.ReplicaSet](c, rsInfo, ns), listwatch.For[*object.Pod](c, podInfo, ns)
	w := newWatch()
	ctx, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		w.followSpecs(ctx, rss)
	}()
	go func() {
		defer close(w.done)
		defer func() { cancel(); <-watched }()
		for {
			select {
			case <-w.stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(interval):
			}
			rl, err := rss.List(ctx, listwatch.ListOptions{})
			if err != nil {
				continue
			}
			// The pods as of the same revision: one consistent snapshot of both.
			pl, err := pods.List(ctx, listwatch.ListOptions{ResourceVersion: rl.ResourceVersion, ResourceVersionMatch: "Exact"})
			if err != nil {
				continue
			}
			w.observe(time.Now(), rl.Items, pl.Items)
		}
	}()
	return w, nil
}

// followSpecs records every spec.replicas of every ReplicaSet until ctx ends, listing
// again whenever the watch breaks.
func (w *Watch) followSpecs(ctx context.Context, rss *listwatch.Resource[*object.ReplicaSet]) {
	for ctx.Err() == nil {
		l, err := rss.List(ctx, listwatch.ListOptions{})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for _, rs := range l.Items {
			w.record(time.Now(), rs)
		}
		stream, err := rss.Watch(ctx, listwatch.WatchOptions{ResourceVersion: l.ResourceVersion, AllowBookmarks: true})
		if err != nil {
			continue
		}
		for {
			ev, err := stream.Next()
			if err != nil {
				break
			}
			if ev.Type == listwatch.Added || ev.Type == listwatch.Modified {
				w.record(time.Now(), ev.Object)
			}
		}
		stream.Close()
	}
}

func (w *Watch) record(now time.Time, rs *object.ReplicaSet) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.history[rs.UID] = append(w.history[rs.UID], sample{at: now, spec: specOf(rs)})
}

func specOf(rs *object.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func newWatch() *Watch {
	return &Watch{history: map[string][]sample{}, seen: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
}

// observe checks one snapshot.
func (w *Watch) observe(now time.Time, rss []*object.ReplicaSet, pods []*object.Pod) {
	active, fresh := map[string]int32{}, map[string][]string{}
	w.mu.Lock()
	defer w.mu.Unlock()
	first := w.polls == 0
	for _, p := range pods {
		if ref := object.ControllerRef(&p.ObjectMeta); ref != nil && p.DeletionTimestamp == nil &&
			p.Status.Phase != object.PodSucceeded && p.Status.Phase != object.PodFailed {
			active[ref.UID]++
			if !w.seen[p.UID] && !first {
				fresh[ref.UID] = append(fresh[ref.UID], p.Name)
			}
		}
		w.seen[p.UID] = true
	}
	w.polls++
	for _, rs := range rss {
		h := append(w.history[rs.UID], sample{at: now, spec: specOf(rs)})
		for len(h) > 1 && now.Sub(h[0].at) > Window {
			h = h[1:]
		}
		w.history[rs.UID] = h
		allowed := int32(0)
		for _, s := range h {
			allowed = max(allowed, s.spec)
		}
		if n := active[rs.UID]; n > allowed && len(fresh[rs.UID]) > 0 && w.first == "" {
			w.first = fmt.Sprintf("%s had %d active pods with new %v; its spec.replicas was at most %d in the last %s",
				rs.Name, n, fresh[rs.UID], allowed, Window)
		}
	}
}

// Stop ends the polling and returns the first overshoot ("" if none) and the number of
// snapshots checked.
func (w *Watch) Stop() (string, int) {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first, w.polls
}
