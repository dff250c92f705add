package deployment

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"reflect"
	"strconv"

	"github.com/kinformer/kinformer/object"
)

// canonicalTemplate is a pod template without the pod-template-hash label, in a form
// two templates compare by. A template read as JSON is generic JSON: it compares every
// member, modelled or not, and ignores the order and spacing they were written in. A
// template read as protobuf holds the fields the model does not as protobuf bytes, and
// is its protobuf encoding: the apiserver writes a message's fields in number order and
// its maps' entries sorted, so equal templates are equal bytes. (The informers of one
// client read ReplicaSets and Deployments alike; templates of two encodings are never
// compared, and would differ.)
type canonicalTemplate struct {
	json map[string]any
	pb   []byte
}

// canonical returns the canonical form of t.
func canonical(t *object.PodTemplateSpec) (canonicalTemplate, error) {
	b, err := json.Marshal(t)
	if errors.Is(err, object.ErrProtobufMembers) {
		return canonicalProtobuf(t)
	}
	if err != nil {
		return canonicalTemplate{}, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return canonicalTemplate{}, err
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		if labels, ok := meta["labels"].(map[string]any); ok {
			delete(labels, PodTemplateHashLabel)
			if len(labels) == 0 {
				delete(meta, "labels")
			}
		}
		if meta["creationTimestamp"] == nil {
			delete(meta, "creationTimestamp") // null and absent mean the same
		}
		if len(meta) == 0 {
			delete(m, "metadata")
		}
	}
	return canonicalTemplate{json: m}, nil
}

// canonicalProtobuf is canonical of a template read as protobuf.
func canonicalProtobuf(t *object.PodTemplateSpec) (canonicalTemplate, error) {
	cp := *t // the labels are replaced, not changed: the rest is only read
	if _, ok := cp.Labels[PodTemplateHashLabel]; ok {
		cp.Labels = maps.Clone(cp.Labels)
		delete(cp.Labels, PodTemplateHashLabel)
	}
	b, err := object.MarshalProtobuf(&cp)
	return canonicalTemplate{pb: b}, err
}

// bytes is the form that is hashed: the JSON text (map keys sorted by encoding/json),
// or the protobuf.
func (c canonicalTemplate) bytes() ([]byte, error) {
	if c.json == nil {
		return c.pb, nil
	}
	return json.Marshal(c.json)
}

// matches reports whether t is the template c was made from, ignoring the
// pod-template-hash label.
func (c canonicalTemplate) matches(t *object.PodTemplateSpec) bool {
	ct, err := canonical(t)
	if err != nil || (c.json == nil) != (ct.json == nil) {
		return false
	}
	if c.json == nil {
		return bytes.Equal(c.pb, ct.pb)
	}
	return reflect.DeepEqual(c.json, ct.json)
}

// sameTemplate reports whether a ReplicaSet's template is the Deployment's, ignoring the
// pod-template-hash label: that is how the new ReplicaSet is found, so a Deployment made
// under kube-controller-manager (whose hash this engine cannot reproduce) keeps working.
func sameTemplate(a, b *object.PodTemplateSpec) bool {
	ca, err := canonical(a)
	return err == nil && ca.matches(b)
}

// templateHash names a template: FNV-32a over its canonical form and, when set, the
// collision count, rendered in the alphabet kube-controller-manager uses for names (no
// vowels, no look-alike characters). A template read as protobuf hashes its protobuf,
// so its name differs from the one its JSON would give: the new ReplicaSet is found by
// its template, not by its name, whichever encoding made it.
func templateHash(t *object.PodTemplateSpec, collisionCount *int32) (string, error) {
	c, err := canonical(t)
	if err != nil {
		return "", err
	}
	b, err := c.bytes()
	if err != nil {
		return "", err
	}
	h := fnv.New32a()
	h.Write(b)
	if collisionCount != nil {
		var n [8]byte
		binary.LittleEndian.PutUint32(n[:], uint32(*collisionCount))
		h.Write(n[:])
	}
	return safeEncode(strconv.FormatUint(uint64(h.Sum32()), 10)), nil
}

// safeAlphabet has no vowels (no words in names) and no 0, 1, 3 (look-alikes).
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func safeEncode(s string) string {
	out := make([]byte, len(s))
	for i := range len(s) {
		out[i] = safeAlphabet[int(s[i])%len(safeAlphabet)]
	}
	return string(out)
}

// withHash returns a copy of the template with the pod-template-hash label set.
func withHash(t object.PodTemplateSpec, hash string) object.PodTemplateSpec {
	cp := object.DeepCopy(t)
	if cp.Labels == nil {
		cp.Labels = map[string]string{}
	}
	cp.Labels[PodTemplateHashLabel] = hash
	return cp
}

// selectorWithHash returns the Deployment's selector narrowed to one template hash.
func selectorWithHash(sel *object.LabelSelector, hash string) (*object.LabelSelector, error) {
	if sel == nil {
		return nil, fmt.Errorf("the deployment has no selector")
	}
	cp := object.DeepCopy(*sel)
	if cp.MatchLabels == nil {
		cp.MatchLabels = map[string]string{}
	}
	cp.MatchLabels[PodTemplateHashLabel] = hash
	return &cp, nil
}
