package deployment

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"strconv"

	"github.com/kinformer/kinformer/object"
)

// canonicalTemplate is a pod template as generic JSON without the pod-template-hash
// label: two templates are the same when their canonical forms are equal. Going through
// generic JSON compares every member, modelled or not, and ignores the order and spacing
// they were written in.
type canonicalTemplate map[string]any

// canonical returns the canonical form of t.
func canonical(t *object.PodTemplateSpec) (canonicalTemplate, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
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
	return m, nil
}

// matches reports whether t is the template c was made from, ignoring the
// pod-template-hash label.
func (c canonicalTemplate) matches(t *object.PodTemplateSpec) bool {
	ct, err := canonical(t)
	return err == nil && reflect.DeepEqual(c, ct)
}

// sameTemplate reports whether a ReplicaSet's template is the Deployment's, ignoring the
// pod-template-hash label: that is how the new ReplicaSet is found, so a Deployment made
// under kube-controller-manager (whose hash this engine cannot reproduce) keeps working.
func sameTemplate(a, b *object.PodTemplateSpec) bool {
	ca, err := canonical(a)
	return err == nil && ca.matches(b)
}

// templateHash names a template: FNV-32a over its canonical JSON (map keys sorted by
// encoding/json) and, when set, the collision count, rendered in the alphabet
// kube-controller-manager uses for names (no vowels, no look-alike characters).
func templateHash(t *object.PodTemplateSpec, collisionCount *int32) (string, error) {
	c, err := canonical(t)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(c)
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
