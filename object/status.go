package object

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// StatusReason is the machine-readable reason of a failed API call.
type StatusReason string

// The reasons the engine acts on.
const (
	ReasonNotFound         StatusReason = "NotFound"
	ReasonAlreadyExists    StatusReason = "AlreadyExists"
	ReasonConflict         StatusReason = "Conflict"
	ReasonGone             StatusReason = "Gone"
	ReasonExpired          StatusReason = "Expired"
	ReasonTooManyRequests  StatusReason = "TooManyRequests"
	ReasonForbidden        StatusReason = "Forbidden"
	ReasonUnauthorized     StatusReason = "Unauthorized"
	ReasonInvalid          StatusReason = "Invalid"
	ReasonBadRequest       StatusReason = "BadRequest"
	ReasonInternalError    StatusReason = "InternalError"
	ReasonTimeout          StatusReason = "Timeout"
	ReasonMethodNotAllowed StatusReason = "MethodNotAllowed"
	ReasonUnsupportedMedia StatusReason = "UnsupportedMediaType"
)

// Status is the apiserver's error body (kind Status), and the object of a watch ERROR event.
type Status struct {
	TypeMeta
	Status  string         `json:"status,omitempty"`
	Message string         `json:"message,omitempty"`
	Reason  StatusReason   `json:"reason,omitempty"`
	Details *StatusDetails `json:"details,omitempty"`
	Code    int32          `json:"code,omitempty"`
}

// StatusDetails says which object a Status is about, and when to retry.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one reason in Details.Causes (a field that failed validation, ...).
type StatusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// StatusError is an error returned by the apiserver (or found in a watch ERROR event).
type StatusError struct {
	Status Status
	// RetryAfter is the server's Retry-After header or details.retryAfterSeconds, if any.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	msg := e.Status.Message
	if msg == "" {
		msg = http.StatusText(int(e.Status.Code))
	}
	if e.Status.Reason != "" {
		return fmt.Sprintf("%s (%d %s)", msg, e.Status.Code, e.Status.Reason)
	}
	return fmt.Sprintf("%s (%d)", msg, e.Status.Code)
}

// NewStatusError builds the error for code and reason, as the apiserver would send it.
func NewStatusError(code int32, reason StatusReason, format string, args ...any) *StatusError {
	return &StatusError{Status: Status{
		TypeMeta: TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   "Failure", Code: code, Reason: reason, Message: fmt.Sprintf(format, args...),
	}}
}

// NewNotFound is the error for a missing object: `pods "x" not found`.
func NewNotFound(resource, name string) *StatusError {
	e := NewStatusError(http.StatusNotFound, ReasonNotFound, "%s %q not found", resource, name)
	e.Status.Details = &StatusDetails{Name: name, Kind: resource}
	return e
}

// NewAlreadyExists is the error for a create of an existing name.
func NewAlreadyExists(resource, name string) *StatusError {
	e := NewStatusError(http.StatusConflict, ReasonAlreadyExists, "%s %q already exists", resource, name)
	e.Status.Details = &StatusDetails{Name: name, Kind: resource}
	return e
}

// NewConflict is the error for a write whose precondition (resourceVersion, uid) failed.
func NewConflict(resource, name, why string) *StatusError {
	e := NewStatusError(http.StatusConflict, ReasonConflict,
		"Operation cannot be fulfilled on %s %q: %s", resource, name, why)
	e.Status.Details = &StatusDetails{Name: name, Kind: resource}
	return e
}

// NewExpired is the 410 for a resourceVersion or continue token that is too old.
func NewExpired(message string) *StatusError {
	return NewStatusError(http.StatusGone, ReasonExpired, "%s", message)
}

// NewTooManyRequests is the 429 with a retry hint.
func NewTooManyRequests(message string, retryAfter time.Duration) *StatusError {
	e := NewStatusError(http.StatusTooManyRequests, ReasonTooManyRequests, "%s", message)
	e.Status.Details = &StatusDetails{RetryAfterSeconds: int32(retryAfter / time.Second)}
	e.RetryAfter = retryAfter
	return e
}

// AsStatus returns the StatusError inside err, if there is one.
func AsStatus(err error) (*StatusError, bool) {
	var se *StatusError
	ok := errors.As(err, &se)
	return se, ok
}

// ReasonOf returns the reason of a StatusError in err, or "".
func ReasonOf(err error) StatusReason {
	if se, ok := AsStatus(err); ok {
		return se.Status.Reason
	}
	return ""
}

// CodeOf returns the HTTP code of a StatusError in err, or 0.
func CodeOf(err error) int32 {
	if se, ok := AsStatus(err); ok {
		return se.Status.Code
	}
	return 0
}

func is(err error, reason StatusReason, code int32) bool {
	se, ok := AsStatus(err)
	if !ok {
		return false
	}
	if se.Status.Reason != "" && se.Status.Reason != "Unknown" {
		return se.Status.Reason == reason
	}
	return se.Status.Code == code
}

// IsNotFound reports a 404 NotFound.
func IsNotFound(err error) bool { return is(err, ReasonNotFound, http.StatusNotFound) }

// IsAlreadyExists reports a create that found the name taken.
func IsAlreadyExists(err error) bool { return ReasonOf(err) == ReasonAlreadyExists }

// IsConflict reports a 409 Conflict (a failed resourceVersion precondition).
func IsConflict(err error) bool { return is(err, ReasonConflict, http.StatusConflict) }

// IsGone reports a 410: the resourceVersion or continue token is too old (reason Expired
// or Gone). The remedy is a fresh list.
func IsGone(err error) bool { return CodeOf(err) == http.StatusGone }

// IsTooManyRequests reports a 429.
func IsTooManyRequests(err error) bool {
	return is(err, ReasonTooManyRequests, http.StatusTooManyRequests)
}

// IsForbidden reports a 403.
func IsForbidden(err error) bool { return is(err, ReasonForbidden, http.StatusForbidden) }

// IsUnauthorized reports a 401.
func IsUnauthorized(err error) bool { return is(err, ReasonUnauthorized, http.StatusUnauthorized) }

// IsInvalid reports a 422 validation failure.
func IsInvalid(err error) bool { return is(err, ReasonInvalid, http.StatusUnprocessableEntity) }

// RetryAfter returns how long the server asked the client to wait, if it did.
func RetryAfter(err error) (time.Duration, bool) {
	se, ok := AsStatus(err)
	if !ok {
		return 0, false
	}
	if se.RetryAfter > 0 {
		return se.RetryAfter, true
	}
	if se.Status.Details != nil && se.Status.Details.RetryAfterSeconds > 0 {
		return time.Duration(se.Status.Details.RetryAfterSeconds) * time.Second, true
	}
	return 0, false
}
