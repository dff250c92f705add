package object

import "github.com/kinformer/kinformer/internal/codec"

// TypeMeta names an object's kind and API version. Items inside a list carry neither.
type TypeMeta struct {
	APIVersion string `json:"apiVersion,omitempty" pb:"-"`
	Kind       string `json:"kind,omitempty" pb:"-"`
}

// ObjectMeta is the metadata every persisted object has. Fields the engine does not read
// (managedFields, deletionGracePeriodSeconds, selfLink, ...) are kept in Unknown and
// written back unchanged.
type ObjectMeta struct {
	Name              string            `json:"name,omitempty" pb:"1"`
	GenerateName      string            `json:"generateName,omitempty" pb:"2"`
	Namespace         string            `json:"namespace,omitempty" pb:"3"`
	UID               string            `json:"uid,omitempty" pb:"5"`
	ResourceVersion   string            `json:"resourceVersion,omitempty" pb:"6"`
	Generation        int64             `json:"generation,omitempty" pb:"7"`
	CreationTimestamp Time              `json:"creationTimestamp,omitzero" pb:"8"`
	DeletionTimestamp *Time             `json:"deletionTimestamp,omitempty" pb:"9"`
	Labels            map[string]string `json:"labels,omitempty" pb:"11"`
	Annotations       map[string]string `json:"annotations,omitempty" pb:"12"`
	OwnerReferences   []OwnerReference  `json:"ownerReferences,omitempty" pb:"13"`
	Finalizers        []string          `json:"finalizers,omitempty" pb:"14"`

	Unknown Unknown `json:"-"`
}

// Meta returns the metadata itself; through embedding it makes every typed object an Object.
func (m *ObjectMeta) Meta() *ObjectMeta { return m }

// MarshalJSON writes the modelled fields and every unknown member.
func (m ObjectMeta) MarshalJSON() ([]byte, error) { return codec.Marshal(&m) }

// UnmarshalJSON reads the modelled fields and keeps the rest in Unknown.
func (m *ObjectMeta) UnmarshalJSON(b []byte) error { return codec.Unmarshal(b, m) }

// ListMeta is the metadata of a list response.
type ListMeta struct {
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Continue           string `json:"continue,omitempty"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
	// ShardInfo is set by a server that filtered the list by its shardSelector (see
	// package shard); nil when the request had none, or when the server ignored it, which
	// a server without the ShardedListAndWatch feature gate does without a word. It is
	// the only way a client can tell the two apart.
	ShardInfo *ShardInfo `json:"shardInfo,omitempty"`
}

// ShardInfo is metadata.shardInfo of a sharded list.
type ShardInfo struct {
	// Selector is the selector the server applied, in its canonical form (the form
	// shard.Selector.String writes), not necessarily the text the request sent: the
	// server re-writes what it parsed, dropping parentheses, comments and extra blanks,
	// and quoting every bound with single quotes.
	Selector string `json:"selector"`
}

// Object is anything with ObjectMeta: every typed object of this package and Raw.
//
// Objects handed out by a cache are shared between all its readers and must be treated as
// read-only; call DeepCopy before changing one.
type Object interface {
	Meta() *ObjectMeta
}

// OwnerReference points from a dependent to its owner. Controller marks the managing owner.
type OwnerReference struct {
	APIVersion         string `json:"apiVersion" pb:"5"`
	Kind               string `json:"kind" pb:"1"`
	Name               string `json:"name" pb:"3"`
	UID                string `json:"uid" pb:"4"`
	Controller         *bool  `json:"controller,omitempty" pb:"6"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty" pb:"7"`
}

// IsController reports whether the reference marks the managing controller.
func (r OwnerReference) IsController() bool { return r.Controller != nil && *r.Controller }

// ControllerRef returns the reference of the object's managing controller, or nil.
func ControllerRef(m *ObjectMeta) *OwnerReference {
	for i := range m.OwnerReferences {
		if m.OwnerReferences[i].IsController() {
			return &m.OwnerReferences[i]
		}
	}
	return nil
}

// NewControllerRef builds the reference a controller puts on what it creates: controller
// and blockOwnerDeletion set, as kube-controller-manager does.
func NewControllerRef(owner *ObjectMeta, apiVersion, kind string) OwnerReference {
	yes := true
	return OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: owner.Name, UID: owner.UID,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}
