package object

import "testing"

func TestKeys(t *testing.T) {
	tests := []struct {
		key, ns, name string
		bad           bool
	}{
		{key: "ns/a", ns: "ns", name: "a"},
		{key: "node1", name: "node1"},
		{key: "", bad: true},
		{key: "a/b/c", bad: true},
		{key: "/a", bad: true},
		{key: "a/", bad: true},
	}
	for _, tt := range tests {
		ns, name, err := SplitKey(tt.key)
		if (err != nil) != tt.bad {
			t.Errorf("SplitKey(%q) error = %v, want error %v", tt.key, err, tt.bad)
			continue
		}
		if tt.bad {
			continue
		}
		if ns != tt.ns || name != tt.name {
			t.Errorf("SplitKey(%q) = %q, %q", tt.key, ns, name)
		}
		p := &Pod{ObjectMeta: ObjectMeta{Namespace: ns, Name: name}}
		if got := Key(p); got != tt.key {
			t.Errorf("Key = %q, want %q", got, tt.key)
		}
	}
}
