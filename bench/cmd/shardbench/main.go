// Command shardbench measures what a change of a shard group's membership costs the
// apiserver: the objects the members list when one joins or leaves, against the objects
// whose owner changed (what must move). It runs sharded controller managers in one
// process against the in-memory apiserver (apisim, which honours shardSelector as
// kube-apiserver 1.36 with the ShardedListAndWatch gate does), on a cluster of numbered
// and word-named namespaces, each with a Deployment the managers reconcile, and writes a
// Markdown report.
//
//	go run ./bench/cmd/shardbench -out bench/results/sharded.md
//
// Listed objects are the sum, over every member, of the growth of
// kinformer_informer_listed_objects_total across the change (the newcomer's first lists
// included); moved objects are the Deployments, ReplicaSets and Pods of the namespaces
// whose owner changed. The report also gives what the members would have listed had
// each whose part changed relisted its whole new part (kinformer before it resharded by
// the difference), and the balance of the group after each change.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/controllers/manager"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shardgroup"
)

func main() {
	numbered := flag.Int("numbered", 30, "namespaces tenant-00, tenant-01, …")
	words := flag.Int("words", 30, "namespaces named by words")
	replicas := flag.Int("replicas", 3, "replicas of each namespace's Deployment")
	members := flag.Int("members", 3, "members before the first change")
	out := flag.String("out", "", "write the report here (default: stdout)")
	verbose := flag.Bool("v", false, "log the managers")
	flag.Parse()

	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	b, err := newBench(logger)
	if err != nil {
		log.Fatal(err)
	}
	defer b.close()
	namespaces := names(*numbered, *words)
	if err := b.populate(namespaces, int32(*replicas)); err != nil {
		log.Fatal(err)
	}
	var rows []row
	for i := range *members {
		b.start(fmt.Sprintf("m%d", i+1))
	}
	first, err := b.stable(fmt.Sprintf("%d members start", *members), len(namespaces)*(*replicas+2))
	if err != nil {
		log.Fatal(err)
	}
	prev := first
	for _, change := range []struct {
		what string
		do   func()
	}{
		{fmt.Sprintf("m%d joins", *members+1), func() { b.start(fmt.Sprintf("m%d", *members+1)) }},
		{fmt.Sprintf("m%d joins", *members+2), func() { b.start(fmt.Sprintf("m%d", *members+2)) }},
		{"m2 leaves (SIGTERM)", func() { b.stop("m2") }},
	} {
		change.do()
		next, err := b.stable(change.what, len(namespaces)*(*replicas+2))
		if err != nil {
			log.Fatal(err)
		}
		rows = append(rows, compare(prev, next))
		prev = next
	}
	var buf strings.Builder
	report(&buf, first, rows, len(namespaces), *replicas, os.Args[1:])
	if *out == "" {
		fmt.Print(buf.String())
		return
	}
	if err := writeSection(*out, buf.String()); err != nil {
		log.Fatal(err)
	}
}

// The report's section in a file that holds others (bench/results/sharded.md also holds
// the harness's sharded plan): between these markers, replaced on each run.
const (
	sectionStart = "<!-- shardbench: go run ./bench/cmd/shardbench writes this section -->"
	sectionEnd   = "<!-- /shardbench -->"
)

// writeSection puts text in path between the markers, in place of what was there, or at
// the end when they are absent.
func writeSection(path, text string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	section := sectionStart + "\n\n" + text + "\n" + sectionEnd + "\n"
	doc := string(old)
	if i, j := strings.Index(doc, sectionStart), strings.Index(doc, sectionEnd); i >= 0 && j > i {
		doc = doc[:i] + section + doc[j+len(sectionEnd)+1:]
	} else {
		if doc != "" && !strings.HasSuffix(doc, "\n\n") {
			doc += "\n"
		}
		doc += section
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}

// names are the bench's namespaces: numbered ones, which FNV-1a crowds into one 256th of
// the hash space, and words.
func names(numbered, words int) []string {
	var out []string
	for i := range numbered {
		out = append(out, fmt.Sprintf("tenant-%02d", i))
	}
	w := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
		"kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform",
		"victor", "whiskey", "xray", "yankee", "zulu", "amber", "birch", "cedar", "dune", "ember", "fjord"}
	for i := range min(words, len(w)) {
		out = append(out, w[i])
	}
	return out
}

// bench is the apiserver and the members running against it.
type bench struct {
	sim     *apisim.Server
	client  *listwatch.Client
	log     *slog.Logger
	members map[string]*member
}

type member struct {
	m      *manager.Manager
	cancel context.CancelFunc
	done   chan error
}

func newBench(logger *slog.Logger) (*bench, error) {
	sim := apisim.New(apisim.Options{})
	url, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c, err := listwatch.New(&listwatch.Config{Host: url, QPS: -1})
	if err != nil {
		sim.Close()
		return nil, err
	}
	return &bench{sim: sim, client: c, log: logger, members: map[string]*member{}}, nil
}

func (b *bench) close() {
	for id := range b.members {
		b.stop(id)
	}
	b.client.CloseIdleConnections()
	b.sim.Close()
}

// populate creates the namespaces' Deployments; the managers make their ReplicaSets and
// Pods.
func (b *bench) populate(namespaces []string, replicas int32) error {
	ctx := context.Background()
	info, err := b.client.Discover(ctx, "deployments.apps")
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		d := &object.Deployment{ObjectMeta: object.ObjectMeta{Name: "web"},
			Spec: object.DeploymentSpec{Replicas: &replicas, Selector: &object.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: object.PodTemplateSpec{ObjectMeta: object.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: object.MustPodSpec(`{"containers":[{"name":"web","image":"nginx:1.27"}]}`)}}}
		if _, err := listwatch.For[*object.Deployment](b.client, info, ns).Create(ctx, d); err != nil {
			return fmt.Errorf("creating the Deployment of %s: %w", ns, err)
		}
	}
	return nil
}

// start runs a member, its Leases short so that changes settle in seconds.
func (b *bench) start(id string) {
	ctx, cancel := context.WithCancel(context.Background())
	m, err := manager.New(ctx, manager.Options{Client: b.client, Workers: 2, Logger: b.log.With("member", id),
		Sharding: &manager.Sharding{Group: "bench", ID: id, LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond,
			RetryPeriod: 250 * time.Millisecond}})
	if err != nil {
		log.Fatal(err)
	}
	mb := &member{m: m, cancel: cancel, done: make(chan error, 1)}
	go func() { mb.done <- m.Run(ctx) }()
	b.members[id] = mb
}

// stop ends a member as SIGTERM does: it hands its part over and leaves.
func (b *bench) stop(id string) {
	mb := b.members[id]
	mb.cancel()
	if err := <-mb.done; err != nil {
		log.Printf("%s: %v", id, err)
	}
	delete(b.members, id)
}

// calmFor is how long the group must stay as it is to count as settled: with the bench's
// 250 ms rounds the planner waits 2.5 s for the load to hold still, then cuts.
const calmFor = 6 * time.Second

// snapshot is the group when it has settled.
type snapshot struct {
	what    string
	took    time.Duration
	owner   map[string]string // by namespace
	objects map[string]int    // by namespace: its Deployments, ReplicaSets and Pods
	listed  map[string]float64
	acting  map[string]shard.Set
	plan    int // slots of the plan
}

// stable waits until the members divide the space between them, each acting on its
// target, the cluster holds want objects, and that has held for calm (longer than the
// planner waits for the load to hold still before it cuts a plan), and returns the group
// then.
func (b *bench) stable(what string, want int) (snapshot, error) {
	start := time.Now()
	var calm time.Time
	var last string
	for time.Since(start) < 3*time.Minute {
		s, why := b.look()
		if why == "" && s.total() != want {
			why = fmt.Sprintf("%d objects, want %d", s.total(), want)
		}
		switch {
		case why != "" || s.key() != last:
			calm, last = time.Time{}, s.key()
		case calm.IsZero():
			calm = time.Now()
		case time.Since(calm) >= calmFor:
			s.what, s.took = what, calm.Sub(start) // when it reached the state it kept
			return s, nil
		}
		if why != "" {
			last = why
		}
		time.Sleep(100 * time.Millisecond)
	}
	return snapshot{}, fmt.Errorf("%s: the group never settled (%s)", what, last)
}

func (s snapshot) total() int {
	n := 0
	for _, v := range s.objects {
		n += v
	}
	return n
}

// key says who owns what: stable when it does not change.
func (s snapshot) key() string {
	var b strings.Builder
	for _, ns := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.owner {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "%s=%s,", ns, s.owner[ns])
	}
	return b.String()
}

// look reads the group and the cluster: the snapshot, and why it has not settled ("").
func (b *bench) look() (snapshot, string) {
	s := snapshot{owner: map[string]string{}, objects: map[string]int{}, listed: map[string]float64{}, acting: map[string]shard.Set{}}
	var union shard.Set
	for id, mb := range b.members {
		st := mb.m.Member().Status()
		if st.State != shardgroup.StateMember || st.HandingOver || !st.Acting.Equal(st.Target) || len(st.Members) != len(b.members) {
			return s, fmt.Sprintf("%s: %s, handing over %v, %d members", id, st.State, st.HandingOver, len(st.Members))
		}
		if union.Overlaps(st.Acting) {
			return s, id + " overlaps another"
		}
		union = union.Union(st.Acting)
		s.acting[id] = st.Acting
		s.plan = st.Plan.Len()
		s.listed[id] = listed(mb.m.Gatherer())
	}
	if !union.Equal(shard.WholeSet()) {
		return s, "the members do not cover the space"
	}
	ctx := context.Background()
	for _, res := range []string{"deployments.apps", "replicasets.apps", "pods"} {
		info, err := b.client.Discover(ctx, res)
		if err != nil {
			return s, err.Error()
		}
		l, err := listwatch.For[*object.Raw](b.client, info, "").List(ctx, listwatch.ListOptions{})
		if err != nil {
			return s, err.Error()
		}
		for _, o := range l.Items {
			s.objects[o.Namespace]++
		}
	}
	for ns := range s.objects {
		for id, a := range s.acting {
			if a.Has(ns) {
				s.owner[ns] = id
			}
		}
	}
	return s, ""
}

// listed is the sum of kinformer_informer_listed_objects_total over a member's informers.
func listed(g prometheus.Gatherer) float64 {
	mfs, err := g.Gather()
	if err != nil {
		return 0
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "kinformer_informer_listed_objects_total" {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// row is one change of membership.
type row struct {
	what                      string
	took                      time.Duration
	moved, movedNS            int
	listed, wholeParts, total int
	balance                   float64
	plan                      int
}

// compare measures the change from a to b.
func compare(a, b snapshot) row {
	r := row{what: b.what, took: b.took, total: b.total(), plan: b.plan}
	for ns, o := range b.owner {
		if a.owner[ns] != o {
			r.moved += b.objects[ns]
			r.movedNS++
		}
	}
	for id, l := range b.listed {
		r.listed += int(l - a.listed[id])
		if a.acting[id].Equal(b.acting[id]) {
			continue
		}
		for ns, n := range b.objects {
			if b.acting[id].Has(ns) {
				r.wholeParts += n // what a relist of the whole new part would fetch
			}
		}
	}
	r.balance = balance(b)
	return r
}

// balance is the busiest member's objects over the mean.
func balance(s snapshot) float64 {
	per := map[string]int{}
	for ns, o := range s.owner {
		per[o] += s.objects[ns]
	}
	busiest := 0
	for id := range s.acting {
		busiest = max(busiest, per[id])
	}
	return float64(busiest) / (float64(s.total()) / float64(len(s.acting)))
}

func report(w io.Writer, first snapshot, rows []row, namespaces, replicas int, args []string) {
	fmt.Fprintf(w, "## Resharding by the difference: objects listed per membership change\n\n")
	fmt.Fprintf(w, "`go run ./bench/cmd/shardbench %s` — sharded controller managers in one process against the in-memory apiserver "+
		"(which filters by shardSelector as kube-apiserver 1.36 with the ShardedListAndWatch gate does), on %d namespaces "+
		"(numbered `tenant-NN` and words), each with a Deployment of %d replicas that the managers reconcile (%d objects). "+
		"Listed: the objects every member's informers listed across the change, the newcomer's first lists included. "+
		"Moved: the objects of the namespaces whose owner changed. Whole parts: what the members whose part changed would "+
		"have listed had each relisted its whole new part, as kinformer did before it resharded by the difference. "+
		"Balance: the busiest member's objects over the mean, after the change.\n\n",
		strings.Join(args, " "), namespaces, replicas, first.total())
	fmt.Fprintf(w, "Start: %d members settled in %v (plan: %d slots), balance %.2f.\n\n", len(first.acting), first.took.Round(time.Millisecond), first.plan, balance(first))
	fmt.Fprintln(w, "| change | settled in | namespaces moved | objects moved | objects listed | listed / moved | whole parts (before) | balance |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		ratio := "-"
		if r.moved > 0 {
			ratio = fmt.Sprintf("%.2f", float64(r.listed)/float64(r.moved))
		}
		fmt.Fprintf(w, "| %s | %v | %d | %d | %d | %s | %d | %.2f |\n", r.what, r.took.Round(time.Millisecond), r.movedNS, r.moved,
			r.listed, ratio, r.wholeParts, r.balance)
	}
}
