package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/leakcheck"
	"github.com/kinformer/kinformer/internal/logbuf"
	"github.com/kinformer/kinformer/internal/simtest"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shardgroup"
)

// shardsAt is `shards` with its clock stopped at now, listing in pages of two objects, so
// that every list of the tests is paginated.
func shardsAt(now time.Time) func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return shardsRun{now: func() time.Time { return now }, pageSize: 2}.run
}

// shardCluster creates objects in the simulator behind c.
type shardCluster struct {
	t *testing.T
	c *listwatch.Client
}

// create makes an object of resource (a name Discover knows) in ns, as object.Raw.
func (s shardCluster) create(resource, apiVersion, kind, ns, name string) {
	s.t.Helper()
	info, err := s.c.Discover(context.Background(), resource)
	if err != nil {
		s.t.Fatal(err)
	}
	o := &object.Raw{TypeMeta: object.TypeMeta{APIVersion: apiVersion, Kind: kind}, ObjectMeta: object.ObjectMeta{Namespace: ns, Name: name}}
	if _, err := listwatch.For[*object.Raw](s.c, info, ns).Create(context.Background(), o); err != nil {
		s.t.Fatalf("creating %s %s/%s: %v", resource, ns, name, err)
	}
}

// member creates the Lease of a group's member, as shardgroup writes it (lease.go:
// leaseFor): named <group>-<id>, labelled with the group, the claims and target in
// annotations, holder, duration and renewal in the spec.
func (s shardCluster) member(group, id, acting, target string, renewed time.Time) {
	s.t.Helper()
	info, err := s.c.Discover(context.Background(), "leases")
	if err != nil {
		s.t.Fatal(err)
	}
	secs, at := int32(15), object.NewMicroTime(renewed)
	l := &object.Lease{
		TypeMeta: object.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: object.ObjectMeta{Namespace: shardgroup.DefaultNamespace, Name: group + "-" + id,
			Labels:      map[string]string{shardgroup.GroupLabel: group},
			Annotations: map[string]string{shardgroup.ActingAnnotation: acting, shardgroup.TargetAnnotation: target}},
		Spec: object.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &secs, AcquireTime: &at, RenewTime: &at},
	}
	if _, err := listwatch.For[*object.Lease](s.c, info, shardgroup.DefaultNamespace).Create(context.Background(), l); err != nil {
		s.t.Fatal(err)
	}
}

// inBuckets reports whether namespace ns falls in the buckets text names, by the ranges
// package shardgroup gives them: the test's own placement, independent of shardBucketOf.
func inBuckets(t *testing.T, ns, text string) bool {
	t.Helper()
	set, err := shardgroup.ParseBucketSet(text)
	if err != nil {
		t.Fatal(err)
	}
	return shard.Selector{Field: shard.Namespace, Ranges: set.Ranges()}.Matches(ns)
}

// Three live members, alpha handing buckets 80-95 over to beta, and a stale one, delta,
// whose buckets nobody acts on yet: each row counts the namespaces of its acting buckets
// and what they hold, the unowned row the rest, and the total the cluster.
func TestShardsShowsTheGroup(t *testing.T) {
	leakcheck.Check(t)
	_, kc := startSim(t, apisim.Options{})
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	shards := shardsAt(now)
	s := shardCluster{t, simtest.KubeconfigClient(t, kc)}

	s.member("ctl", "alpha", "256:0-95", "256:0-79", now.Add(-2*time.Second))
	s.member("ctl", "beta", "256:96-169", "256:80-169", now.Add(-1*time.Second))
	s.member("ctl", "gamma", "256:170-199,210-255", "256:170-255", now.Add(-3*time.Second))
	s.member("ctl", "delta", "256:200-209", "256:200-209", now.Add(-75*time.Second))
	s.member("other", "alpha", "256:0-255", "256:0-255", now) // another group: not shown

	// Where the namespaces fall, by shardgroup's ranges.
	for _, p := range []struct{ buckets, namespaces string }{
		{"256:0-79", "db shop"},
		{"256:80-95", "auth web"},
		{"256:96-169", "prod"},
		{"256:170-199,210-255", "default kube-system payments"},
		{"256:200-209", "dev"},
	} {
		for _, ns := range strings.Fields(p.namespaces) {
			if !inBuckets(t, ns, p.buckets) {
				t.Fatalf("namespace %s is not in buckets %s: the test's expectations are wrong", ns, p.buckets)
			}
		}
	}
	for _, ns := range []string{"db", "shop", "auth", "web", "prod", "default", "kube-system", "payments", "dev"} {
		s.create("namespaces", "v1", "Namespace", "", ns)
	}
	for _, ns := range []string{"shop", "web", "payments"} {
		s.create("deployments.apps", "apps/v1", "Deployment", ns, "app")
		s.create("replicasets.apps", "apps/v1", "ReplicaSet", ns, "app-1")
	}
	for ns, n := range map[string]int{"shop": 3, "web": 2, "prod": 2, "payments": 1, "dev": 1, "default": 1} {
		for i := range n {
			s.create("pods", "v1", "Pod", ns, fmt.Sprintf("app-1-%d", i))
		}
	}

	var out, errOut logbuf.Buffer
	if err := shards(context.Background(), []string{"--shard-group", "ctl", "--kubeconfig", kc}, &out, &errOut); err != nil {
		t.Fatalf("shards: %v\n%s\n%s", err, &out, &errOut)
	}
	want := `MEMBER     RENEWED            ACTING   TARGET   NAMESPACES  DEPLOYMENTS  REPLICASETS  PODS
alpha      2s ago             96/256   80/256   4           2            2            5
beta       1s ago             74/256   90/256   1           0            0            2
delta      stale (1m15s ago)  10/256   10/256   1           0            0            1
gamma      3s ago             76/256   86/256   3           1            1            2
(unowned)                     10/256            1           0            0            1
total                         256/256  256/256  9           3            3            10

80-95: alpha → beta (2 namespaces, 4 objects)
200-209: unowned → gamma, claimed by stale delta (1 namespace, 1 object)
note: delta has not renewed its Lease within its lease duration (15s): its claims lapse, and it is left out of the total
`
	if d := cmp.Diff(strings.Split(want, "\n"), strings.Split(out.String(), "\n")); d != "" {
		t.Errorf("shards (-want +got):\n%s\n%s", d, &out)
	}
	if errOut.String() != "" {
		t.Errorf("stderr: %s", &errOut)
	}
}

// Two members acting on the same buckets is said loudly, and makes the command fail; a
// member whose annotation does not parse shows "?" and its error.
func TestShardsSaysWhatIsWrong(t *testing.T) {
	leakcheck.Check(t)
	_, kc := startSim(t, apisim.Options{})
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	shards := shardsAt(now)
	s := shardCluster{t, simtest.KubeconfigClient(t, kc)}
	s.member("broken", "x", "256:0-127", "256:0-127", now)
	s.member("broken", "y", "256:100-255", "256:128-255", now)
	s.member("broken", "z", "256:5-3", "256:", now)

	var out, errOut logbuf.Buffer
	err := shards(context.Background(), []string{"--shard-group", "broken", "--kubeconfig", kc}, &out, &errOut)
	t.Logf("shards --shard-group broken:\n%s", &out)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "28 bucket(s)") {
		t.Errorf("shards: %v, want an error about 28 buckets acted on twice", err)
	}
	for _, want := range []string{
		"\nz  ", "?  ", // z's row, its acting unknown
		"\n!! 100-127: acted on by x and y: TWO MEMBERS ACT ON THE SAME NAMESPACES (0 namespaces, 0 objects)\n",
		"\nerror: z (Lease broken-z): " + shardgroup.ActingAnnotation + ": ",
		"\ntotal  ", " 284/256 ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q:\n%s", want, &out)
		}
	}
	if strings.Contains(out.String(), "→") {
		t.Errorf("the conflict shows as a hand-over:\n%s", &out)
	}
}

func TestShardsUsage(t *testing.T) {
	leakcheck.Check(t)
	_, kc := startSim(t, apisim.Options{})
	for _, args := range [][]string{
		{"shards"},
		{"shards", "--kubeconfig", kc},
		{"shards", "--shard-group", "g", "extra"},
	} {
		var out, errOut logbuf.Buffer
		err := run(context.Background(), args, &out, &errOut)
		if exitCode(err) != 2 {
			t.Errorf("%q: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
		var ue usageError
		if errors.As(err, &ue) && !strings.Contains(err.Error(), shardsCommand().usageLine()) {
			t.Errorf("%q: %v, want the usage line", args, err)
		}
	}
	var out, errOut logbuf.Buffer
	err := run(context.Background(), []string{"shards"}, &out, &errOut)
	if err == nil || !strings.HasPrefix(err.Error(), "missing --shard-group\n") {
		t.Errorf("shards without a group: %v", err)
	}

	// -h shows every flag, and only those the synopsis shows.
	var help logbuf.Buffer
	if err := run(context.Background(), []string{"shards", "-h"}, &out, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("shards -h: %v", err)
	}
	own, flags := commandHelp("shards", help.String())
	if d := cmp.Diff(flags, synopsisFlags(t, own.Synopsis)); d != "" {
		t.Errorf("flags of shards (-the FlagSet's +the synopsis's):\n%s", d)
	}

	// A group without members is no error: it says so.
	var emptyOut, emptyErr logbuf.Buffer
	if err := run(context.Background(), []string{"shards", "--shard-group", "none", "--kubeconfig", kc}, &emptyOut, &emptyErr); err != nil {
		t.Errorf("an empty group: %v", err)
	}
	if !strings.Contains(emptyErr.String(), `no members in shard group "none"`) || emptyOut.String() != "" {
		t.Errorf("an empty group: stdout %q, stderr %q", &emptyOut, &emptyErr)
	}
}

// shardBucketOf places a hash in the bucket of package shardgroup's BucketSet that holds
// it: both edges of every bucket, for divisions that do and do not divide 2^64.
func TestShardBucketOfIsShardgroups(t *testing.T) {
	for _, n := range []int{1, 3, 7, 100, 256, 1000, shardgroup.MaxBuckets} {
		for b := range n {
			set, err := shardgroup.ParseBucketSet(fmt.Sprintf("%d:%d", n, b))
			if err != nil {
				t.Fatal(err)
			}
			r := set.Ranges()
			if len(r) != 1 {
				t.Fatalf("%s: ranges %v", set, r)
			}
			if f, l := shardgroup.BucketOf(r[0].First, n), shardgroup.BucketOf(r[0].Last, n); f != b || l != b {
				t.Fatalf("n=%d: bucket %d is %+v, whose edges go to buckets %d and %d", n, b, r[0], f, l)
			}
		}
	}
	for _, ns := range []string{"", "default", "kube-system", "web", "team-a"} {
		h := shard.Hash(ns)
		b := shardgroup.BucketOf(h, 256)
		if !inBuckets(t, ns, fmt.Sprintf("256:%d", b)) {
			t.Errorf("namespace %q (hash %#x) is not in bucket %d", ns, h, b)
		}
	}
}

// A member in another division is shown in the common one, by the buckets its own touch.
func TestShardBucketsAcrossDivisions(t *testing.T) {
	set, err := shardgroup.ParseBucketSet("128:1,3")
	if err != nil {
		t.Fatal(err)
	}
	got := shardBuckets(set, 256)
	var idx []int
	for b, in := range got {
		if in {
			idx = append(idx, b)
		}
	}
	if d := cmp.Diff([]int{2, 3, 6, 7}, idx); d != "" {
		t.Errorf("128:1,3 in 256 buckets (-want +got):\n%s", d)
	}
	if shardBuckets(shardgroup.BucketSet{}, 256) != nil {
		t.Error("an unknown set is not nil")
	}
}
