package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shardgroup"
)

func shardsCommand() command {
	return command{name: "shards", synopsis: "--shard-group NAME [--shard-namespace kube-system] [--kubeconfig FILE] [--context NAME] " + encodingSynopsis,
		does: "show a shard group as its members' Leases say: each member's last renewal, the share of the hash space it " +
			"acts on and targets, and the namespaces, Deployments, ReplicaSets and Pods it acts on; then the group's plan " +
			"and balance, any hand-over under way, namespaces nobody acts on, duplicate IDs, and namespaces two members " +
			"act on (exit 1)",
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

// run prints a shard group as package shardgroup's ReadGroup reads it, against the
// cluster's namespaces and objects, which it lists (paginated) cluster-wide.
func (r shardsRun) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := shardsCommand()
	fs := cmd.flagSet(stderr)
	group := fs.String("shard-group", "", "the group: the "+shardgroup.GroupLabel+" label of its members' Leases (required)")
	leaseNS := fs.String("shard-namespace", shardgroup.DefaultNamespace, "namespace of the group's Leases")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the pod's ServiceAccount)")
	kubeContext := fs.String("context", "", "kubeconfig context")
	var encoding encodingFlag
	encoding.register(fs)
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
	if err := shardgroup.ValidGroup(*group); err != nil {
		return usageError{"--shard-group: " + err.Error() + "\n" + cmd.usageLine()}
	}
	if err := encoding.check(); err != nil {
		return err
	}
	cfg, err := loadConfig(*kubeconfig, *kubeContext, encoding.enc)
	if err != nil {
		return err
	}
	c, err := newClient(cfg)
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	g, err := shardgroup.ReadGroup(ctx, c, *leaseNS, *group)
	if err != nil {
		return explain(err, cfg.Host)
	}
	if len(g.Members) == 0 {
		fmt.Fprintf(stderr, "no members in shard group %q: no Lease in namespace %s is labelled %s=%s\n",
			*group, *leaseNS, shardgroup.GroupLabel, *group)
		return nil
	}
	byNS, err := shardCensus(ctx, c, r.pageSize)
	if err != nil {
		return explain(err, cfg.Host)
	}
	now := r.now()
	conflicts := shardgroup.Conflicts(g.Members, now)
	printShards(stdout, g, byNS, conflicts, now)
	if len(conflicts) > 0 {
		return fmt.Errorf("%d part(s) of shard group %q acted on by two members at once", len(conflicts), *group)
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

// shardView is what `shards` shows of a group against the cluster's census: which live
// member acts on each namespace, and the tallies.
type shardView struct {
	g     shardgroup.Group
	byNS  map[string]*shardTally
	names []string // the namespaces of the census, sorted
	now   time.Time
}

// tallyOf counts the namespaces and objects whose namespace hashes into set.
func (v shardView) tallyOf(set shard.Set) shardTally {
	var t shardTally
	for ns, n := range v.byNS {
		if set.Has(ns) {
			t.add(*n)
		}
	}
	return t
}

// namespacesIn lists, sorted, the namespaces of the census in set.
func (v shardView) namespacesIn(set shard.Set) []string {
	var out []string
	for _, ns := range v.names {
		if set.Has(ns) {
			out = append(out, ns)
		}
	}
	return out
}

// printShards writes the table of members, the unowned part and the totals, then the
// plan and the balance, the hand-overs under way, the unowned namespaces, the conflicts
// (two live members acting on one namespace), duplicate IDs and what is wrong with the
// members. It only renders: the group's reading and its conflicts come from package
// shardgroup.
func printShards(out io.Writer, g shardgroup.Group, byNS map[string]*shardTally, conflicts []shardgroup.Conflict, now time.Time) {
	v := shardView{g: g, byNS: byNS, names: slices.Sorted(maps.Keys(byNS)), now: now}
	var liveActing, liveTarget shard.Set
	var total shardTally
	for _, t := range byNS {
		total.add(*t)
	}
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "MEMBER\tRENEWED\tACTING\tTARGET\tNAMESPACES\tDEPLOYMENTS\tREPLICASETS\tPODS")
	row := func(name, renewed, acting, target string, t shardTally) {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", name, renewed, acting, target, t[0], t[1], t[2], t[3])
	}
	var objects []int // of the live members, for the balance
	for _, m := range g.Members {
		name := shardName(m)
		acting, target := shardShare(m.Acting, m.Err), shardShare(m.Target, m.Err)
		t := v.tallyOf(m.Acting)
		row(name, shardRenewed(m, now), acting, target, t)
		if !m.Stale(now) {
			liveActing, liveTarget = liveActing.Union(m.Acting), liveTarget.Union(m.Target)
			objects = append(objects, t.objects())
		}
	}
	unowned := shard.WholeSet().Minus(liveActing)
	if !unowned.IsEmpty() {
		row("(unowned)", "", shardShare(unowned, nil), "", v.tallyOf(unowned))
	}
	row("total", "", shardShare(liveActing.Union(unowned), nil), shardShare(liveTarget, nil), total)
	w.Flush()

	fmt.Fprintln(out)
	switch {
	case g.PlanErr != nil:
		fmt.Fprintf(out, "plan: does not parse (%v): the members deal equal slices of the space\n", g.PlanErr)
	case g.Plan.IsZero():
		fmt.Fprintln(out, "plan: none yet: the members deal equal slices of the space")
	default:
		fmt.Fprintf(out, "plan: %d slots, cut where the load was\n", g.Plan.Len())
	}
	if len(objects) > 0 && total.objects() > 0 {
		sum := 0
		for _, n := range objects {
			sum += n
		}
		if sum > 0 {
			fmt.Fprintf(out, "balance: the busiest live member acts on %.2f × the mean of the objects\n",
				float64(slices.Max(objects))/(float64(sum)/float64(len(objects))))
		}
	}
	for _, m := range g.Members {
		if m.Err != nil || m.Stale(now) {
			continue
		}
		if giving := m.Acting.Minus(m.Target); !giving.IsEmpty() {
			fmt.Fprintf(out, "hand-over: %s gives up %s\n", shardName(m), shardNamespaces(v, giving))
		}
		if taking := m.Target.Minus(m.Acting); !taking.IsEmpty() && !taking.Minus(unowned).IsEmpty() {
			fmt.Fprintf(out, "hand-over: %s waits for %s\n", shardName(m), shardNamespaces(v, taking.Minus(unowned)))
		}
	}
	if !unowned.IsEmpty() {
		fmt.Fprintf(out, "unowned: %s%s\n", shardNamespaces(v, unowned), shardClaimants(g.Members, unowned, now))
	}
	for _, c := range conflicts {
		fmt.Fprintf(out, "!! %s and %s both act on %s: TWO MEMBERS ACT ON THE SAME NAMESPACES\n", c.Members[0], c.Members[1], shardNamespaces(v, c.Part))
	}
	for _, m := range g.Members {
		if m.Duplicate(now) {
			fmt.Fprintf(out, "!! DUPLICATE ID %s: another process (incarnation %s) runs with this ID and waits for its Lease (marked %s); only the holder acts\n",
				shardName(m), m.Contender, shardAgo(now.Sub(m.ContenderAt)))
		}
		if m.Err != nil {
			fmt.Fprintf(out, "error: %s (Lease %s): %v\n", shardName(m), m.Lease, m.Err)
		}
		if m.Stale(now) {
			fmt.Fprintf(out, "note: %s has not renewed its Lease within its lease duration (%s): its claims lapse, and it is left out of the total\n",
				shardName(m), m.LeaseDuration)
		}
	}
}

// shardName is a member's ID, or its Lease when it has no holder.
func shardName(m shardgroup.MemberState) string {
	if m.ID == "" {
		return "(Lease " + m.Lease + ")"
	}
	return m.ID
}

// shardShare writes the share of the hash space a set covers, "?" when its annotation
// did not parse.
func shardShare(s shard.Set, err error) string {
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f%%", 100*s.Fraction())
}

// shardNamespaces says how many namespaces and objects of the census fall in set, and
// names the first few.
func shardNamespaces(v shardView, set shard.Set) string {
	names := v.namespacesIn(set)
	t := v.tallyOf(set)
	s := shardPlural(len(names), "namespace") + ", " + shardPlural(t.objects(), "object")
	if len(names) > 0 {
		shown := names[:min(len(names), 5)]
		s += " (" + strings.Join(shown, ", ")
		if len(names) > len(shown) {
			s += ", …"
		}
		s += ")"
	}
	return s
}

// shardClaimants says which stale members still list part, and which live ones target
// it.
func shardClaimants(members []shardgroup.MemberState, part shard.Set, now time.Time) string {
	var stale, targets []string
	for _, m := range members {
		switch {
		case m.Stale(now) && m.Acting.Overlaps(part):
			stale = append(stale, shardName(m))
		case !m.Stale(now) && m.Target.Overlaps(part):
			targets = append(targets, shardName(m))
		}
	}
	s := ""
	if len(stale) > 0 {
		s += "; claimed by stale " + shardJoin(stale)
	}
	if len(targets) > 0 {
		s += "; target of " + shardJoin(targets)
	}
	return s
}

// shardRenewed says how long ago a member renewed, by this machine's clock.
func shardRenewed(s shardgroup.MemberState, now time.Time) string {
	if s.RenewTime.IsZero() {
		return "never"
	}
	ago := shardAgo(now.Sub(s.RenewTime))
	if s.Stale(now) {
		return "stale (" + ago + ")"
	}
	return ago
}

// shardAgo writes how long ago something was, "ahead" when the other machine's clock is
// ahead of this one.
func shardAgo(d time.Duration) string {
	d = d.Round(time.Second)
	if d < 0 {
		return shardDuration(-d) + " ahead"
	}
	return shardDuration(d) + " ago"
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
