package informer

import (
	"fmt"
	"reflect"
	"testing"
)

func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestMapShare(t *testing.T) {
	var s mapShare
	a := s.share(map[string]string{"app": "web", "pod-template-hash": "7d9f"})
	b := s.share(map[string]string{"pod-template-hash": "7d9f", "app": "web"})
	c := s.share(map[string]string{"app": "web", "pod-template-hash": "other"})
	d := s.share(map[string]string{"app": "3:web", "pod-template-hash": "4:7d9f"}) // no prefix tricks
	e := s.share(map[string]string{"a": "x", "b": "y"})
	f := s.share(map[string]string{"a": "y", "b": "x"}) // the same keys and values, paired otherwise
	switch {
	case !sameMap(a, b):
		t.Error("equal maps are not shared")
	case sameMap(a, c), sameMap(a, d), sameMap(e, f):
		t.Error("different maps are shared")
	}
	if got := s.share(nil); got != nil {
		t.Error("a nil map became a map")
	}
	for i := range maxShared + 10 {
		s.share(map[string]string{"i": fmt.Sprint(i)})
	}
	if len(s.maps) > maxShared {
		t.Errorf("the table holds %d maps, more than its bound %d", len(s.maps), maxShared)
	}
}

func TestShareMetaReusesThePreviousState(t *testing.T) {
	var s mapShare
	prev := pod("a", "u1", "1")
	prev.Labels = map[string]string{"app": "web"}
	next := pod("a", "u1", "2")
	next.Labels = map[string]string{"app": "web"}
	s.shareMeta(next, prev)
	if !sameMap(next.Labels, prev.Labels) {
		t.Error("equal labels of the previous state are not reused")
	}
	changed := pod("a", "u1", "3")
	changed.Labels = map[string]string{"app": "api"}
	s.shareMeta(changed, prev)
	if sameMap(changed.Labels, prev.Labels) || changed.Labels["app"] != "api" {
		t.Errorf("changed labels were replaced: %v", changed.Labels)
	}
}
