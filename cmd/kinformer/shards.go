package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shardgroup"
)

func shardsCommand() command {
	return command{name: "shards", synopsis: "--shard-group NAME [--shard-namespace kube-system] [--kubeconfig FILE] [--context NAME]",
		does: "show a shard group as its members' Leases say: each member's last renewal, the buckets it acts on and " +
			"targets, and the namespaces, Deployments, ReplicaSets and Pods in those it acts on; then any hand-over " +
			"under way, buckets nobody acts on, and buckets two members act on (exit 1)",
		run: shardsRun{now: time.Now, pageSize: 500}.run}
}

// shardsRun is a run of `shards`: the clock it judges renewals by, and the limit of each
// page of the lists it makes (tests stop the one and lower the other).
type shardsRun struct {
	now      func() time.Time
	pageSize int64
}

// shardKinds are what `shards` counts, in the order of its columns: the namespaces, then
// what a namespace-sharded controller manager caches in them once synced.
var shardKinds = []string{"namespaces", "deployments.apps", "replicasets.apps", "pods"}

// shardTally counts, for a part of the hash space, the namespaces and the objects of
// each of shardKinds[1:] that fall in it.
type shardTally [4]int

func (t *shardTally) add(u shardTally) {
	for i := range t {
		t[i] += u[i]
	}
}

func (t shardTally) objects() int { return t[1] + t[2] + t[3] }

// run prints a shard group as package shardgroup's Members reads it, against the
// cluster's namespaces and objects, which it lists (paginated) cluster-wide.
func (r shardsRun) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := shardsCommand()
	fs := cmd.flagSet(stderr)
	group := fs.String("shard-group", "", "the group: the "+shardgroup.GroupLabel+" label of its members' Leases (required)")
	leaseNS := fs.String("shard-namespace", shardgroup.DefaultNamespace, "namespace of the group's Leases")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the pod's ServiceAccount)")
	kubeContext := fs.String("context", "", "kubeconfig context")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 0:
		return cmd.usageError()
	case *group == "":
		return usageError{"missing --shard-group\n" + cmd.usageLine()}
	}
	cfg, err := loadConfig(*kubeconfig, *kubeContext)
	if err != nil {
		return err
	}
	c, err := listwatch.New(cfg)
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	members, err := shardgroup.Members(ctx, c, *leaseNS, *group)
	if err != nil {
		return explain(err, cfg.Host)
	}
	if len(members) == 0 {
		fmt.Fprintf(stderr, "no members in shard group %q: no Lease in namespace %s is labelled %s=%s\n",
			*group, *leaseNS, shardgroup.GroupLabel, *group)
		return nil
	}
	byNS, err := shardCensus(ctx, c, r.pageSize)
	if err != nil {
		return explain(err, cfg.Host)
	}
	if conflicts := printShards(stdout, members, byNS, r.now()); conflicts > 0 {
		return fmt.Errorf("%d bucket(s) of shard group %q acted on by two members at once", conflicts, *group)
	}
	return nil
}

// shardCensus lists the namespaces and every object of shardKinds cluster-wide, a page at
// a time, and counts them by namespace.
func shardCensus(ctx context.Context, c *listwatch.Client, pageSize int64) (map[string]*shardTally, error) {
	byNS := map[string]*shardTally{}
	count := func(ns string, kind int) {
		t := byNS[ns]
		if t == nil {
			t = &shardTally{}
			byNS[ns] = t
		}
		t[kind]++
	}
	for kind, name := range shardKinds {
		info, err := c.Discover(ctx, name)
		if err != nil {
			return nil, err
		}
		_, err = listwatch.For[*object.Raw](c, info, "").ListAll(ctx, listwatch.ListOptions{Limit: pageSize},
			func(l *object.List[*object.Raw]) error {
				for _, o := range l.Items {
					if kind == 0 {
						count(o.Name, kind) // a Namespace places itself, by its name
					} else {
						count(o.Namespace, kind)
					}
				}
				return nil
			})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", name, err)
		}
	}
	return byNS, nil
}

// shardBuckets is s as a set of buckets of n: those that share a hash with s, whatever
// division s uses (the same buckets when it divides the space into n), nil when s is
// unknown (an annotation that did not parse).
func shardBuckets(s shardgroup.BucketSet, n int) []bool {
	if s.Total() == 0 {
		return nil
	}
	out := make([]bool, n)
	if s.Total() == n {
		for _, b := range s.Indexes() {
			out[b] = true
		}
		return out
	}
	for _, r := range s.Ranges() {
		for b := shardgroup.BucketOf(r.First, n); b <= shardgroup.BucketOf(r.Last, n); b++ {
			out[b] = true
		}
	}
	return out
}

// shardDivision is the number of buckets the members divide the space into: the one most
// of their annotations use (they all should), the finer on a tie; 0 when none parsed.
func shardDivision(members []shardgroup.MemberState) int {
	seen := map[int]int{}
	n := 0
	for _, m := range members {
		for _, s := range []shardgroup.BucketSet{m.Acting, m.Target} {
			if t := s.Total(); t > 0 {
				seen[t]++
				if seen[t] > seen[n] || seen[t] == seen[n] && t > n {
					n = t
				}
			}
		}
	}
	return n
}

// shardMember is a member's row, with its sets in the division shown.
type shardMember struct {
	shardgroup.MemberState
	name           string
	live           bool
	acting, target []bool // nil: unknown
}

// printShards writes the table of members, the unowned buckets and the totals, then a
// line for each run of buckets in hand-over, unowned or acted on by two members, then
// what is wrong with the members. It returns how many buckets two live members act on.
func printShards(out io.Writer, states []shardgroup.MemberState, byNS map[string]*shardTally, now time.Time) (conflicts int) {
	n := shardDivision(states)
	// perBucket[b] is what falls in bucket b; total is the cluster's.
	var total shardTally
	perBucket := make([]shardTally, n)
	for ns, t := range byNS {
		total.add(*t)
		if n > 0 {
			perBucket[shardgroup.BucketOf(shard.Hash(ns), n)].add(*t)
		}
	}
	tallyOf := func(set []bool) shardTally {
		var t shardTally
		for b, in := range set {
			if in {
				t.add(perBucket[b])
			}
		}
		return t
	}
	members := make([]shardMember, len(states))
	for i, s := range states {
		m := shardMember{MemberState: s, name: s.ID, live: !s.RenewTime.IsZero() && !s.Stale(now)}
		if m.name == "" {
			m.name = "(Lease " + s.Lease + ")"
		}
		if n > 0 {
			m.acting, m.target = shardBuckets(s.Acting, n), shardBuckets(s.Target, n)
		}
		members[i] = m
	}

	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "MEMBER\tRENEWED\tACTING\tTARGET\tNAMESPACES\tDEPLOYMENTS\tREPLICASETS\tPODS")
	row := func(name, renewed, acting, target string, t *shardTally) {
		counts := "?\t?\t?\t?"
		if t != nil {
			counts = fmt.Sprintf("%d\t%d\t%d\t%d", t[0], t[1], t[2], t[3])
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", name, renewed, acting, target, counts)
	}
	ownedBy := make([][]*shardMember, n) // the live members acting on each bucket
	sumActing, sumTarget := 0, 0
	for i := range members {
		m := &members[i]
		var t *shardTally
		if m.acting != nil {
			tally := tallyOf(m.acting)
			t = &tally
		}
		row(m.name, shardRenewed(m.MemberState, m.live, now), shardCount(m.Acting), shardCount(m.Target), t)
		if !m.live {
			continue
		}
		for b, in := range m.acting {
			if in {
				ownedBy[b] = append(ownedBy[b], m)
				sumActing++
			}
		}
		for _, in := range m.target {
			if in {
				sumTarget++
			}
		}
	}
	if n > 0 {
		unowned := make([]bool, n)
		count := 0
		for b := range n {
			if len(ownedBy[b]) == 0 {
				unowned[b] = true
				count++
			}
		}
		if count > 0 {
			t := tallyOf(unowned)
			row("(unowned)", "", fmt.Sprintf("%d/%d", count, n), "", &t)
		}
		row("total", "", fmt.Sprintf("%d/%d", sumActing+count, n), fmt.Sprintf("%d/%d", sumTarget, n), &total)
	} else {
		row("total", "", "?", "?", &total)
	}
	w.Flush()

	var notes []string
	// Runs of buckets in the same state, in bucket order.
	state := func(b int) (line string, conflict bool) {
		var actors, stale, targets []string
		for _, m := range ownedBy[b] {
			actors = append(actors, m.name)
		}
		for i := range members {
			m := &members[i]
			switch {
			case !m.live && m.acting != nil && m.acting[b]:
				stale = append(stale, m.name)
			case m.live && m.target != nil && m.target[b]:
				targets = append(targets, m.name)
			}
		}
		to := "nobody"
		if len(targets) > 0 {
			to = shardJoin(targets)
		}
		switch {
		case len(actors) > 1:
			return "acted on by " + shardJoin(actors) + ": TWO MEMBERS ACT ON THE SAME NAMESPACES", true
		case len(actors) == 0 && len(stale) > 0:
			return "unowned → " + to + ", claimed by stale " + shardJoin(stale), false
		case len(actors) == 0:
			return "unowned → " + to, false
		case ownedBy[b][0].target != nil && !ownedBy[b][0].target[b]:
			return actors[0] + " → " + to, false
		}
		return "", false
	}
	for first := 0; first < n; {
		line, conflict := state(first)
		last := first
		for last+1 < n {
			if next, _ := state(last + 1); next != line {
				break
			}
			last++
		}
		if line != "" {
			run := make([]bool, n)
			for b := first; b <= last; b++ {
				run[b] = true
			}
			t := tallyOf(run)
			line = fmt.Sprintf("%s: %s (%s, %s)", shardRun(first, last), line, shardPlural(t[0], "namespace"), shardPlural(t.objects(), "object"))
			if conflict {
				line = "!! " + line
				conflicts += last - first + 1
			}
			notes = append(notes, line)
		}
		first = last + 1
	}
	for _, m := range members {
		if m.Err != nil {
			notes = append(notes, fmt.Sprintf("error: %s (Lease %s): %v", m.name, m.Lease, m.Err))
		}
		for _, s := range []shardgroup.BucketSet{m.Acting, m.Target} {
			if t := s.Total(); t > 0 && t != n {
				notes = append(notes, fmt.Sprintf("note: %s divides the space into %d buckets, not %d: shown as the %d buckets its own touch",
					m.name, t, n, n))
				break
			}
		}
		if !m.live {
			notes = append(notes, fmt.Sprintf("note: %s has not renewed its Lease within its lease duration (%s): its claims lapse, and it is left out of the total",
				m.name, m.LeaseDuration))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(out)
		for _, l := range notes {
			fmt.Fprintln(out, l)
		}
	}
	return conflicts
}

// shardCount is a set's size out of its division, "?" when its annotation did not parse.
func shardCount(s shardgroup.BucketSet) string {
	if s.Total() == 0 {
		return "?"
	}
	return fmt.Sprintf("%d/%d", s.Len(), s.Total())
}

// shardRenewed says how long ago a member renewed, by this machine's clock.
func shardRenewed(s shardgroup.MemberState, live bool, now time.Time) string {
	if s.RenewTime.IsZero() {
		return "never"
	}
	d := now.Sub(s.RenewTime).Round(time.Second)
	ago := shardDuration(d) + " ago"
	if d < 0 {
		ago = shardDuration(-d) + " ahead" // the member's clock is ahead of this one
	}
	if !live {
		return "stale (" + ago + ")"
	}
	return ago
}

// shardDuration writes d, whole seconds, as "42s", "5m3s", "2h5m" or "3d4h".
func shardDuration(d time.Duration) string {
	s := int(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 48*3600:
		return fmt.Sprintf("%dh%dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%dh", s/86400, s%86400/3600)
}

// shardRun writes a run of bucket indexes as a BucketSet does: "12" or "12-15".
func shardRun(first, last int) string {
	if first == last {
		return fmt.Sprint(first)
	}
	return fmt.Sprintf("%d-%d", first, last)
}

// shardJoin writes names as "a", "a and b", "a, b and c".
func shardJoin(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func shardPlural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
