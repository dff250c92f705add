package clientgo

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/bench/clientgo/pbobjects"
	"github.com/kinformer/kinformer/bench/internal/streamserver"
)

// Every member of the realistic corpus is one k8s.io/api knows: each pod decodes
// strictly (no unknown field) into a corev1.Pod that encodes back to the same JSON, and
// its protobuf encoding (the one pbprep writes) decodes to the same Pod. It prints the
// corpus's JSON and protobuf bytes per pod over 10,000 pods of seed 1, the stream
// server's default (the benchmark's corpus).
func TestRealisticPodsInKubernetesTypes(t *testing.T) {
	const n, checked = 10000, 2000
	s, err := streamserver.New(streamserver.Options{Profile: streamserver.RealisticPods, Objects: n, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var jsonBytes, pbBytes int
	for i := range s.Len() {
		js := s.ObjectJSON(i)
		msg, err := pbobjects.Encode(js)
		if err != nil {
			t.Fatalf("pod %d: protobuf: %v", i, err)
		}
		jsonBytes += len(js)
		pbBytes += len(msg)
		if i >= checked {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		var fromJSON corev1.Pod
		if err := dec.Decode(&fromJSON); err != nil {
			t.Fatalf("pod %d does not decode strictly into a corev1.Pod: %v", i, err)
		}
		back, err := json.Marshal(&fromJSON)
		if err != nil {
			t.Fatal(err)
		}
		var want, got any
		if err := json.Unmarshal(js, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(back, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("pod %d changes through corev1.Pod (-served +re-encoded):\n%s", i, diff)
		}
		var fromPB corev1.Pod
		if err := fromPB.Unmarshal(msg); err != nil {
			t.Fatalf("pod %d: its protobuf does not decode: %v", i, err)
		}
		if diff := cmp.Diff(&fromJSON, &fromPB, ignoreTypeMeta); diff != "" {
			t.Fatalf("pod %d: protobuf and JSON differ (-JSON +protobuf):\n%s", i, diff)
		}
	}
	t.Logf("%d realistic pods: %.0f bytes of JSON per pod, %.0f of protobuf (k8s.io/api's Marshal)",
		s.Len(), float64(jsonBytes)/float64(s.Len()), float64(pbBytes)/float64(s.Len()))
}

// A realistic pod's protobuf decodes to the same Pod as its JSON, listed and in watch
// events, whose kubelet variants are patched into the protobuf messages as into the JSON:
// the events change what the kubelet writes (condition times, restart counts, container
// states and IDs, the kubelet's managedFields time) and nothing else.
func TestRealisticProtobufMatchesJSON(t *testing.T) {
	const pods, events = 300, 1000
	s, jsonCS, pbCS := protobufServer(t, streamserver.Options{Profile: streamserver.RealisticPods, Objects: pods, WatchEvents: events})
	listed, _ := listAll(t, jsonCS, "", metav1.ListOptions{})
	if got, _ := listAll(t, pbCS, "", metav1.ListOptions{Limit: 70}); len(listed) != s.Len() || !cmp.Equal(listed, got, ignoreTypeMeta) {
		t.Fatalf("listed %d pods in JSON, %d in protobuf; equal: %v", len(listed), len(got), cmp.Equal(listed, got, ignoreTypeMeta))
	}
	byName := map[string]*corev1.Pod{}
	for i := range listed {
		byName[listed[i].Name] = &listed[i]
	}
	opts := metav1.ListOptions{ResourceVersion: strconv.FormatInt(s.ListResourceVersion(), 10)}
	since := time.Now()
	want := readEvents(t, jsonCS, "", opts, events, since)
	got := readEvents(t, pbCS, "", opts, events, since)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("protobuf events (-JSON +protobuf):\n%s", diff)
	}
	restarts, modified := 0, 0
	for k, ev := range got {
		if ev.Type != watch.Modified {
			continue
		}
		p, l := ev.Pod, byName[ev.Pod.Name]
		if l == nil {
			t.Fatalf("event %d: pod %s was not listed", k, ev.Pod.Name)
		}
		if !cmp.Equal(p.Spec, l.Spec) || !cmp.Equal(p.Labels, l.Labels) || p.UID != l.UID {
			t.Fatalf("event %d changes the pod's spec or identity:\n%s", k, cmp.Diff(l.Spec, p.Spec))
		}
		if cmp.Equal(p.Status, l.Status) {
			t.Fatalf("event %d: the status is the listed one", k)
		}
		if p.ManagedFields[1].Time.Equal(l.ManagedFields[1].Time) || !p.ManagedFields[0].Time.Equal(l.ManagedFields[0].Time) {
			t.Fatalf("event %d: managedFields times %v, listed %v", k, p.ManagedFields, l.ManagedFields)
		}
		ready := func(p *corev1.Pod) metav1.Time {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady {
					return c.LastTransitionTime
				}
			}
			return metav1.Time{}
		}
		if !ready(p).After(ready(l).Time) {
			t.Fatalf("event %d: ready since %v, listed %v", k, ready(p), ready(l))
		}
		for j, c := range p.Status.ContainerStatuses {
			lc := l.Status.ContainerStatuses[j]
			if c.RestartCount == lc.RestartCount {
				continue
			}
			restarts++
			if c.RestartCount <= lc.RestartCount || c.ContainerID == lc.ContainerID || c.LastTerminationState.Terminated == nil ||
				!c.State.Running.StartedAt.After(lc.State.Running.StartedAt.Time) ||
				c.LastTerminationState.Terminated.FinishedAt.After(c.State.Running.StartedAt.Time) {
				t.Fatalf("event %d: container %s restarted to %+v from %+v", k, c.Name, c, lc)
			}
		}
		modified++
	}
	if restarts == 0 || modified < events/2 {
		t.Fatalf("%d MODIFIED events, %d with a restart", modified, restarts)
	}
}
