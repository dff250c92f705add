package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDifferences(t *testing.T) {
	e := func(name, uid, rv string) cacheEntry {
		return cacheEntry{Namespace: "ns", Name: name, UID: uid, ResourceVersion: rv}
	}
	tests := []struct {
		name          string
		server, cache map[string]cacheEntry
		want          []string
	}{
		{"equal", map[string]cacheEntry{"ns/a": e("a", "1", "5")}, map[string]cacheEntry{"ns/a": e("a", "1", "5")}, nil},
		{"all kinds",
			map[string]cacheEntry{"ns/a": e("a", "1", "5"), "ns/b": e("b", "2", "6"), "ns/c": e("c", "3", "7")},
			map[string]cacheEntry{"ns/b": e("b", "2", "4"), "ns/c": e("c", "9", "7"), "ns/d": e("d", "4", "8")},
			[]string{
				"missing from cache: ns/a (uid 1, rv 5)",
				"differs:            ns/b cache uid 2 rv 4, server uid 2 rv 6",
				"differs:            ns/c cache uid 9 rv 7, server uid 3 rv 7",
				"not on server:      ns/d (uid 4, rv 8)",
			}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, differences(tt.server, tt.cache)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}
