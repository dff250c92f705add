package listwatch

import (
	"net/url"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/clock"
	"github.com/kinformer/kinformer/object"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/trace"
)

// ListOptions are the query parameters of a list.
type ListOptions struct {
	LabelSelector string
	FieldSelector string
	// ResourceVersion "" asks for the most recent state (a consistent read), "0" for any
	// state (served from the watch cache), and a number for a state at least that new.
	ResourceVersion string
	// ResourceVersionMatch is "", "NotOlderThan" or "Exact".
	ResourceVersionMatch string
	// Limit is the page size (0: all at once); Continue is the token of the next page.
	Limit    int64
	Continue string
	// TimeoutSeconds bounds the request on the server side.
	TimeoutSeconds int64
	// Shard asks for the objects of one part of the hash space only, as the
	// shardSelector parameter (see package shard); the zero Selector sends none. Every
	// page of a paginated list must carry it: the server applies it per page. A server
	// that honours it says so in the page's ListMeta.ShardInfo; one without the feature
	// gate ignores it and sends everything.
	Shard shard.Selector

	// MaxFrameSize bounds one object of the page, in bytes (0: DefaultMaxFrameSize); a
	// larger one fails the list with an error wrapping ErrFrameTooLarge. The page itself
	// is not bounded: it is read as it arrives and never held whole.
	MaxFrameSize int
	// Decode says how objects are decoded (see object.DecodeOptions): without
	// metadata.managedFields (the server still sends them, they are never built), and
	// with labels and annotations from a cache's own MapTable, for objects that stay
	// read-only.
	Decode object.DecodeOptions
	// OnContinue, when set, is handed the page's continue token as soon as the page's
	// metadata is read, before its items are: a caller following the tokens can ask for
	// the next page while this one is still arriving and being decoded (the reflector
	// does, see reflector/pages.go). The apiserver writes metadata before items; from a
	// server that writes it after, the token comes with the page and nothing overlaps.
	// It is called at most once, from the goroutine that decodes the page, and never for
	// a page without a token. It is not sent to the server.
	OnContinue func(token string)
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	set(q, "labelSelector", o.LabelSelector)
	set(q, "fieldSelector", o.FieldSelector)
	set(q, "resourceVersion", o.ResourceVersion)
	set(q, "resourceVersionMatch", o.ResourceVersionMatch)
	set(q, "continue", o.Continue)
	if o.Limit > 0 {
		q.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	if o.TimeoutSeconds > 0 {
		q.Set("timeoutSeconds", strconv.FormatInt(o.TimeoutSeconds, 10))
	}
	set(q, "shardSelector", o.Shard.String())
	return q
}

// WatchOptions are the query parameters of a watch, and how to carry it.
type WatchOptions struct {
	LabelSelector string
	FieldSelector string
	// ResourceVersion to start from: the list's resourceVersion, so nothing between the
	// list and the watch is lost. "" starts at "now" and "0" at "any".
	ResourceVersion      string
	ResourceVersionMatch string
	// AllowBookmarks asks for BOOKMARK events, which carry the newest resourceVersion.
	AllowBookmarks bool
	// TimeoutSeconds asks the server to end the stream cleanly after that long.
	TimeoutSeconds int64
	// SendInitialEvents asks for a streaming list: ADDED for every existing object, then a
	// bookmark annotated InitialEventsEndAnnotation. Needs AllowBookmarks and
	// ResourceVersionMatch "NotOlderThan".
	SendInitialEvents bool
	// Shard asks for the events of one part of the hash space only, as ListOptions.Shard.
	// A watch carries no sign of whether the server honoured it (neither do a streaming
	// list's events and bookmark): only a list's ShardInfo tells.
	Shard shard.Selector

	// IdleTimeout ends the stream with ErrIdleTimeout when no event arrives for this long;
	// with bookmarks on, a live stream is never silent for more than about a minute.
	IdleTimeout time.Duration
	// WebSocket carries the watch over a websocket (one event per text message) instead
	// of a chunked HTTP body.
	WebSocket bool
	// MaxFrameSize bounds one event, in bytes (0: DefaultMaxFrameSize); a larger one
	// ends the stream with a *FrameError wrapping ErrFrameTooLarge.
	MaxFrameSize int
	// Decode says how each event's object is decoded, as ListOptions.Decode.
	Decode object.DecodeOptions
	// Tracer, when set, is asked before each frame whether to follow it, and is handed
	// each followed event once decoded, with its first three marks (see package trace).
	// A streaming list's initial events are not followed. nil costs one check per frame.
	Tracer trace.Tracer
	// Clock times IdleTimeout and the trace marks [clock.Real].
	Clock clock.Clock
}

func (o WatchOptions) query() url.Values {
	q := url.Values{"watch": {"1"}}
	set(q, "labelSelector", o.LabelSelector)
	set(q, "fieldSelector", o.FieldSelector)
	set(q, "resourceVersion", o.ResourceVersion)
	set(q, "resourceVersionMatch", o.ResourceVersionMatch)
	if o.AllowBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if o.TimeoutSeconds > 0 {
		q.Set("timeoutSeconds", strconv.FormatInt(o.TimeoutSeconds, 10))
	}
	if o.SendInitialEvents {
		q.Set("sendInitialEvents", "true")
		// The server requires the parameter to be present even when empty.
		q.Set("resourceVersion", o.ResourceVersion)
	}
	set(q, "shardSelector", o.Shard.String())
	return q
}

func set(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

// PatchType is the content type of a patch.
type PatchType string

// Patch types the apiserver accepts.
const (
	MergePatch     PatchType = "application/merge-patch+json"
	JSONPatch      PatchType = "application/json-patch+json"
	StrategicPatch PatchType = "application/strategic-merge-patch+json"
)

// DeleteOptions are the body of a delete.
type DeleteOptions struct {
	// Preconditions make the delete fail with a Conflict when the object changed.
	Preconditions *Preconditions `json:"preconditions,omitempty"`
	// PropagationPolicy is "Orphan", "Background" or "Foreground".
	PropagationPolicy  string `json:"propagationPolicy,omitempty"`
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
}

// Preconditions must hold for a delete to proceed.
type Preconditions struct {
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}
