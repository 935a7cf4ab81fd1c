package eslm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
)

var currentVersion = regexp.MustCompile(`current version \[(\d+)\]`)

// WriteResult is Elasticsearch's answer to a document write.
type WriteResult struct {
	Index       string `json:"_index"`
	ID          string `json:"_id"`
	Version     int64  `json:"_version"`
	Result      string `json:"result"`
	SeqNo       int64  `json:"_seq_no"`
	PrimaryTerm int64  `json:"_primary_term"`
}

func docPath(index, id string, query url.Values) string {
	p := "/" + url.PathEscape(index) + "/_doc/" + url.PathEscape(id)
	if len(query) > 0 {
		p += "?" + query.Encode()
	}
	return p
}

// FencedIndex writes doc (anything encoding/json writes as an object) as index/_doc/id with
// token as its external version (version_type=external_gte: docs/API.md "The fencing
// recipe"): accepted while no write with a larger token reached the document, refused with
// ErrStaleToken (also ErrVersionConflict; a *StaleTokenError) once one did. Every writer of the document must
// fence its writes this way. A 503 is retried within ctx's deadline, else the client's retryFor.
func (c *Client) FencedIndex(ctx context.Context, index, id string, token uint64, doc any) (*WriteResult, error) {
	if index == "" || id == "" {
		return nil, invalid("[index] and [id] must not be empty")
	}
	if token == 0 {
		return nil, invalid("[token] must be a fencing token (> 0)")
	}
	q := url.Values{"version": {fmt.Sprint(token)}, "version_type": {"external_gte"}}
	data, err := c.call(ctx, "PUT", docPath(index, id, q), doc)
	if err != nil {
		if errors.Is(err, ErrVersionConflict) {
			var e *Error
			errors.As(err, &e)
			// Elasticsearch names the document's version: "current version [N] is higher ...".
			var current uint64
			if m := currentVersion.FindStringSubmatch(e.Reason); m != nil {
				current, _ = strconv.ParseUint(m[1], 10, 64)
			}
			return nil, &StaleTokenError{Fence: current, Token: token, Err: &Error{Status: e.Status, Type: e.Type, Body: e.Body,
				Reason: fmt.Sprintf("write of [%s/%s] with fencing token [%d] refused: %s", index, id, token, e.Reason),
				kinds:  []error{ErrStaleToken, ErrVersionConflict}, cause: err}}
		}
		return nil, err
	}
	var w WriteResult
	if err := decode(data, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// Index is FencedIndex with this Mutex's token: the write the lock protects. It answers the
// loss (ErrLost) without writing when the lock is already known lost, and ErrNotHeld when the
// Mutex holds nothing.
func (m *Mutex) Index(ctx context.Context, index, id string, doc any) (*WriteResult, error) {
	h, err := m.heldNow()
	if err != nil {
		return nil, err
	}
	if err := h.err(); err != nil {
		return nil, err
	}
	return h.c.FencedIndex(ctx, index, id, h.token, doc)
}

// Index is FencedIndex with this leadership's term (as Mutex.Index).
func (e *Election) Index(ctx context.Context, index, id string, doc any) (*WriteResult, error) {
	return e.m.Index(ctx, index, id, doc)
}

// DefaultUpdateRetries is how many times OptimisticUpdate reads and applies again after losing
// a race, unless told otherwise.
const DefaultUpdateRetries = 10

// OptimisticUpdate changes document index/_doc/id without a lock (docs/API.md "Fenced writes
// and optimistic updates"): it reads the document (a realtime GET), calls change with its
// source (nil when there is none; change may modify and return it) and writes what change
// returns only if nobody wrote in between (if_seq_no and if_primary_term; a missing document
// is created only if nobody created it). Losing that race, it reads and applies again after a
// jittered backoff, at most retries times more (negative: DefaultUpdateRetries), then answers
// ErrUpdateConflict. change returning nil, or the source unchanged, writes nothing; an error
// from change is returned as it is. Answers the source as it now stands.
func (c *Client) OptimisticUpdate(ctx context.Context, index, id string, retries int,
	change func(source map[string]any) (map[string]any, error)) (map[string]any, error) {
	if index == "" || id == "" {
		return nil, invalid("[index] and [id] must not be empty")
	}
	if change == nil {
		return nil, invalid("[change] must not be nil")
	}
	if retries < 0 {
		retries = DefaultUpdateRetries
	}
	for attempt := 0; ; attempt++ {
		source, cond, err := c.readForUpdate(ctx, index, id)
		if err != nil {
			return nil, err
		}
		before, _ := copyOf(source)
		changed, err := change(source)
		if err != nil {
			return nil, err
		}
		if changed == nil || reflect.DeepEqual(changed, before) {
			return before, nil
		}
		_, err = c.call(ctx, "PUT", docPath(index, id, cond), changed)
		if err == nil {
			return changed, nil
		}
		if !errors.Is(err, ErrVersionConflict) {
			return nil, err
		}
		if attempt == retries {
			return nil, clientError("update_conflict", fmt.Sprintf("update of [%s/%s] lost its race %d times",
				index, id, retries+1), err, ErrUpdateConflict, ErrVersionConflict)
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return nil, err
		}
	}
}

// readForUpdate is the document's source and the condition a write of it needs.
func (c *Client) readForUpdate(ctx context.Context, index, id string) (map[string]any, url.Values, error) {
	data, err := c.call(ctx, "GET", docPath(index, id, nil), nil)
	if isStatus(err, 404) {
		return nil, url.Values{"op_type": {"create"}}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var got struct {
		Source      map[string]any `json:"_source"`
		SeqNo       int64          `json:"_seq_no"`
		PrimaryTerm int64          `json:"_primary_term"`
	}
	if err := decode(data, &got); err != nil {
		return nil, nil, err
	}
	return got.Source, url.Values{"if_seq_no": {fmt.Sprint(got.SeqNo)}, "if_primary_term": {fmt.Sprint(got.PrimaryTerm)}}, nil
}

// copyOf is a deep copy of a JSON object (through JSON).
func copyOf(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = json.Unmarshal(b, &out)
	return out, err
}

// ForceRelease evicts every holder of key (POST /_locks/{key}/_force_release, an
// administrator's privilege): their tokens are dead, and their clients find their locks lost.
// reason is logged by the node ("" for none). ErrNotHeld when nobody holds it.
func (c *Client) ForceRelease(ctx context.Context, key, reason string) error {
	if err := checkName(key, "key"); err != nil {
		return err
	}
	body := map[string]any{"scope": scopeKey}
	if reason != "" {
		body["reason"] = reason
	}
	_, err := c.call(ctx, "POST", actionPath(scopeKey, key, "_force_release"), body)
	return err
}
