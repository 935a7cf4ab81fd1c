package eslm_test

// The examples of README.md, run by go test against the test node (nodeURL() is the first of
// ESLM_URLS; in the README it is http://127.0.0.1:9200).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/elastic/go-elasticsearch/v9"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

func nodeURL() string { return urls[0] }

func Example() {
	ctx := context.Background()
	es, err := elasticsearch.NewClient(elasticsearch.Config{
		Addresses:     []string{nodeURL()},
		RetryOnStatus: []int{502, 504}, // leave 503s to the lock client's retries
	})
	if err != nil {
		panic(err)
	}
	locks, err := eslm.NewClient(es) // one per application; Close releases what it holds
	if err != nil {
		panic(err)
	}
	defer locks.Close(ctx)

	m := eslm.NewMutex(locks, "orders-42", eslm.WithLease(10*time.Second))
	wait, cancel := context.WithTimeout(ctx, 30*time.Second) // wait at most 30 s
	defer cancel()
	if err := m.Lock(wait); err != nil { // waits until granted, renewed every lease/3 while held
		panic(err)
	}
	fmt.Println("holding orders-42:", m.Token() > 0)

	// The fencing recipe: the token is the document's external version, so Elasticsearch
	// refuses this write (eslm.ErrStaleToken) once a later holder of orders-42 has written.
	if _, err := m.Index(ctx, "orders", "42", map[string]any{"status": "shipped"}); err != nil {
		panic(err)
	}
	select {
	case <-m.Done(): // closed if the lock is lost (m.Err() says why) or unlocked
		fmt.Println("lost:", m.Err())
	default:
	}
	if err := m.Unlock(ctx); err != nil { // eslm.ErrLost if it was lost meanwhile
		panic(err)
	}
	fmt.Println("released")
	// Output:
	// holding orders-42: true
	// released
}

func ExampleMutex_TryLock() {
	ctx := context.Background()
	es, _ := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{nodeURL()}})
	locks, _ := eslm.NewClient(es)
	defer locks.Close(ctx)

	holder := eslm.NewMutex(locks, "report-7")
	if err := holder.Lock(ctx); err != nil {
		panic(err)
	}
	err := eslm.NewMutex(locks, "report-7").TryLock(ctx) // another acquisition: busy
	var e *eslm.Error
	if errors.Is(err, eslm.ErrLocked) && errors.As(err, &e) {
		fmt.Println("busy:", e.Status, e.Type)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err = eslm.NewMutex(locks, "report-7").Lock(short)
	fmt.Println("timed out:", errors.Is(err, eslm.ErrWaitTimeout))
	_ = holder.Unlock(ctx)
	// Output:
	// busy: 409 lock_conflict_exception
	// timed out: true
}

func ExampleNewSession() {
	ctx := context.Background()
	es, _ := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{nodeURL()}})
	locks, _ := eslm.NewClient(es)
	defer locks.Close(ctx)

	s, err := eslm.NewSession(ctx, locks, eslm.WithTTL(10*time.Second)) // kept alive in the background
	if err != nil {
		panic(err)
	}
	items, payment := eslm.NewMutex(s, "{order-7}items"), eslm.NewMutex(s, "{order-7}payment")
	for _, m := range []*eslm.Mutex{items, payment} {
		if err := m.Lock(ctx); err != nil {
			panic(err)
		}
	}
	fmt.Println("both held under the session:", items.Owner() == s.Owner())
	if err := s.Close(ctx); err != nil { // ends the session, releasing its locks
		panic(err)
	}
	<-items.Done()
	fmt.Println("released with the session")
	// Output:
	// both held under the session: true
	// released with the session
}

func ExampleElection() {
	ctx := context.Background()
	es, _ := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{nodeURL()}})
	locks, _ := eslm.NewClient(es)
	defer locks.Close(ctx)

	e := eslm.NewElection(locks, "nightly-report", eslm.WithLease(10*time.Second))
	if err := e.Campaign(ctx, "10.0.0.7:8080"); err != nil { // waits until elected
		panic(err)
	}
	leader, _ := eslm.NewElection(locks, "nightly-report").Leader(ctx)
	fmt.Println("leader publishes:", leader.Value, "term is mine:", leader.Term == e.Term())
	if err := e.Resign(ctx); err != nil {
		panic(err)
	}
	// Output:
	// leader publishes: 10.0.0.7:8080 term is mine: true
}

func ExampleClient_OptimisticUpdate() {
	ctx := context.Background()
	es, _ := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{nodeURL()}})
	locks, _ := eslm.NewClient(es)
	defer locks.Close(ctx)

	id := fmt.Sprint(time.Now().UnixNano()) // a document of its own
	add := func(doc map[string]any) (map[string]any, error) {
		if doc == nil {
			return map[string]any{"n": 1.0}, nil
		}
		doc["n"] = doc["n"].(float64) + 1
		return doc, nil
	}
	locks.OptimisticUpdate(ctx, "counters", id, -1, add)
	doc, err := locks.OptimisticUpdate(ctx, "counters", id, -1, add)
	fmt.Println(doc["n"], err)
	// Output:
	// 2 <nil>
}

func ExampleMutex_Update() {
	ctx := context.Background()
	es, _ := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{nodeURL()}})
	locks, _ := eslm.NewClient(es)
	defer locks.Close(ctx)

	m := eslm.NewMutex(locks, "carts-7")
	if err := m.Lock(ctx); err != nil {
		panic(err)
	}
	// A partial document, merged; then field operations, run on the document as its primary holds it.
	if _, err := m.Update(ctx, "carts", "7", eslm.Doc(map[string]any{"status": "open", "items": 0})); err != nil {
		panic(err)
	}
	if _, err := m.Update(ctx, "carts", "7", eslm.Ops(eslm.Inc("items", 1), eslm.Append("log", "added"))); err != nil {
		panic(err)
	}
	// A read-modify-write: a fenced read, then the whole result written with the same token.
	cart, err := m.Update(ctx, "carts", "7", eslm.Modify(func(doc map[string]any) (map[string]any, error) {
		doc["total"] = doc["items"].(float64) * 5
		return doc, nil
	}))
	fmt.Println("total:", cart["total"], err)
	results, err := m.Bulk(ctx, []eslm.FencedChange{ // one _bulk, each change fenced on its own
		{Index: "carts", ID: "8", Change: eslm.Delete()}, // a tombstone that keeps the fence
		{Index: "carts", ID: "9", Change: eslm.Ops(eslm.Inc("items", 1))},
	})
	for _, r := range results {
		fmt.Println(r.ID, r.Outcome) // applied, stale or failed (r.Err): never an error of Bulk's
	}

	// Say this holder stalls past its lease and the next one changes the cart:
	_ = locks.ForceRelease(ctx, "carts-7", "")
	next := eslm.NewMutex(locks, "carts-7")
	_ = next.Lock(ctx)
	_, _ = next.Update(ctx, "carts", "7", eslm.Ops(eslm.Inc("items", 1)))
	_, err = m.Update(ctx, "carts", "7", eslm.Doc(map[string]any{"items": 0}))
	// A *StaleTokenError (errors.As: its Fence and Token), or the loss once the client knows:
	fmt.Println("refused:", errors.Is(err, eslm.ErrStaleToken) || errors.Is(err, eslm.ErrLost))
	_ = next.Unlock(ctx)
	// Output:
	// total: 5 <nil>
	// 8 applied
	// 9 applied
	// refused: true
}

func ExampleRWMutex_Downgrade() {
	ctx := context.Background()
	es, _ := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{nodeURL()}})
	locks, _ := eslm.NewClient(es)
	defer locks.Close(ctx)

	rw := eslm.NewRWMutex(locks, "catalog")
	if err := rw.Lock(ctx); err != nil { // exclusive: readers and writers wait
		panic(err)
	}
	token := rw.Writer().Token()
	if err := rw.Downgrade(ctx); err != nil { // now shared: queued readers get in, writers still wait
		panic(err)
	}
	fmt.Println("readers:", len(rw.Readers()), "same token:", rw.Readers()[0].Token() == token)
	if err := rw.RUnlock(ctx); err != nil {
		panic(err)
	}
	// Output:
	// readers: 1 same token: true
}
