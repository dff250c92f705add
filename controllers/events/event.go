package events

import "github.com/kinformer/kinformer/object"

// Event is a core/v1 Event, as the recorder writes it.
type Event struct {
	APIVersion         string            `json:"apiVersion,omitempty"`
	Kind               string            `json:"kind,omitempty"`
	Metadata           object.ObjectMeta `json:"metadata"`
	InvolvedObject     ObjectReference   `json:"involvedObject"`
	Reason             string            `json:"reason,omitempty"`
	Message            string            `json:"message,omitempty"`
	Source             EventSource       `json:"source,omitzero"`
	FirstTimestamp     object.Time       `json:"firstTimestamp,omitzero"`
	LastTimestamp      object.Time       `json:"lastTimestamp,omitzero"`
	Count              int32             `json:"count,omitempty"`
	Type               string            `json:"type,omitempty"`
	ReportingComponent string            `json:"reportingComponent,omitempty"`
	ReportingInstance  string            `json:"reportingInstance,omitempty"`
}

// Meta makes an Event an object.Object.
func (e *Event) Meta() *object.ObjectMeta { return &e.Metadata }

// ObjectReference names the object an event is about.
type ObjectReference struct {
	APIVersion      string `json:"apiVersion,omitempty"`
	Kind            string `json:"kind,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// EventSource is the component that wrote an event.
type EventSource struct {
	Component string `json:"component,omitempty"`
	Host      string `json:"host,omitempty"`
}
