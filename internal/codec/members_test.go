package codec

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMembers(t *testing.T) {
	var u Members
	if u.Len() != 0 || u.Get("x") != nil || u.String() != "{}" {
		t.Fatalf("zero Members: len %d, x %s, %s", u.Len(), u.Get("x"), u)
	}
	u.Set("restartPolicy", json.RawMessage(`"Always"`)) // a word, and a word's value
	u.Set("x-custom", json.RawMessage(`{"name": "a", "tolerations" :[1, 2.50]}`))
	u.Set("empty", nil)
	u.Set("restartPolicy", json.RawMessage(`"Never"`)) // replaced in place
	want := []string{"restartPolicy", "x-custom", "empty"}
	var order []string
	for name := range u.All() {
		order = append(order, name)
	}
	if !slices.Equal(order, want) || u.Len() != 3 {
		t.Errorf("members %v (len %d), want %v", order, u.Len(), want)
	}
	for name, value := range map[string]string{
		"restartPolicy": `"Never"`,
		"x-custom":      `{"name": "a", "tolerations" :[1, 2.50]}`, // byte for byte
		"empty":         `null`,
	} {
		if got := string(u.Get(name)); got != value {
			t.Errorf("Get(%q) = %s, want %s", name, got, value)
		}
	}

	c := u // a copy is independent
	c.Delete("x-custom")
	c.Set("restartPolicy", json.RawMessage(`"OnFailure"`))
	if u.Len() != 3 || string(u.Get("restartPolicy")) != `"Never"` || c.Len() != 2 {
		t.Errorf("changing a copy changed the original: %s / %s", u, c)
	}
	c.Delete("missing")
	c.Delete("restartPolicy")
	c.Delete("empty")
	if c.Len() != 0 || c.p != nil {
		t.Errorf("all deleted: %s (%d bytes)", c, len(c.run()))
	}
}

func TestMembersEqual(t *testing.T) {
	var a, b Members
	a.Set("p", json.RawMessage(`{"a": [1, "<x>"]}`))
	a.Set("q", json.RawMessage(`2`))
	b.Set("q", json.RawMessage(`2`))
	b.Set("p", json.RawMessage(`{"a":[1,"\u003cx\u003e"]}`)) // other order, spacing, escapes
	if !a.Equal(b) || !cmp.Equal(a, b) {
		t.Errorf("%s and %s are the same members", a, b)
	}
	b.Set("q", json.RawMessage(`2.0`)) // numbers compare by their text
	if a.Equal(b) {
		t.Errorf("%s and %s differ", a, b)
	}
	b.Delete("q")
	if a.Equal(b) || b.Equal(a) {
		t.Errorf("%s and %s differ", a, b)
	}
}

// A value that is not JSON text (control bytes), or not one JSON value, is kept as it is.
func TestMembersKeepNonJSONBytes(t *testing.T) {
	for _, odd := range []string{"\"name\x01\x05\":\"Always\"", `"Always" "Never"`, `{"restartPolicy":`, "  ", `"Always`} {
		var u Members
		u.Set("v", json.RawMessage(odd))
		if got := u.Get("v"); !bytes.Equal(got, []byte(odd)) {
			t.Errorf("Get = %q, want %q", got, odd)
		}
	}
}

// A pod's unknown members are packed far smaller than their JSON, and come back byte for
// byte.
func TestMembersPackKubernetesWords(t *testing.T) {
	data := realisticPod(t)
	spec := decodeTest(t, data, Options{}).Spec.Unknown.m
	text := 0
	for _, v := range spec.All() {
		text += len(v)
	}
	if len(spec.run())*2 > text {
		t.Errorf("spec's unknown members take %d bytes for %d of JSON", len(spec.run()), text)
	}
	var raw struct{ Spec map[string]json.RawMessage }
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw.Spec, "nodeName")
	if got := maps.Collect(spec.All()); !cmp.Equal(got, raw.Spec, cmp.Comparer(bytes.Equal)) {
		t.Errorf("spec members differ:\n%s", cmp.Diff(raw.Spec, got, cmp.Comparer(bytes.Equal)))
	}
}
