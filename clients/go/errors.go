package eslm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors, for errors.Is. Every error this package returns for a server answer or a
// client-side refusal is an *Error that matches one or more of them (its Type says which
// server error it was).
var (
	// ErrLocked: a try-lock (TryLock, TryAcquire, a campaign that does not wait) found the key
	// busy: 409 lock_conflict_exception. Also a grant whose answer arrived after its lease could
	// have ended (not acquired).
	ErrLocked = errors.New("eslm: locked by another holder")
	// ErrWaitTimeout: the acquire waited as long as its context allowed without being granted
	// (409 lock_wait_timeout_exception, or the context's deadline). Such an error also matches
	// context.DeadlineExceeded when the deadline ran out on the client.
	ErrWaitTimeout = errors.New("eslm: lock wait timed out")
	// ErrNotHeld: 404 lock_not_held_exception: a release or renewal of a grant the server no
	// longer has (expired, force-released, replaced by a newer acquisition), or a force-release
	// of a free key.
	ErrNotHeld = errors.New("eslm: lock not held")
	// ErrSessionNotFound: 404 session_not_found_exception.
	ErrSessionNotFound = errors.New("eslm: session not found")
	// ErrDeadlock: 409 deadlock_exception: this waiter was chosen as a deadlock victim.
	ErrDeadlock = errors.New("eslm: deadlock victim")
	// ErrLimitExceeded: 429 lock_limit_exceeded_exception (Error.Field("limit") names the setting).
	ErrLimitExceeded = errors.New("eslm: lock limit exceeded")
	// ErrSemaphoreLimitMismatch: 409 semaphore_limit_mismatch_exception.
	ErrSemaphoreLimitMismatch = errors.New("eslm: semaphore limit mismatch")
	// ErrUnavailable: a 503 (lock_partition_unavailable_exception: the partition is moving, in
	// recovery grace, unconfirmed, or the node is shutting down) still answered when the call's
	// budget ran out. Every call retries it within its budget first.
	ErrUnavailable = errors.New("eslm: lock partition unavailable")
	// ErrCorePanic: 500 lock_core_panic_exception.
	ErrCorePanic = errors.New("eslm: lock core panicked")
	// ErrBadRequest: the server refused the request's input (any 400).
	ErrBadRequest = errors.New("eslm: bad request")
	// ErrRequestTooLarge: 413.
	ErrRequestTooLarge = errors.New("eslm: request too large")
	// ErrInvalidArgument: a bad argument or option refused by this client before anything was
	// sent.
	ErrInvalidArgument = errors.New("eslm: invalid argument")
	// ErrLost: the lock (or session, or leadership) was lost while held: a renewal or the
	// release found it gone, renewals failed until its lease ran out, its loss watch saw the
	// server end it, or its session was lost. Also returned, without sending anything, by a
	// fenced write or change, or a downgrade, of a lock already known lost.
	ErrLost = errors.New("eslm: lock lost")
	// ErrVersionConflict: 409 version_conflict_engine_exception from a document write.
	ErrVersionConflict = errors.New("eslm: version conflict")
	// ErrStaleToken: a fenced write refused by Elasticsearch because a holder with a newer
	// token already wrote the document, or a fenced change (Update, Read, Delete, a Bulk item)
	// that the plugin's script made a noop because a newer token had changed the document:
	// nothing written. Also matches ErrVersionConflict; the error is a *StaleTokenError, whose
	// Fence and Token say which tokens (errors.As).
	ErrStaleToken = errors.New("eslm: stale fencing token")
	// ErrUpdateConflict: an optimistic update lost its race more times than it may retry (also
	// matches ErrVersionConflict).
	ErrUpdateConflict = errors.New("eslm: optimistic update conflict")
	// ErrClosed: the Client (or Session) was closed.
	ErrClosed = errors.New("eslm: closed")
	// ErrConnection: no answer from Elasticsearch (after the transport's own retries).
	ErrConnection = errors.New("eslm: no answer")
)

// The server's error types this client knows (docs/API.md "Errors"), each with the sentinels it
// matches.
var kindsByType = map[string][]error{
	"lock_conflict_exception":              {ErrLocked},
	"lock_wait_timeout_exception":          {ErrWaitTimeout},
	"lock_not_held_exception":              {ErrNotHeld},
	"session_not_found_exception":          {ErrSessionNotFound},
	"deadlock_exception":                   {ErrDeadlock},
	"lock_limit_exceeded_exception":        {ErrLimitExceeded},
	"semaphore_limit_mismatch_exception":   {ErrSemaphoreLimitMismatch},
	"lock_partition_unavailable_exception": {ErrUnavailable},
	"lock_core_panic_exception":            {ErrCorePanic},
	"version_conflict_engine_exception":    {ErrVersionConflict},
}

// Error is every error of this package: a server's error answer (Status, Type and Reason from
// Elasticsearch's error JSON) or the client's own (Status 0: Type "invalid_argument", "lost",
// "closed", "stale_token", ...). Match it with errors.Is against the sentinels (ErrLocked,
// ErrNotHeld, ...) or errors.As to read its fields.
type Error struct {
	Status int    // the HTTP status; 0 for an error of the client's own
	Type   string // error.type of the answer, or the client's kind
	Reason string // error.reason, or the client's explanation
	// Body is the answer's "error" object (fields such as holders, key, limit,
	// retry_after_ms, node_shutting_down), nil for the client's own errors.
	Body  map[string]any
	kinds []error
	cause error
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return "eslm: " + e.Reason
	}
	return fmt.Sprintf("eslm: %d %s: %s", e.Status, e.Type, e.Reason)
}

// Is reports whether the error is of the kind of sentinel target.
func (e *Error) Is(target error) bool {
	for _, k := range e.kinds {
		if k == target {
			return true
		}
	}
	return false
}

// Unwrap returns the error that caused this one (for a lost lock, the answer that showed the
// loss; for an acquire cut short by its context, the context's error), or nil.
func (e *Error) Unwrap() error { return e.cause }

// Field is a field of the answer's error object as text ("" when absent), e.g. "holders",
// "limit", "retry_after_ms", "node_shutting_down".
func (e *Error) Field(name string) string {
	v, ok := e.Body[name]
	if !ok || v == nil {
		return ""
	}
	switch t := v.(type) {
	case string:
		return t
	case json.Number:
		return t.String()
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}

// RetryAfterMs is the answer's retry_after_ms (0 when absent).
func (e *Error) RetryAfterMs() int64 {
	n, _ := strconv.ParseInt(e.Field("retry_after_ms"), 10, 64)
	return n
}

// clientError is an error of the client's own, of the given kind(s).
func clientError(typ, reason string, cause error, kinds ...error) *Error {
	return &Error{Type: typ, Reason: reason, kinds: kinds, cause: cause}
}

func invalid(format string, args ...any) *Error {
	return clientError("invalid_argument", fmt.Sprintf(format, args...), nil, ErrInvalidArgument)
}

func closedError(what string) *Error {
	return clientError("closed", what+" is closed", nil, ErrClosed)
}

// lostError is the error of a lock (session, leadership) found lost; it also matches the kinds
// of its cause (a release that found it not held is ErrLost and ErrNotHeld).
func lostError(what, reason string, cause error) *Error {
	return clientError("lost", fmt.Sprintf("%s was lost: %s", what, reason), cause, ErrLost)
}

// fromResponse is the *Error of an error answer: by error.type, else by status.
func fromResponse(status int, body []byte) *Error {
	e := &Error{Status: status}
	var envelope struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &envelope) == nil && len(envelope.Error) > 0 {
		dec := json.NewDecoder(bytes.NewReader(envelope.Error))
		dec.UseNumber()
		var obj map[string]any
		if dec.Decode(&obj) == nil {
			e.Body = obj
			e.Type, _ = obj["type"].(string)
			e.Reason, _ = obj["reason"].(string)
		} else {
			var s string
			_ = json.Unmarshal(envelope.Error, &s)
			e.Reason = s
		}
	}
	if e.Reason == "" && e.Body == nil {
		e.Reason = string(bytes.TrimSpace(body))
	}
	e.kinds = append(e.kinds, kindsByType[e.Type]...)
	switch {
	case status == 400:
		e.kinds = append(e.kinds, ErrBadRequest)
	case status == 413:
		e.kinds = append(e.kinds, ErrRequestTooLarge)
	case status == 503 && len(e.kinds) == 0:
		e.kinds = append(e.kinds, ErrUnavailable)
	}
	return e
}

// isStatus reports whether err is a server answer of that status.
func isStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}
