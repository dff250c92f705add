package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/internal/testrig/logbuf"
	"github.com/kinformer/kinformer/object"
)

// midRollout is a snapshot taken while web rolls out from nginx:1.27 to nginx:1.28.
func midRollout() snapshot {
	rs := func(name string, rev int64, image string, desired, ready, available int32) *object.ReplicaSet {
		return &object.ReplicaSet{
			ObjectMeta: object.ObjectMeta{Name: name, Annotations: map[string]string{"deployment.kubernetes.io/revision": fmt.Sprint(rev)}},
			Spec: object.ReplicaSetSpec{Replicas: &desired,
				Template: object.PodTemplateSpec{Spec: object.MustPodSpec(`{"containers":[{"name":"nginx","image":"` + image + `"}]}`)}},
			Status: object.ReplicaSetStatus{ReadyReplicas: ready, AvailableReplicas: available},
		}
	}
	return snapshot{
		informers: []informerRow{
			{label: "deployments", short: "deploy", eventsPerSec: 31.94, cached: 1},
			{label: "replicasets", short: "rs", eventsPerSec: 39.9, cached: 2},
			{label: "pods", short: "pods", eventsPerSec: 55.8, cached: 13},
		},
		queues: []queueRow{
			{name: "deployment", depth: 0, syncsPerSec: 31.9, retries: 1, stale: 4},
			{name: "replicaset", depth: 2, syncsPerSec: 43.9, retries: 0, stale: 11},
		},
		deployment: &object.Deployment{
			ObjectMeta: object.ObjectMeta{Name: "web", Annotations: map[string]string{"deployment.kubernetes.io/revision": "2"}},
			Status:     object.DeploymentStatus{Replicas: 13, UpdatedReplicas: 5, ReadyReplicas: 9, AvailableReplicas: 8},
		},
		replicaSets: []*object.ReplicaSet{
			rs("web-787cdcbd95", 1, "nginx:1.27", 8, 8, 8),
			rs("web-56c787d798", 2, "nginx:1.28", 5, 1, 0),
		},
	}
}

func TestFrame(t *testing.T) {
	chapters := []string{"✓ 1/8 create Deployment web: 6 replicas of nginx:1.27        0.7s"}
	current := "▸ 2/8 scale to 10                                            0.2s"
	noQueues := midRollout()
	noQueues.queues, noQueues.deployment, noQueues.replicaSets = nil, nil, nil
	unread := midRollout()
	unread.err = errors.New("reading the metrics: boom")
	tests := []struct {
		name string
		s    snapshot
		want string
	}{
		{"mid-rollout", midRollout(), `
 ✓ 1/8 create Deployment web: 6 replicas of nginx:1.27        0.7s
 ▸ 2/8 scale to 10                                            0.2s

 informer     events/s cached   queue       depth syncs/s retries  stale
 deployments      31.9      1   deployment      0    31.9       1      4
 replicasets      39.9      2   replicaset      2    43.9       0     11
 pods             55.8     13

 deployment/web rev 2: 13 replicas, 5 updated, 9 ready, 8 available
 ReplicaSets   (█ available  ▓ ready  ░ starting)      desired/ready/available
 rev 1  web-787cdcbd95   nginx:1.27  ████████       8/ 8/ 8
 rev 2  web-56c787d798   nginx:1.28  ▓░░░░          5/ 1/ 0
`},
		// A cluster's own controller manager does the work: no queues here.
		{"no queues, no Deployment", noQueues, `
 ✓ 1/8 create Deployment web: 6 replicas of nginx:1.27        0.7s
 ▸ 2/8 scale to 10                                            0.2s

 informer     events/s cached
 deployments      31.9      1
 replicasets      39.9      2
 pods             55.8     13

 deployment/web: none
`},
		// What the counters give is unknown, not zero, and the view says why.
		{"counters unread", unread, `
 ✓ 1/8 create Deployment web: 6 replicas of nginx:1.27        0.7s
 ▸ 2/8 scale to 10                                            0.2s

 informer     events/s cached   queue       depth syncs/s retries  stale
 deployments         ?      1   deployment      0       ?       ?      ?
 replicasets         ?      2   replicaset      2       ?       ?      ?
 pods                ?     13
 metrics: reading the metrics: boom

 deployment/web rev 2: 13 replicas, 5 updated, 9 ready, 8 available
 ReplicaSets   (█ available  ▓ ready  ░ starting)      desired/ready/available
 rev 1  web-787cdcbd95   nginx:1.27  ████████       8/ 8/ 8
 rev 2  web-56c787d798   nginx:1.28  ▓░░░░          5/ 1/ 0
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fitWidth(frame(chapters, current, tt.s), 80)
			if d := cmp.Diff(strings.TrimPrefix(tt.want, "\n"), got); d != "" {
				t.Errorf("frame (-want +got):\n%s", d)
			}
			for _, l := range strings.Split(got, "\n") {
				if n := len([]rune(l)); n > 80 {
					t.Errorf("a line of %d columns: %q", n, l)
				}
			}
		})
	}
}

func TestSummary(t *testing.T) {
	unread := midRollout()
	unread.err = errors.New("boom")
	tests := []struct {
		name string
		s    snapshot
		want string
	}{
		{"mid-rollout", midRollout(), "  web rev 2: 13 replicas, 5 updated, 8 available | rev1 8/8/8 rev2 5/1/0 | " +
			"events/s deploy 32 rs 40 pods 56 | cached pods 13 | queues 0/2 syncs/s 76 retries 1 stale 15"},
		{"counters unread", unread, "  web rev 2: 13 replicas, 5 updated, 8 available | rev1 8/8/8 rev2 5/1/0 | " +
			"events/s deploy ? rs ? pods ? | cached pods 13 | queues 0/2 syncs/s ? retries ? stale ? | metrics: boom"},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, summary(tt.s)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}

// stop returns once the last frame is out, so that what the demo prints next (its last
// line) comes after it.
func TestViewStopDrawsTheLastFrameFirst(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var out logbuf.Buffer
		clk := clock.NewFake(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		v := newView(&out, tty, clk, midRollout)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); v.run(ctx) }()
		v.chapter(1, 1, "the only chapter")
		clk.Step(1500 * time.Millisecond)
		v.done()
		v.stop()
		fmt.Fprintln(&out, "kinformer demo: done")
		cancel()
		<-done
		got := out.String()
		if !strings.Contains(got, "✓ 1/1 the only chapter") || !strings.Contains(got, "   1.5s") {
			t.Errorf("tty %v: the chapter and its duration are not shown:\n%s", tty, got)
		}
		last := summary(midRollout())
		if tty {
			last = " rev 2  web-56c787d798   nginx:1.28  ▓░░░░          5/ 1/ 0"
		}
		if !strings.HasSuffix(got, last+"\nkinformer demo: done\n") {
			t.Errorf("tty %v: the last frame does not come just before the last line:\n%s", tty, got)
		}
	}
}
