package informer

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/codec"
	"github.com/kinformer/kinformer/internal/kubeproto"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/object"
)

// Status says what the informer's reads ask the apiserver for, as its Resource says
// (the client's Encoding and the type decide); "" for a ListerWatcher that does not say.
func TestStatusSaysTheEncoding(t *testing.T) {
	pods := listwatch.ResourceInfo{GroupVersionResource: listwatch.GroupVersionResource{Version: "v1", Resource: "pods"},
		Kind: "Pod", Namespaced: true}
	for _, tc := range []struct {
		client   listwatch.Encoding
		pod, raw listwatch.Encoding
	}{
		{"", listwatch.EncodingProtobuf, listwatch.EncodingJSON},
		{listwatch.EncodingAuto, listwatch.EncodingProtobuf, listwatch.EncodingJSON},
		{listwatch.EncodingJSON, listwatch.EncodingJSON, listwatch.EncodingJSON},
		{listwatch.EncodingProtobuf, listwatch.EncodingProtobuf, listwatch.EncodingProtobuf},
	} {
		c, err := listwatch.New(&listwatch.Config{Host: "http://127.0.0.1:1", Encoding: tc.client})
		if err != nil {
			t.Fatal(err)
		}
		pod := mustNew(t, listwatch.For[*object.Pod](c, pods, "ns"), Options[*object.Pod]{Name: "pods"})
		raw, err := New[*object.Raw](listwatch.For[*object.Raw](c, pods, "ns"), Options[*object.Raw]{Name: "pods"})
		if err != nil {
			t.Fatal(err)
		}
		if got := pod.Status().Encoding; got != tc.pod {
			t.Errorf("client encoding %q: a Pod informer's status says %q, want %q", tc.client, got, tc.pod)
		}
		if got := raw.Status().Encoding; got != tc.raw {
			t.Errorf("client encoding %q: a Raw informer's status says %q, want %q", tc.client, got, tc.raw)
		}
		c.CloseIdleConnections()
	}
	if got := mustNew(t, newHandSource(), Options[*object.Pod]{Name: "pods"}).Status().Encoding; got != "" {
		t.Errorf("an informer over a fake says encoding %q, want none", got)
	}
}

// OnStatus's statuses carry the encoding too.
func TestOnStatusSaysTheEncoding(t *testing.T) {
	e := newEnv(t, apisim.Options{})
	e.create(t, "a", nil)
	inf := mustNew(t, e.pods, Options[*object.Pod]{Name: "pods", Reflector: fastReflector()})
	var mu sync.Mutex
	var told []SyncStatus
	inf.OnStatus(func(s SyncStatus) { mu.Lock(); told = append(told, s); mu.Unlock() })
	run(t, inf)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := WaitForSync(ctx, inf); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(told) > 0 },
		"no status transition")
	mu.Lock()
	defer mu.Unlock()
	for _, s := range told {
		if s.Encoding != e.pods.Encoding() {
			t.Errorf("OnStatus told encoding %q, want the Resource's %q", s.Encoding, e.pods.Encoding())
		}
	}
	if got := inf.Status().Encoding; got != listwatch.EncodingProtobuf {
		t.Errorf("status says encoding %q, want protobuf (a Pod, the default encoding)", got)
	}
}

// StripManagedFields drops managedFields from an object read in protobuf too, where they
// are field 17 of its metadata rather than a member named so.
func TestStripManagedFieldsOfAProtobufObject(t *testing.T) {
	b, err := os.ReadFile("../object/testdata/protobuf/pod-full.pb")
	if err != nil {
		t.Fatal(err)
	}
	env, err := kubeproto.ParseEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	p, err := codec.DecodeProtobuf[*object.Pod](env.Raw, object.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Meta().Unknown.ProtobufField(object.ManagedFieldsNumber); !ok {
		t.Fatal("the golden pod has no managedFields")
	}
	p = StripManagedFields(p)
	if _, ok := p.Meta().Unknown.ProtobufField(object.ManagedFieldsNumber); ok {
		t.Errorf("managedFields kept")
	}
}
