package apisim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
)

// The simulator keeps objects as generic JSON (map[string]any with json.Number), so it
// serves any resource and keeps every field a client sends.

func decodeObject(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return nil, badRequest("the request body is not a JSON object: %v", err)
	}
	if obj == nil {
		return nil, badRequest("the request body is not a JSON object")
	}
	return obj, nil
}

func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func labels(obj map[string]any) map[string]string {
	raw, _ := meta(obj)["labels"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		out[k], _ = v.(string)
	}
	return out
}

// fieldValue reads a dotted path such as "spec.nodeName" as a string.
func fieldValue(obj map[string]any, path string) string {
	var cur any = obj
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	switch v := cur.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

func encode(obj map[string]any) *record {
	b, err := json.Marshal(obj)
	if err != nil { // impossible: the map came from JSON
		panic(err)
	}
	short := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "kind" && k != "apiVersion" {
			short[k] = v
		}
	}
	item, _ := json.Marshal(short)
	return &record{obj: obj, data: b, item: item}
}

// deepCopy copies a generic JSON value.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

func copyObject(obj map[string]any) map[string]any { return deepCopy(obj).(map[string]any) }

// mergePatch applies an RFC 7386 JSON merge patch: objects merge recursively, null
// deletes, anything else replaces.
func mergePatch(target any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return deepCopy(patch)
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	} else {
		t = copyObject(t)
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// equalJSON compares two generic JSON values.
func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// fieldSelector is a parsed ?fieldSelector=: field=value, field==value, field!=value.
type fieldSelector []struct {
	field, value string
	negate       bool
}

func parseFieldSelector(s string, t ResourceType) (fieldSelector, error) {
	var fs fieldSelector
	if strings.TrimSpace(s) == "" {
		return fs, nil
	}
	for _, term := range strings.Split(s, ",") {
		var field, value string
		negate := false
		switch {
		case strings.Contains(term, "!="):
			field, value, _ = strings.Cut(term, "!=")
			negate = true
		case strings.Contains(term, "=="):
			field, value, _ = strings.Cut(term, "==")
		case strings.Contains(term, "="):
			field, value, _ = strings.Cut(term, "=")
		default:
			return nil, badRequest("invalid field selector %q: %q is not field=value", s, term)
		}
		field = strings.TrimSpace(field)
		supported := field == "metadata.name" || field == "metadata.namespace"
		for _, f := range t.FieldSelectors {
			supported = supported || f == field
		}
		if !supported {
			return nil, badRequest("field label not supported: %s", field)
		}
		fs = append(fs, struct {
			field, value string
			negate       bool
		}{field, strings.TrimSpace(value), negate})
	}
	return fs, nil
}

func (fs fieldSelector) matches(obj map[string]any) bool {
	for _, t := range fs {
		if (fieldValue(obj, t.field) == t.value) == t.negate {
			return false
		}
	}
	return true
}

// filter is a watch's or list's namespace plus label, field and shard selectors.
type filter struct {
	namespace string
	labels    object.Selector
	fields    fieldSelector
	// shard is the request's shardSelector (zero: none, or ignored). The fields it hashes,
	// uid and namespace, never change, so an object never enters or leaves it: unlike
	// a label selector, it turns no MODIFIED into an ADDED or a DELETED.
	shard shard.Selector
}

func (f filter) matches(obj map[string]any) bool {
	m := meta(obj)
	if f.namespace != "" && str(m, "namespace") != f.namespace {
		return false
	}
	if !f.shard.IsZero() && !f.shard.Matches(str(m, shardField(f.shard.Field))) {
		return false
	}
	return f.labels.Matches(labels(obj)) && f.fields.matches(obj)
}

// shardField is the metadata member a shard field hashes.
func shardField(f shard.Field) string {
	if f == shard.UID {
		return "uid"
	}
	return "namespace"
}

// wantsMetadata reports an Accept header asking for PartialObjectMetadata.
func wantsMetadata(accept string) bool { return strings.Contains(accept, "as=PartialObjectMetadata") }

// metadataOf is a stored object as PartialObjectMetadata: kind, apiVersion, metadata.
func metadataOf(rec *record) []byte {
	b, _ := json.Marshal(map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": rec.obj["metadata"]})
	return b
}
