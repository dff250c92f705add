package claim

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kinformer/kinformer/object"
)

func pod(name string, labels map[string]string, refs ...object.OwnerReference) *object.Pod {
	return &object.Pod{ObjectMeta: object.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + name,
		ResourceVersion: "7", Labels: labels, OwnerReferences: refs}}
}

func ref(uid string, controller bool) object.OwnerReference {
	return object.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + uid, UID: uid, Controller: &controller}
}

func TestClaim(t *testing.T) {
	web := map[string]string{"app": "web"}
	other := map[string]string{"app": "db"}
	now := object.Now()
	tests := []struct {
		name        string
		pods        []*object.Pod
		ownerDel    bool
		freshUID    string // "" means the owner's own
		freshDel    bool
		wantClaimed []string
		wantPatched map[string][]string // pod → owner UIDs after the patch (nil entry: refs removed)
		wantErr     bool
		wantFresh   int
	}{
		{name: "owned and matching", pods: []*object.Pod{pod("a", web, ref("me", true))}, wantClaimed: []string{"a"}},
		{name: "orphan adopted, other refs kept", pods: []*object.Pod{pod("a", web, ref("gc", false))},
			wantClaimed: []string{"a"}, wantPatched: map[string][]string{"a": {"gc", "me"}}, wantFresh: 1},
		{name: "orphan not matching ignored", pods: []*object.Pod{pod("a", other)}},
		{name: "another controller's pod never touched", pods: []*object.Pod{pod("a", web, ref("you", true)), pod("b", other, ref("you", true))}},
		{name: "owned but not matching released", pods: []*object.Pod{pod("a", other, ref("me", true), ref("gc", false))},
			wantPatched: map[string][]string{"a": {"gc"}}},
		{name: "release of the last ref removes the member", pods: []*object.Pod{pod("a", other, ref("me", true))},
			wantPatched: map[string][]string{"a": nil}},
		{name: "owner being deleted neither adopts nor releases", ownerDel: true,
			pods:        []*object.Pod{pod("a", web), pod("b", other, ref("me", true)), pod("c", web, ref("me", true))},
			wantClaimed: []string{"c"}},
		{name: "owner replaced on the server: no adoption", freshUID: "new", pods: []*object.Pod{pod("a", web), pod("b", web)},
			wantErr: true, wantFresh: 1},
		{name: "owner deleted on the server: no adoption", freshDel: true, pods: []*object.Pod{pod("a", web), pod("b", web, ref("me", true))},
			wantClaimed: []string{"b"}, wantErr: true, wantFresh: 1},
		{name: "fresh read once for many adoptions", pods: []*object.Pod{pod("a", web), pod("b", web)},
			wantClaimed: []string{"a", "b"}, wantPatched: map[string][]string{"a": {"me"}, "b": {"me"}}, wantFresh: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owner := &object.ObjectMeta{Namespace: "ns", Name: "rs-me", UID: "me"}
			if tt.ownerDel {
				owner.DeletionTimestamp = &now
			}
			fresh := 0
			o := Owner{Meta: owner, APIVersion: "apps/v1", Kind: "ReplicaSet", Selector: object.SelectorFromSet(web),
				Fresh: func(context.Context) (*object.ObjectMeta, error) {
					fresh++
					m := *owner
					if tt.freshUID != "" {
						m.UID = tt.freshUID
					}
					if tt.freshDel {
						m.DeletionTimestamp = &now
					}
					return &m, nil
				}}
			patched := map[string][]string{}
			claimed, err := Claim(context.Background(), o, tt.pods, func(_ context.Context, name string, patch []byte) error {
				var p struct {
					Metadata struct {
						UID, ResourceVersion string
						OwnerReferences      []object.OwnerReference
					}
				}
				if err := json.Unmarshal(patch, &p); err != nil {
					return err
				}
				if p.Metadata.UID != "uid-"+name || p.Metadata.ResourceVersion != "7" {
					return errors.New("patch without the uid and resourceVersion preconditions: " + string(patch))
				}
				var uids []string
				for _, r := range p.Metadata.OwnerReferences {
					uids = append(uids, r.UID)
				}
				sort.Strings(uids)
				patched[name] = uids
				return nil
			})
			var names []string
			for _, p := range claimed {
				names = append(names, p.Name)
			}
			if d := cmp.Diff(tt.wantClaimed, names); d != "" {
				t.Errorf("claimed (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantPatched, patched, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("patches (-want +got):\n%s", d)
			}
			if (err != nil) != tt.wantErr {
				t.Errorf("error = %v, want error %v", err, tt.wantErr)
			}
			if fresh != tt.wantFresh {
				t.Errorf("%d fresh reads of the owner, want %d", fresh, tt.wantFresh)
			}
		})
	}
}
