package object

// List is a page of a list response: `{"kind":"PodList","metadata":{...},"items":[...]}`.
// Items in a list carry no kind or apiVersion.
type List[T any] struct {
	TypeMeta
	ListMeta `json:"metadata"`
	Items    []T `json:"items"`
}
