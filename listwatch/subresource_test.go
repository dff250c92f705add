package listwatch_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kinformer/kinformer/apisim"
	"github.com/kinformer/kinformer/internal/testrig/simtest"
	"github.com/kinformer/kinformer/internal/testrig/testwait"
	"github.com/kinformer/kinformer/object"
)

func TestCreateSubresource(t *testing.T) {
	_, c := simtest.Start(t, apisim.Options{})
	ctx := testwait.Context(t, 20*time.Second)
	r := pods(t, c, "default")
	mustCreate(t, r, "web", nil)
	binding := []byte(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web"},"target":{"kind":"Node","name":"fake-node"}}`)

	b, err := r.CreateSubresource(ctx, "web", "binding", binding)
	if err != nil {
		t.Fatal(err)
	}
	var st object.Status
	if err := json.Unmarshal(b, &st); err != nil || st.Kind != "Status" || st.Status != "Success" || st.Code != 201 {
		t.Errorf("answer %s (%v), want a Success Status", b, err)
	}
	if p, _ := r.Get(ctx, "web"); p.Spec.NodeName != "fake-node" {
		t.Errorf("nodeName = %q", p.Spec.NodeName)
	}
	if _, err := r.CreateSubresource(ctx, "web", "binding", binding); !object.IsConflict(err) {
		t.Errorf("second binding: %v, want a Conflict", err)
	}

	for name, call := range map[string]func() error{
		"no name":        func() error { _, err := r.CreateSubresource(ctx, "", "binding", binding); return err },
		"no subresource": func() error { _, err := r.CreateSubresource(ctx, "web", "", binding); return err },
		"no namespace": func() error {
			_, err := pods(t, c, "").CreateSubresource(ctx, "web", "binding", binding)
			return err
		},
	} {
		if err := call(); err == nil || object.CodeOf(err) != 0 {
			t.Errorf("%s: %v, want a client-side error", name, err)
		}
	}
}
