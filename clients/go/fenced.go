package eslm

// Fenced changes to the documents a lock protects (docs/API.md "Fenced changes"), as the Python
// client's eslm/fenced.py makes them.
//
// A fenced change is an _update that runs the plugin's update script ("lang": "eslm", "source":
// "fence") with the held lock's token and key: on the document's primary, in the same operation
// as the change, it applies the change only when the token is at least the highest that changed
// the document (kept in the document's eslm_fence), and otherwise makes the update a noop. The
// answer carries the document with its fence ("_source": true), which tells an applied change
// from a stale one: a noop with a larger fence token than ours is stale (ErrStaleToken).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"strings"
)

// FenceField is the field of a fenced document that holds its fence ({"token", "key",
// "deleted"}): the plugin writes it, a change never may.
const FenceField = "eslm_fence"

// retryOnConflict: Elasticsearch re-runs the read-script-write on the primary when another write
// of the same document got in between; 3 times is plenty (docs/API.md "Fenced changes").
const retryOnConflict = 3

// FieldOp is one field operation of a fenced change, as the plugin's fence script takes it:
// made by Inc, Append, Set or Remove. The operations of a change run in order on the document
// as its primary holds it, so a counter or a list needs no read. Field is a dotted path
// ("stats.count"). A bad operation is refused (ErrInvalidArgument) by the call it is given to,
// before anything is sent.
type FieldOp struct {
	Op    string // "inc", "append", "set" or "remove"
	Field string
	Value any // the number to add, the element to append, the value to set; nil for remove
	err   error
}

// MarshalJSON writes the operation as the script takes it (remove without a value).
func (o FieldOp) MarshalJSON() ([]byte, error) {
	m := map[string]any{"op": o.Op, "field": o.Field}
	if o.Op != "remove" {
		m["value"] = o.Value
	}
	return json.Marshal(m)
}

// number is what Inc adds.
type number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~float32 | ~float64
}

// Inc adds by to the number in field; a missing field counts as 0. Whole numbers stay whole.
func Inc[N number](field string, by N) FieldOp {
	op := FieldOp{Op: "inc", Field: field, Value: by}
	if f := float64(by); math.IsNaN(f) || math.IsInf(f, 0) {
		op.err = invalid("[value] of [inc] must be a finite number, got [%v]", by)
	}
	return op
}

// Append appends value to the list in field; a missing field is an empty list.
func Append(field string, value any) FieldOp {
	return FieldOp{Op: "append", Field: field, Value: value}
}

// Set sets field to value (nil: JSON null); objects on the way are created.
func Set(field string, value any) FieldOp { return FieldOp{Op: "set", Field: field, Value: value} }

// Remove removes field if it is there.
func Remove(field string) FieldOp { return FieldOp{Op: "remove", Field: field} }

// check is nil when op is a field operation the plugin takes (the checks the server makes that
// need no document), else ErrInvalidArgument naming what is wrong.
func (o FieldOp) check(where string) error {
	if o.err != nil {
		return o.err
	}
	switch o.Op {
	case "inc", "append", "set", "remove":
	default:
		return invalid("%s [op] must be one of [set], [inc], [append], [remove], got [%s]", where, o.Op)
	}
	if o.Field == "" || strings.HasPrefix(o.Field, ".") || strings.HasSuffix(o.Field, ".") || strings.Contains(o.Field, "..") {
		return invalid("%s [field] must be a dotted field name without an empty segment, got [%s]", where, o.Field)
	}
	if strings.Split(o.Field, ".")[0] == FenceField {
		return invalid("%s [field] must not name [%s]: the fence is the plugin's to write", where, FenceField)
	}
	if o.Op == "remove" && o.Value != nil {
		return invalid("%s [remove] takes no [value]", where)
	}
	if o.Op == "inc" && !finiteNumber(o.Value) {
		return invalid("%s [value] of [inc] must be a finite number, got [%v]", where, o.Value)
	}
	return nil
}

func finiteNumber(v any) bool {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return err == nil && !math.IsInf(f, 0)
	case nil, bool, string:
		return false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return false
}

type changeKind int

const (
	changeNone changeKind = iota
	changeDoc
	changeOps
	changeDelete
	changeModify
)

// Change is what a fenced change does to a document: Doc (a partial document, merged), Ops
// (field operations), Delete (a tombstone that keeps the fence) or Modify (a read-modify-write).
type Change struct {
	kind   changeKind
	doc    map[string]any
	ops    []FieldOp
	modify func(source map[string]any) (map[string]any, error)
}

// Doc merges partial into the document, as _update's doc merges (objects member by member,
// anything else replaced).
func Doc(partial map[string]any) Change { return Change{kind: changeDoc, doc: partial} }

// Ops runs the field operations in order on the document as its primary holds it: a counter,
// a flag or a list needs no read.
func Ops(ops ...FieldOp) Change { return Change{kind: changeOps, ops: ops} }

// Delete makes the document a tombstone, {"eslm_fence": {"token", "key", "deleted": true}},
// which keeps the fence: an older holder's later change is still refused (a plain delete's
// version is forgotten after index.gc_deletes), and a later change starts from an empty document.
func Delete() Change { return Change{kind: changeDelete} }

// Modify is a read-modify-write: a fenced read first (it raises the document's fence to the
// lock's token, so an older holder's write after it is refused and one before it is in what is
// read), then fn called with the source (nil when missing or a tombstone; fn may modify and
// return it), then what fn returns written whole with the same token, refused if a newer holder
// came in between. fn returning nil, or the source unchanged, writes nothing; an error from fn
// is returned as it is. Not for Bulk: a read-modify-write needs its read first.
func Modify(fn func(source map[string]any) (map[string]any, error)) Change {
	return Change{kind: changeModify, modify: fn}
}

// params are the script's params for c (not Modify's), checked.
func (c Change) params(where string) (map[string]any, error) {
	switch c.kind {
	case changeDoc:
		if err := checkDocument(c.doc, where); err != nil {
			return nil, err
		}
		return map[string]any{"doc": c.doc}, nil
	case changeOps:
		for i, op := range c.ops {
			if err := op.check(fmt.Sprintf("%s entry %d:", where, i)); err != nil {
				return nil, err
			}
		}
		ops := c.ops
		if ops == nil {
			ops = []FieldOp{}
		}
		return map[string]any{"ops": ops}, nil
	case changeDelete:
		return map[string]any{"delete": true}, nil
	case changeModify:
		if c.modify == nil {
			return nil, invalid("%s Modify needs a function, got nil", where)
		}
		return nil, nil
	default:
		return nil, invalid("%s an empty Change: use Doc, Ops, Delete or Modify", where)
	}
}

// checkDocument: a document a change may write is an object that does not set the fence.
func checkDocument(doc map[string]any, where string) error {
	if doc == nil {
		return invalid("%s must be a document, got nil", where)
	}
	if _, ok := doc[FenceField]; ok {
		return invalid("%s must not set [%s]: the fence is the plugin's to write", where, FenceField)
	}
	return nil
}

func checkNames(index, id, where string) error {
	if index == "" || id == "" {
		return invalid("%s[index] and [id] must not be empty", where)
	}
	return nil
}

// FencedChange is one change of Bulk: Change is Doc, Ops or Delete (not Modify).
type FencedChange struct {
	Index  string
	ID     string
	Change Change
}

// Outcome is how one change of Bulk ended.
type Outcome string

const (
	// OutcomeApplied: the change is in the document (or left it as it was).
	OutcomeApplied Outcome = "applied"
	// OutcomeStale: a newer holder had changed the document; nothing written (Err is a
	// *StaleTokenError).
	OutcomeStale Outcome = "stale"
	// OutcomeFailed: the server refused the change for another reason (Err says why, e.g.
	// ErrBadRequest for an inc of text); nothing written.
	OutcomeFailed Outcome = "failed"
)

// FencedResult is one item of Bulk's answer: Source is the document as it now stands, without
// its fence (nil for a tombstone, or when not applied); Fence the document's fence token (the
// newer holder's when stale; 0 when failed); Err the item's error when not applied.
type FencedResult struct {
	Index   string
	ID      string
	Outcome Outcome
	Source  map[string]any
	Fence   uint64
	Err     error
}

// StaleTokenError is the error of a fenced write or change refused because a later holder of the
// lock got there first: nothing of this holder's was written. It matches ErrStaleToken and
// ErrVersionConflict (errors.Is), and unwraps to the *Error (Status 409 from Elasticsearch for a
// fenced write; Status 200 and Type "stale_token" for a fenced change that the plugin's script
// made a noop).
type StaleTokenError struct {
	Err   *Error
	Fence uint64 // the document's fence (or version): a later holder's token; 0 when not known
	Token uint64 // the token of the lock that sent it
}

func (e *StaleTokenError) Error() string { return e.Err.Error() }

// Unwrap returns the *Error, which matches ErrStaleToken and ErrVersionConflict.
func (e *StaleTokenError) Unwrap() error { return e.Err }

// fence is the lock a change is fenced by: its key and fencing token.
type fence struct {
	key   string
	token uint64
}

func updateBody(f fence, params map[string]any) map[string]any {
	p := map[string]any{"token": f.token, "key": f.key}
	for k, v := range params {
		p[k] = v
	}
	return map[string]any{
		"script":          map[string]any{"lang": "eslm", "source": "fence", "params": p},
		"scripted_upsert": true,
		"upsert":          map[string]any{},
		"_source":         true,
	}
}

// fencedCall is one fenced _update: the document as it now stands (nil for a tombstone), or the
// error (a stale change a *StaleTokenError). A 503 is retried within ctx's deadline, else the
// client's retryFor.
func (c *Client) fencedCall(ctx context.Context, index, id string, f fence, params map[string]any) (map[string]any, error) {
	path := "/" + url.PathEscape(index) + "/_update/" + url.PathEscape(id) + fmt.Sprintf("?retry_on_conflict=%d", retryOnConflict)
	data, err := c.call(ctx, "POST", path, updateBody(f, params))
	if err != nil {
		return nil, explained(err)
	}
	r := outcome(index, id, f, data)
	return r.Source, r.Err
}

// outcome is how a fenced update answered (docs/API.md "Fenced changes", how to read the
// answer): a noop with a fence token larger than ours is stale; anything else applied.
func outcome(index, id string, f fence, data []byte) FencedResult {
	r := FencedResult{Index: index, ID: id, Outcome: OutcomeFailed}
	var answer struct {
		Result string `json:"result"`
		Get    *struct {
			Source json.RawMessage `json:"_source"`
		} `json:"get"`
	}
	var fenced struct {
		Fence *struct {
			Token   *uint64 `json:"token"`
			Key     string  `json:"key"`
			Deleted bool    `json:"deleted"`
		} `json:"eslm_fence"`
	}
	var source map[string]any
	if json.Unmarshal(data, &answer) != nil || answer.Get == nil || json.Unmarshal(answer.Get.Source, &fenced) != nil ||
		fenced.Fence == nil || fenced.Fence.Token == nil || json.Unmarshal(answer.Get.Source, &source) != nil {
		r.Err = clientError("bad_answer", fmt.Sprintf("fenced change of [%s/%s] answered without the document's fence: %s",
			index, id, truncate(data)), nil, ErrConnection)
		return r
	}
	r.Fence = *fenced.Fence.Token
	if answer.Result == "noop" && r.Fence > f.token {
		r.Outcome = OutcomeStale
		r.Err = &StaleTokenError{Fence: r.Fence, Token: f.token, Err: &Error{Status: 200, Type: "stale_token",
			Reason: fmt.Sprintf("fenced change of [%s/%s] refused: the document's fence is token [%d] of [%s], "+
				"this lock's token is [%d]: a newer holder has changed it", index, id, r.Fence, fenced.Fence.Key, f.token),
			kinds: []error{ErrStaleToken, ErrVersionConflict}}}
		return r
	}
	r.Outcome = OutcomeApplied
	if !fenced.Fence.Deleted {
		delete(source, FenceField)
		r.Source = source
	}
	return r
}

// explained is a refused fenced change with the plugin's reason: Elasticsearch's own is "failed
// to execute script", the plugin's ("[ops] entry 0: ...") is its caused_by.
func explained(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	cause, _ := e.Body["caused_by"].(map[string]any)
	reason, _ := cause["reason"].(string)
	if reason == "" || strings.Contains(e.Reason, reason) {
		return err
	}
	c := *e
	c.Reason = e.Reason + ": " + reason
	return &c
}

// fencedBulk sends changes (checked) in one _bulk and answers a FencedResult per item.
func (c *Client) fencedBulk(ctx context.Context, changes []FencedChange, f fence) ([]FencedResult, error) {
	var body bytes.Buffer
	for _, ch := range changes {
		params, _ := ch.Change.params("")
		action := map[string]any{"update": map[string]any{"_index": ch.Index, "_id": ch.ID, "retry_on_conflict": retryOnConflict}}
		for _, line := range []any{action, updateBody(f, params)} {
			b, err := json.Marshal(line)
			if err != nil {
				return nil, invalid("a change cannot be written as JSON: %v", err)
			}
			body.Write(b)
			body.WriteByte('\n')
		}
	}
	data, err := c.retrying(ctx, c.budget(ctx), "POST /_bulk", func() ([]byte, error) {
		return c.sendRaw(ctx, "POST", "/_bulk", "application/x-ndjson", body.Bytes())
	})
	if err != nil {
		return nil, explained(err)
	}
	var answer struct {
		Items []map[string]json.RawMessage `json:"items"`
	}
	if err := decode(data, &answer); err != nil {
		return nil, err
	}
	results := make([]FencedResult, len(changes))
	for i, ch := range changes {
		var raw json.RawMessage
		if i < len(answer.Items) {
			raw = answer.Items[i]["update"]
		}
		var item struct {
			Status int             `json:"status"`
			Error  json.RawMessage `json:"error"`
		}
		if raw == nil || json.Unmarshal(raw, &item) != nil {
			results[i] = FencedResult{Index: ch.Index, ID: ch.ID, Outcome: OutcomeFailed,
				Err: clientError("bad_answer", fmt.Sprintf("_bulk answered no item for [%s/%s]", ch.Index, ch.ID), nil, ErrConnection)}
			continue
		}
		if item.Error != nil {
			envelope, _ := json.Marshal(map[string]json.RawMessage{"error": item.Error})
			results[i] = FencedResult{Index: ch.Index, ID: ch.ID, Outcome: OutcomeFailed,
				Err: explained(fromResponse(item.Status, envelope))}
			continue
		}
		results[i] = outcome(ch.Index, ch.ID, f, raw)
	}
	return results, nil
}

// fenceNow is the key and token of the grant held now; ErrNotHeld when the Mutex holds nothing,
// the loss (ErrLost) without sending when it is known lost.
func (m *Mutex) fenceNow() (*hold, fence, error) {
	h, err := m.heldNow()
	if err != nil {
		return nil, fence{}, err
	}
	if err := h.err(); err != nil {
		return nil, fence{}, err
	}
	return h, fence{key: h.key, token: h.token}, nil
}

// Update changes document index/_doc/id fenced by this Mutex's token (docs/API.md "Fenced
// changes"): Elasticsearch applies the change only if no later holder of the lock has changed
// the document, checked and applied in one operation on its primary. change is Doc (a partial
// document), Ops (field operations: Inc, Append, Set, Remove), Delete, or Modify (a
// read-modify-write: a fenced read, then the function's result written with the same token). A
// missing document is created.
//
// It answers the document as it now stands, without its fence (nil for a tombstone). Errors: a
// *StaleTokenError (ErrStaleToken) when a later holder has changed the document, nothing written;
// the loss (ErrLost) without sending anything when the lock is known lost (also between
// Modify's read and its write); ErrInvalidArgument before sending for a change it cannot send;
// ErrBadRequest for one the document refuses (an inc of text), the plugin's reason in the
// message; ErrNotHeld when the Mutex holds nothing.
func (m *Mutex) Update(ctx context.Context, index, id string, change Change) (map[string]any, error) {
	if err := checkNames(index, id, ""); err != nil {
		return nil, err
	}
	params, err := change.params("[change]")
	if err != nil {
		return nil, err
	}
	h, f, err := m.fenceNow()
	if err != nil {
		return nil, err
	}
	if change.kind != changeModify {
		return h.c.fencedCall(ctx, index, id, f, params)
	}
	current, err := h.c.fencedCall(ctx, index, id, f, map[string]any{})
	if err != nil {
		return nil, err
	}
	before, _ := copyOf(current)
	changed, err := change.modify(current)
	if err != nil {
		return nil, err
	}
	if changed == nil || reflect.DeepEqual(changed, before) {
		return before, nil
	}
	if err := checkDocument(changed, "the change's result"); err != nil {
		return nil, err
	}
	if err := h.err(); err != nil {
		return nil, err
	}
	return h.c.fencedCall(ctx, index, id, f, map[string]any{"replace": changed})
}

// Read is the fenced read of index/_doc/id: it raises the document's fence to this Mutex's
// token (from then on an older holder's change is refused, and one that landed before is in
// what is read) and answers its source without the fence, nil when missing or a tombstone (a
// missing document becomes a tombstone). Errors as Update's.
func (m *Mutex) Read(ctx context.Context, index, id string) (map[string]any, error) {
	if err := checkNames(index, id, ""); err != nil {
		return nil, err
	}
	h, f, err := m.fenceNow()
	if err != nil {
		return nil, err
	}
	return h.c.fencedCall(ctx, index, id, f, map[string]any{})
}

// Delete is the fenced delete of index/_doc/id (Update with Delete()): the document becomes a
// tombstone that keeps the fence. Errors as Update's.
func (m *Mutex) Delete(ctx context.Context, index, id string) error {
	_, err := m.Update(ctx, index, id, Delete())
	return err
}

// Bulk sends many fenced changes in one _bulk, each fenced on its own by this Mutex's token:
// each Change is Doc, Ops or Delete (Modify is refused: use Update for a read-modify-write). It
// answers one FencedResult per change, in order: OutcomeApplied, OutcomeStale or OutcomeFailed,
// with the document as it now stands or the item's error, and never an error for an item. Its
// error is ErrInvalidArgument (nothing sent) for a change it cannot send, the loss (ErrLost)
// without sending when the lock is known lost, or the error of the request as a whole. An
// empty list sends nothing.
func (m *Mutex) Bulk(ctx context.Context, changes []FencedChange) ([]FencedResult, error) {
	for i, ch := range changes {
		where := fmt.Sprintf("[changes] item %d: ", i)
		if err := checkNames(ch.Index, ch.ID, where); err != nil {
			return nil, err
		}
		if ch.Change.kind == changeModify {
			return nil, invalid("%sa Modify needs its read first: use Update for a read-modify-write", where)
		}
		if _, err := ch.Change.params(where + "[change]"); err != nil {
			return nil, err
		}
	}
	h, f, err := m.fenceNow()
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return []FencedResult{}, nil
	}
	return h.c.fencedBulk(ctx, changes, f)
}

// Update is Mutex.Update fenced by this leadership's term.
func (e *Election) Update(ctx context.Context, index, id string, change Change) (map[string]any, error) {
	return e.m.Update(ctx, index, id, change)
}

// Read is Mutex.Read fenced by this leadership's term.
func (e *Election) Read(ctx context.Context, index, id string) (map[string]any, error) {
	return e.m.Read(ctx, index, id)
}

// Delete is Mutex.Delete fenced by this leadership's term.
func (e *Election) Delete(ctx context.Context, index, id string) error {
	return e.m.Delete(ctx, index, id)
}

// Bulk is Mutex.Bulk fenced by this leadership's term.
func (e *Election) Bulk(ctx context.Context, changes []FencedChange) ([]FencedResult, error) {
	return e.m.Bulk(ctx, changes)
}
