package eslm_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

func TestFencedWritesRefuseAStaleHolder(t *testing.T) {
	c, _ := newClient(t)
	key, index := unique(t), "go-client-fenced"
	ctx := ctxFor(t, 30*time.Second)
	old := eslm.NewMutex(c, key)
	if err := old.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := old.Index(ctx, index, key, map[string]any{"by": "old"})
	if err != nil || uint64(w.Version) != old.Token() {
		t.Fatalf("fenced write: %+v %v", w, err)
	}
	if _, err := old.Index(ctx, index, key, map[string]any{"by": "old", "again": true}); err != nil {
		t.Fatalf("the same holder writes again: %v", err)
	}
	forceRelease(t, key, "key")
	newer := eslm.NewMutex(c, key)
	if err := newer.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := newer.Index(ctx, index, key, map[string]any{"by": "newer"}); err != nil {
		t.Fatal(err)
	}
	// The old holder, unaware (a paused process), writes with its token: Elasticsearch refuses.
	_, err = c.FencedIndex(ctx, index, key, old.Token(), map[string]any{"by": "old", "late": true})
	var e *eslm.Error
	if !errors.Is(err, eslm.ErrStaleToken) || !errors.Is(err, eslm.ErrVersionConflict) || !errors.As(err, &e) || e.Status != 409 {
		t.Fatalf("want ErrStaleToken, got %v", err)
	}
	var stale *eslm.StaleTokenError
	if !errors.As(err, &stale) || stale.Token != old.Token() || stale.Fence != newer.Token() {
		t.Fatalf("the stale error names the lock's token %d and the document's version %d: %+v", old.Token(), newer.Token(), stale)
	}
	// Knowing its loss, the Mutex refuses without sending.
	if ok, _ := closedWithin(old.Done(), 5*time.Second); !ok {
		t.Fatal("the old holder's loss was not signalled")
	}
	if _, err := old.Index(ctx, index, key, map[string]any{"by": "old"}); !errors.Is(err, eslm.ErrLost) {
		t.Fatalf("a fenced write of a lost lock: %v", err)
	}
	status, doc := rest(t, "GET", "/"+index+"/_doc/"+key, nil)
	if status != 200 || doc["_source"].(map[string]any)["by"] != "newer" {
		t.Fatalf("the newer holder's write stands: %d %v", status, doc)
	}
	if err := newer.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestOptimisticUpdatesLoseNoIncrement(t *testing.T) {
	c, _ := newClient(t)
	index, id := "go-client-counters", unique(t)
	ctx := ctxFor(t, 60*time.Second)
	increment := func(src map[string]any) (map[string]any, error) {
		if src == nil {
			return map[string]any{"n": 1.0}, nil
		}
		src["n"] = src["n"].(float64) + 1
		return src, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if _, err := c.OptimisticUpdate(ctx, index, id, 50, increment); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := c.OptimisticUpdate(ctx, index, id, -1, func(src map[string]any) (map[string]any, error) {
		return nil, nil // nothing to write
	})
	if err != nil || got["n"] != 20.0 {
		t.Fatalf("20 increments, got %v %v", got, err)
	}
	_, doc := rest(t, "GET", "/"+index+"/_doc/"+id, nil)
	if v := doc["_version"].(json.Number).String(); v != "20" {
		t.Fatalf("a change returning nil writes nothing: version %s", v)
	}
	stop := fmt.Errorf("stop")
	if _, err := c.OptimisticUpdate(ctx, index, id, -1, func(map[string]any) (map[string]any, error) { return nil, stop }); err != stop {
		t.Fatalf("change's error is returned: %v", err)
	}
}
