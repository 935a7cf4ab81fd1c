package eslm_test

// Fenced changes (docs/API.md "Fenced changes") and the downgrade of a write lock, on the test
// node: partial documents, field operations, reads, deletes and bulk through the plugin's fence
// script, the two-holder interleaving that the plain recipe loses an increment in, the refusals
// made before anything is sent, and RWMutex.Downgrade letting a queued reader in while a queued
// writer waits.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v9"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

const fencedIndex = "go-client-fenced"

// recordingTransport is the official client, counting the requests sent through it (the real
// transport still sends them).
type recordingTransport struct {
	es   *elasticsearch.Client
	mu   sync.Mutex
	sent []string
}

func (c *recordingTransport) Perform(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.sent = append(c.sent, r.Method+" "+r.URL.Path)
	c.mu.Unlock()
	return c.es.Perform(r)
}

// all are the requests sent so far.
func (c *recordingTransport) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string{}, c.sent...)
}

// count is how many requests sent so far contain what.
func (c *recordingTransport) count(what string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.sent {
		if strings.Contains(s, what) {
			n++
		}
	}
	return n
}

func countingClient(t *testing.T, opts ...eslm.ClientOption) (*eslm.Client, *recordingTransport) {
	t.Helper()
	tr := &recordingTransport{es: newES(t)}
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := eslm.NewClient(tr, append([]eslm.ClientOption{eslm.WithLogger(logger)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c, tr
}

// stored is the document as Elasticsearch has it (a realtime GET), fence included; nil if missing.
func stored(t *testing.T, id string) map[string]any {
	t.Helper()
	status, body := rest(t, "GET", "/"+fencedIndex+"/_doc/"+id, nil)
	if status == 404 {
		return nil
	}
	return body["_source"].(map[string]any)
}

func fenceToken(t *testing.T, doc map[string]any) uint64 {
	t.Helper()
	fence := doc["eslm_fence"].(map[string]any)
	return tokenOf(map[string]any{"fencing_token": fence["token"]})
}

func locked(t *testing.T, ctx context.Context, m *eslm.Mutex) *eslm.Mutex {
	t.Helper()
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFencedChangesMergeOperateReadAndDelete(t *testing.T) {
	c, _ := newClient(t)
	ctx := ctxFor(t, 60*time.Second)
	key, id := unique(t), unique(t)
	m := locked(t, ctx, eslm.NewMutex(c, key))
	check := func(what string, got map[string]any, err error, want map[string]any) {
		t.Helper()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %v, %v; want %v", what, got, err, want)
		}
	}
	doc, err := m.Read(ctx, fencedIndex, id)
	check("a missing document reads as none", doc, err, nil)
	doc, err = m.Update(ctx, fencedIndex, id, eslm.Doc(map[string]any{"status": "packed", "items": 2}))
	check("a partial document", doc, err, map[string]any{"status": "packed", "items": 2.0})
	doc, err = m.Update(ctx, fencedIndex, id, eslm.Ops(eslm.Inc("items", 1), eslm.Inc("stats.weight", 2.5),
		eslm.Append("log", "packed"), eslm.Set("owner.name", "ann"), eslm.Remove("status")))
	check("field operations", doc, err, map[string]any{"items": 3.0, "stats": map[string]any{"weight": 2.5},
		"log": []any{"packed"}, "owner": map[string]any{"name": "ann"}})
	twice, err := m.Update(ctx, fencedIndex, id, eslm.Modify(func(src map[string]any) (map[string]any, error) {
		src["items"] = src["items"].(float64) * 2
		return src, nil
	}))
	if err != nil || twice["items"] != 6.0 {
		t.Fatalf("a read-modify-write: %v %v", twice, err)
	}
	doc, err = m.Read(ctx, fencedIndex, id)
	check("the fenced read", doc, err, twice)
	raw := stored(t, id)
	if fenceToken(t, raw) != m.Token() || raw["eslm_fence"].(map[string]any)["key"] != key {
		t.Fatalf("the fence is the lock's token and key: %v (token %d)", raw, m.Token())
	}
	_, before := rest(t, "GET", "/"+fencedIndex+"/_doc/"+id, nil)
	doc, err = m.Update(ctx, fencedIndex, id, eslm.Modify(func(map[string]any) (map[string]any, error) { return nil, nil }))
	check("a Modify answering nil writes nothing", doc, err, twice)
	if _, after := rest(t, "GET", "/"+fencedIndex+"/_doc/"+id, nil); after["_version"] != before["_version"] {
		t.Fatalf("a Modify answering nil wrote: version %v, then %v", before["_version"], after["_version"])
	}
	if err := m.Delete(ctx, fencedIndex, id); err != nil {
		t.Fatal(err)
	}
	doc, err = m.Read(ctx, fencedIndex, id)
	check("a tombstone reads as none", doc, err, nil)
	if stored(t, id)["eslm_fence"].(map[string]any)["deleted"] != true {
		t.Fatalf("the tombstone keeps the fence: %v", stored(t, id))
	}
	doc, err = m.Update(ctx, fencedIndex, id, eslm.Ops(eslm.Inc("items", 1)))
	check("a change after the delete starts from nothing", doc, err, map[string]any{"items": 1.0})
	if _, err := m.Update(ctx, fencedIndex, id, eslm.Doc(map[string]any{"label": "many"})); err != nil {
		t.Fatal(err)
	}
	_, err = m.Update(ctx, fencedIndex, id, eslm.Ops(eslm.Inc("items", 1), eslm.Inc("label", 1)))
	var e *eslm.Error
	if !errors.Is(err, eslm.ErrBadRequest) || !errors.As(err, &e) || e.Status != 400 || !strings.Contains(err.Error(), "inc") {
		t.Fatalf("an inc of text: want ErrBadRequest with the plugin's reason, got %v", err)
	}
	doc, err = m.Read(ctx, fencedIndex, id)
	check("a refused change wrote nothing", doc, err, map[string]any{"items": 1.0, "label": "many"})
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestAStaleHoldersReadModifyWriteIsRefusedAndTheIncrementKept(t *testing.T) {
	// The first holder never learns it lost: no watchdog, no loss watch (a paused process).
	paused, _ := newClient(t, eslm.WithoutLossWatch())
	c, _ := newClient(t)
	ctx := ctxFor(t, 60*time.Second)
	key, id := unique(t), unique(t)
	first := locked(t, ctx, eslm.NewMutex(paused, key, eslm.WithLease(2*time.Second), eslm.WithoutKeepAlive()))
	if _, err := first.Update(ctx, fencedIndex, id, eslm.Ops(eslm.Inc("n", 10))); err != nil {
		t.Fatal(err)
	}
	var second *eslm.Mutex
	_, err := first.Update(ctx, fencedIndex, id, eslm.Modify(func(src map[string]any) (map[string]any, error) {
		// Between the first's fenced read and its write: its lease runs out, the second takes the
		// key and increments.
		if src["n"] != 10.0 {
			t.Fatalf("the first's fenced read: %v", src)
		}
		awaitTrue(t, 20*time.Second, "the first's lease ran out on the server", func() bool { return len(holders(t, key)) == 0 })
		second = locked(t, ctx, eslm.NewMutex(c, key))
		if doc, err := second.Update(ctx, fencedIndex, id, eslm.Ops(eslm.Inc("n", 1))); err != nil || doc["n"] != 11.0 {
			t.Fatalf("the second's increment: %v %v", doc, err)
		}
		src["n"] = src["n"].(float64) + 1
		src["by"] = "first"
		return src, nil
	}))
	var stale *eslm.StaleTokenError
	if !errors.Is(err, eslm.ErrStaleToken) || !errors.Is(err, eslm.ErrVersionConflict) || !errors.As(err, &stale) {
		t.Fatalf("the stale holder's write: want ErrStaleToken, got %v", err)
	}
	if stale.Fence != second.Token() || stale.Token != first.Token() || stale.Err.Type != "stale_token" {
		t.Fatalf("the stale error names the fence %d (want %d) and the token %d (want %d): %v",
			stale.Fence, second.Token(), stale.Token, first.Token(), err)
	}
	doc := stored(t, id)
	if doc["n"] != json.Number("11") || doc["by"] != nil || fenceToken(t, doc) != second.Token() {
		t.Fatalf("the second holder's increment is kept, nothing of the first's landed: %v", doc)
	}
	if _, err := first.Update(ctx, fencedIndex, id, eslm.Doc(map[string]any{"by": "first"})); !errors.Is(err, eslm.ErrStaleToken) {
		t.Fatalf("a partial document of the stale holder: %v", err)
	}
	if _, err := first.Read(ctx, fencedIndex, id); !errors.Is(err, eslm.ErrStaleToken) {
		t.Fatalf("a fenced read of the stale holder: %v", err)
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestFencedBulkAnswersEachItem(t *testing.T) {
	paused, _ := newClient(t, eslm.WithoutLossWatch())
	c, sent := countingClient(t)
	ctx := ctxFor(t, 60*time.Second)
	key := unique(t)
	x, y, z, gone := unique(t)+"-x", unique(t)+"-y", unique(t)+"-z", unique(t)+"-gone"
	old := locked(t, ctx, eslm.NewMutex(paused, key, eslm.WithLease(10*time.Second), eslm.WithoutKeepAlive()))
	if _, err := old.Update(ctx, fencedIndex, z, eslm.Doc(map[string]any{"label": "text"})); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Update(ctx, fencedIndex, gone, eslm.Doc(map[string]any{"n": 1})); err != nil {
		t.Fatal(err)
	}
	forceRelease(t, key, "key") // a pause past its lease, as far as the others can tell
	next := locked(t, ctx, eslm.NewMutex(c, key))
	if _, err := next.Update(ctx, fencedIndex, x, eslm.Ops(eslm.Inc("n", 1))); err != nil {
		t.Fatal(err)
	}
	if results, err := next.Bulk(ctx, nil); err != nil || len(results) != 0 || sent.count("_bulk") != 0 {
		t.Fatalf("an empty bulk sends nothing: %v %v", results, err)
	}
	results, err := old.Bulk(ctx, []eslm.FencedChange{
		{Index: fencedIndex, ID: x, Change: eslm.Ops(eslm.Inc("n", 1))},
		{Index: fencedIndex, ID: y, Change: eslm.Doc(map[string]any{"status": "new"})},
		{Index: fencedIndex, ID: z, Change: eslm.Ops(eslm.Inc("label", 1))},
		{Index: fencedIndex, ID: gone, Change: eslm.Delete()},
	})
	if err != nil || len(results) != 4 {
		t.Fatalf("bulk: %v %v", results, err)
	}
	var outcomes []eslm.Outcome
	for _, r := range results {
		outcomes = append(outcomes, r.Outcome)
	}
	if want := []eslm.Outcome{eslm.OutcomeStale, eslm.OutcomeApplied, eslm.OutcomeFailed, eslm.OutcomeApplied}; !reflect.DeepEqual(outcomes, want) {
		t.Fatalf("outcomes %v, want %v: %+v", outcomes, want, results)
	}
	var stale *eslm.StaleTokenError
	if r := results[0]; !errors.As(r.Err, &stale) || stale.Fence != next.Token() || r.Fence != next.Token() {
		t.Fatalf("the stale item: %+v", r)
	}
	if r := results[1]; r.Err != nil || r.Fence != old.Token() || !reflect.DeepEqual(r.Source, map[string]any{"status": "new"}) {
		t.Fatalf("the applied item: %+v", r)
	}
	if r := results[2]; !errors.Is(r.Err, eslm.ErrBadRequest) {
		t.Fatalf("the failed item: %+v", r)
	}
	if r := results[3]; r.Err != nil || r.Source != nil {
		t.Fatalf("the deleted item: %+v", r)
	}
	if stored(t, x)["n"] != json.Number("1") || stored(t, z)["label"] != "text" {
		t.Fatalf("the stale and the failed items wrote nothing: %v %v", stored(t, x), stored(t, z))
	}
	if err := next.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestFencedChangesRefusedBeforeSendingAndUnderALostLock(t *testing.T) {
	c, sent := countingClient(t)
	ctx := ctxFor(t, 60*time.Second)
	m := eslm.NewMutex(c, unique(t), eslm.WithLease(10*time.Second))
	if _, err := m.Update(ctx, fencedIndex, "d", eslm.Doc(map[string]any{"a": 1})); !errors.Is(err, eslm.ErrNotHeld) {
		t.Fatalf("a Mutex that holds nothing: %v", err)
	}
	locked(t, ctx, m)
	update := func(change eslm.Change) func() error {
		return func() error { _, err := m.Update(ctx, fencedIndex, "d", change); return err }
	}
	bulk := func(changes ...eslm.FencedChange) func() error {
		return func() error { _, err := m.Bulk(ctx, changes); return err }
	}
	bad := map[string]func() error{
		"a document setting the fence": update(eslm.Doc(map[string]any{"eslm_fence": map[string]any{"token": 1}})),
		"a nil document":               update(eslm.Doc(nil)),
		"an inc of infinity":           update(eslm.Ops(eslm.Inc("n", math.Inf(1)))),
		"an inc of text":               update(eslm.Ops(eslm.FieldOp{Op: "inc", Field: "n", Value: "x"})),
		"an unknown operation":         update(eslm.Ops(eslm.FieldOp{Op: "mul", Field: "n", Value: 2})),
		"an operation on the fence":    update(eslm.Ops(eslm.Set("eslm_fence.token", 1))),
		"an empty segment":             update(eslm.Ops(eslm.Set("a..b", 1))),
		"a remove with a value":        update(eslm.Ops(eslm.FieldOp{Op: "remove", Field: "a", Value: 1})),
		"an empty change":              update(eslm.Change{}),
		"a nil Modify":                 update(eslm.Modify(nil)),
		"an empty index": func() error {
			_, err := m.Update(ctx, "", "d", eslm.Doc(map[string]any{"a": 1}))
			return err
		},
		"a Modify in a bulk":        bulk(eslm.FencedChange{Index: fencedIndex, ID: "d", Change: eslm.Modify(func(d map[string]any) (map[string]any, error) { return d, nil })}),
		"a bulk item without an id": bulk(eslm.FencedChange{Index: fencedIndex, Change: eslm.Doc(map[string]any{"a": 1})}),
	}
	for what, call := range bad {
		if err := call(); !errors.Is(err, eslm.ErrInvalidArgument) {
			t.Fatalf("%s: want ErrInvalidArgument, got %v", what, err)
		}
	}
	if n := sent.count("_update") + sent.count("_bulk"); n != 0 {
		t.Fatalf("%d fenced requests sent for bad changes", n)
	}
	_, err := m.Update(ctx, fencedIndex, unique(t), eslm.Modify(func(map[string]any) (map[string]any, error) {
		return map[string]any{"eslm_fence": 1}, nil
	}))
	if !errors.Is(err, eslm.ErrInvalidArgument) || sent.count("_update") != 1 {
		t.Fatalf("a Modify whose result sets the fence: %v; %d sent (only the fenced read)", err, sent.count("_update"))
	}
	forceRelease(t, m.Key(), "key")
	if ok, _ := closedWithin(m.Done(), 10*time.Second); !ok {
		t.Fatal("the force-released lock was not signalled lost")
	}
	before := len(sent.all())
	lost := map[string]func() error{
		"Update": update(eslm.Ops(eslm.Inc("n", 1))),
		"Read":   func() error { _, err := m.Read(ctx, fencedIndex, "d"); return err },
		"Delete": func() error { return m.Delete(ctx, fencedIndex, "d") },
		"Bulk":   bulk(eslm.FencedChange{Index: fencedIndex, ID: "d", Change: eslm.Doc(map[string]any{"a": 1})}),
		"Modify": update(eslm.Modify(func(d map[string]any) (map[string]any, error) { return d, nil })),
	}
	for what, call := range lost {
		if err := call(); !errors.Is(err, eslm.ErrLost) {
			t.Fatalf("%s of a lock known lost: want ErrLost, got %v", what, err)
		}
	}
	if now := sent.all(); len(now) != before {
		t.Fatalf("sent under a lock known lost: %v", now[before:])
	}
}

func TestRWMutexDowngradeLetsAQueuedReaderInWhileAWriterWaits(t *testing.T) {
	c, _ := newClient(t)
	ctx := ctxFor(t, 60*time.Second)
	key := unique(t)
	rw := eslm.NewRWMutex(c, key, eslm.WithLease(10*time.Second))
	if err := rw.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	token := rw.Writer().Token()
	other := eslm.NewRWMutex(c, key, eslm.WithLease(10*time.Second))
	reading := make(chan error, 1)
	go func() { reading <- other.RLock(ctx) }()
	awaitTrue(t, 20*time.Second, "the reader queued", func() bool { return waiters(t, key) == 1 })
	writer := eslm.NewMutex(c, key, eslm.WithLease(10*time.Second))
	writing := make(chan error, 1)
	go func() { writing <- writer.Lock(ctx) }()
	awaitTrue(t, 20*time.Second, "the writer queued behind the reader", func() bool { return waiters(t, key) == 2 })
	if err := rw.Downgrade(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-reading:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the queued reader was not let in by the downgrade")
	}
	var modes []string
	tokens := map[uint64]bool{}
	for _, h := range holders(t, key) {
		modes = append(modes, h["mode"].(string))
		tokens[tokenOf(h)] = true
	}
	if !reflect.DeepEqual(modes, []string{"shared", "shared"}) || !tokens[token] {
		t.Fatalf("two readers, the downgraded one with its token %d: %v", token, holders(t, key))
	}
	if waiters(t, key) != 1 || len(writing) != 0 {
		t.Fatal("the queued writer should still wait")
	}
	readers := rw.Readers()
	if len(readers) != 1 || readers[0].Token() != token || !readers[0].IsOwner() || rw.Writer().IsOwner() {
		t.Fatalf("the downgraded grant is a read grant of the RWMutex: %v", readers)
	}
	if err := readers[0].Renew(ctx, 0); err != nil {
		t.Fatalf("the downgraded grant renews: %v", err)
	}
	if err := rw.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-writing:
		if err != nil || writer.Token() <= token {
			t.Fatalf("the writer, once the readers left: %v (token %d)", err, writer.Token())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the writer was not granted once the readers left")
	}
	if err := writer.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestDowngradeOfNothingOrOfALostLock(t *testing.T) {
	c, _ := newClient(t, eslm.WithoutLossWatch())
	ctx := ctxFor(t, 30*time.Second)
	key := unique(t)
	rw := eslm.NewRWMutex(c, key, eslm.WithoutKeepAlive())
	if err := rw.Downgrade(ctx); !errors.Is(err, eslm.ErrNotHeld) {
		t.Fatalf("a downgrade without a write grant: %v", err)
	}
	if err := rw.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	forceRelease(t, key, "key")
	err := rw.Downgrade(ctx)
	if !errors.Is(err, eslm.ErrLost) || !errors.Is(err, eslm.ErrNotHeld) || rw.Writer().Err() == nil {
		t.Fatalf("a downgrade that finds the lock gone: want ErrLost (and ErrNotHeld), got %v", err)
	}
	if err := rw.Downgrade(ctx); !errors.Is(err, eslm.ErrLost) {
		t.Fatalf("a downgrade of a lock known lost: %v", err)
	}
	if len(rw.Readers()) != 0 {
		t.Fatal("a failed downgrade made a reader")
	}
	if err := rw.Unlock(ctx); !errors.Is(err, eslm.ErrLost) {
		t.Fatalf("unlock of the lost lock: %v", err)
	}
}
