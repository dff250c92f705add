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
	"github.com/kinformer/kinformer/internal/testrig/leakcheck"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
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

// member creates the Lease of a group's member, as package shardgroup writes it: named
// <group>-<id>, labelled with the group, the claims and target in annotations, holder,
// duration and renewal in the spec; extra annotations on top.
func (s shardCluster) member(group, id, acting, target string, renewed time.Time, extra ...string) {
	s.t.Helper()
	info, err := s.c.Discover(context.Background(), "leases")
	if err != nil {
		s.t.Fatal(err)
	}
	secs, at := int32(15), object.NewMicroTime(renewed)
	ann := map[string]string{shardgroup.ActingAnnotation: acting, shardgroup.TargetAnnotation: target, shardgroup.IncarnationAnnotation: "i-" + id}
	for i := 0; i+1 < len(extra); i += 2 {
		ann[extra[i]] = extra[i+1]
	}
	l := &object.Lease{
		TypeMeta: object.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: object.ObjectMeta{Namespace: shardgroup.DefaultNamespace, Name: group + "-" + id,
			Labels: map[string]string{shardgroup.GroupLabel: group}, Annotations: ann},
		Spec: object.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &secs, AcquireTime: &at, RenewTime: &at},
	}
	if _, err := listwatch.For[*object.Lease](s.c, info, shardgroup.DefaultNamespace).Create(context.Background(), l); err != nil {
		s.t.Fatal(err)
	}
}

// slots is the Set text of slots first-last (and more pairs) of 256 equal ones.
func slots(runs ...int) string {
	p := shard.EqualPlan(256)
	var idx []int
	for i := 0; i+1 < len(runs); i += 2 {
		for b := runs[i]; b <= runs[i+1]; b++ {
			idx = append(idx, b)
		}
	}
	return p.Set(idx...).String()
}

// Three live members, alpha handing slots 80-95 over to beta, and a stale one, delta,
// whose part nobody acts on yet: each row counts the namespaces of its claims and what
// they hold, the unowned row the rest, and the total the cluster.
func TestShardsShowsTheGroup(t *testing.T) {
	leakcheck.Check(t)
	_, kc := startSim(t, apisim.Options{})
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	shards := shardsAt(now)
	s := shardCluster{t, simtest.KubeconfigClient(t, kc)}

	s.member("ctl", "alpha", slots(0, 95), slots(0, 79), now.Add(-2*time.Second))
	s.member("ctl", "beta", slots(96, 169), slots(80, 169), now.Add(-1*time.Second))
	s.member("ctl", "gamma", slots(170, 199, 210, 255), slots(170, 255), now.Add(-3*time.Second))
	s.member("ctl", "delta", slots(200, 209), slots(200, 209), now.Add(-75*time.Second))
	s.member("other", "alpha", slots(0, 255), slots(0, 255), now) // another group: not shown

	// Where the namespaces fall.
	for _, p := range []struct {
		set        string
		namespaces string
	}{
		{slots(0, 79), "db shop"},
		{slots(80, 95), "auth web"},
		{slots(96, 169), "prod"},
		{slots(170, 199, 210, 255), "default kube-system payments"},
		{slots(200, 209), "dev"},
	} {
		set, err := shard.ParseSet(p.set)
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range strings.Fields(p.namespaces) {
			if !set.Has(ns) {
				t.Fatalf("namespace %s is not in %s: the test's expectations are wrong", ns, p.set)
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
	want := `MEMBER     RENEWED            ACTING  TARGET  NAMESPACES  DEPLOYMENTS  REPLICASETS  PODS
alpha      2s ago             37.5%   31.2%   4           2            2            5
beta       1s ago             28.9%   35.2%   1           0            0            2
delta      stale (1m15s ago)  3.9%    3.9%    1           0            0            1
gamma      3s ago             29.7%   33.6%   3           1            1            2
(unowned)                     3.9%            1           0            0            1
total                         100.0%  100.0%  9           3            3            10

plan: none yet: the members deal equal slices of the space
balance: the busiest live member acts on 1.80 × the mean of the objects
hand-over: alpha gives up 2 namespaces, 4 objects (auth, web)
hand-over: beta waits for 2 namespaces, 4 objects (auth, web)
unowned: 1 namespace, 1 object (dev); claimed by stale delta; target of gamma
note: delta has not renewed its Lease within its lease duration (15s): its claims lapse, and it is left out of the total
`
	if d := cmp.Diff(strings.Split(want, "\n"), strings.Split(out.String(), "\n")); d != "" {
		t.Errorf("shards (-want +got):\n%s\n%s", d, &out)
	}
	if errOut.String() != "" {
		t.Errorf("stderr: %s", &errOut)
	}
}

// Two members acting on the same namespaces is said loudly, and makes the command fail;
// a member whose annotation does not parse shows "?" and its error, and counts as
// claiming everything; a second process of one ID is marked.
func TestShardsSaysWhatIsWrong(t *testing.T) {
	leakcheck.Check(t)
	_, kc := startSim(t, apisim.Options{})
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	shards := shardsAt(now)
	s := shardCluster{t, simtest.KubeconfigClient(t, kc)}
	s.member("broken", "x", slots(0, 127), slots(0, 127), now, shardgroup.ContenderAnnotation, "f00d "+now.Add(-5*time.Second).Format(time.RFC3339))
	s.member("broken", "y", slots(100, 255), slots(128, 255), now)
	s.member("broken", "z", "256:5-3", "", now)
	s.create("namespaces", "v1", "Namespace", "", "infra") // in slot 117: claimed by x and y (and z)

	var out, errOut logbuf.Buffer
	err := shards(context.Background(), []string{"--shard-group", "broken", "--kubeconfig", kc}, &out, &errOut)
	t.Logf("shards --shard-group broken:\n%s", &out)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "3 part(s)") {
		t.Errorf("shards: %v, want an error about 3 parts acted on twice (x-y, x-z, y-z)", err)
	}
	for _, want := range []string{
		"\nz  ", "  ?  ", // z's row, its claims unknown
		"\n!! x and y both act on 1 namespace, 0 objects (infra): TWO MEMBERS ACT ON THE SAME NAMESPACES\n",
		"\n!! DUPLICATE ID x: another process (incarnation f00d) runs with this ID and waits for its Lease (marked 5s ago); only the holder acts\n",
		"\nerror: z (Lease broken-z): " + shardgroup.ActingAnnotation + ": ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q:\n%s", want, &out)
		}
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
	// A group name that could name no group fails before any request, as
	// controller-manager's flag does.
	err = run(context.Background(), []string{"shards", "--shard-group", "Bad Name!", "--kubeconfig", kc}, &out, &errOut)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "is not a label value") {
		t.Errorf("shards --shard-group 'Bad Name!': %v (exit %d), want a usage error saying why", err, exitCode(err))
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
