//go:build eslm_grace

package eslm_test

// Built only with -tags eslm_grace: it needs the node's lock partition in recovery grace when
// it starts (tests/integration/test_go_client.py restarts a node of `memory` durability and
// runs it at once: docs/API.md "Errors", 503 lock_partition_unavailable_exception). Every
// grant answers 503 meanwhile, so it shows the client's retries against their budgets.

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

func graceLeft(t *testing.T) (string, time.Duration) {
	_, diag := rest(t, "GET", "/_locks/_diagnostics", nil)
	nodes, _ := diag["nodes"].(map[string]any)
	for _, n := range nodes {
		core, _ := n.(map[string]any)["core"].(map[string]any)
		parts, _ := core["partitions"].([]any)
		for _, p := range parts {
			part := p.(map[string]any)
			left, _ := part["grace_left_ms"].(json.Number).Int64()
			return part["state"].(string), time.Duration(left) * time.Millisecond
		}
	}
	return "", 0
}

func TestUnavailableIsRetriedWithinTheCallersBudgetNeverBeyond(t *testing.T) {
	state, left := graceLeft(t)
	if state != "grace" || left < 13*time.Second {
		t.Fatalf("this test needs the partition in recovery grace with 13 s left or more; it is %q with %s left", state, left)
	}
	t.Logf("the partition is in recovery grace, %s left", left)
	c, logs := newClient(t)
	// A try-lock without a deadline has no budget: the 503 at once.
	start := time.Now()
	err := eslm.NewMutex(c, unique(t)).TryLock(context.Background())
	var e *eslm.Error
	if !errors.Is(err, eslm.ErrUnavailable) || !errors.As(err, &e) || e.Status != 503 || e.Type != "lock_partition_unavailable_exception" {
		t.Fatalf("want 503 lock_partition_unavailable_exception, got %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("a try-lock without a budget took %s", took)
	}
	// A wait of 3 s: retried within it, given up when the next backoff would end past it.
	start = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err = eslm.NewMutex(c, unique(t)).Lock(ctx)
	took := time.Since(start)
	retries := logs.count("acquire answered 503, retrying")
	if !errors.Is(err, eslm.ErrUnavailable) {
		t.Fatalf("want ErrUnavailable after the budget, got %v", err)
	}
	if took < 2*time.Second || took > 4500*time.Millisecond || retries < 1 {
		t.Fatalf("gave up after %s with %d retries; want within the 3 s budget, after retrying", took, retries)
	}
	t.Logf("gave up after %s, %d retries", took, retries)
	// A wait past the grace: granted once it is over.
	ctx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := eslm.NewMutex(c, unique(t))
	start = time.Now()
	if err := m.Lock(ctx); err != nil {
		t.Fatalf("a wait longer than the grace: %v", err)
	}
	t.Logf("granted after %s of grace", time.Since(start))
	if state, _ := graceLeft(t); state != "active" {
		t.Fatalf("granted while the partition is %q", state)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
