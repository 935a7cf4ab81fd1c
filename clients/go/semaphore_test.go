package eslm_test

import (
	"errors"
	"testing"
	"time"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

func TestSemaphoreHoldsAtMostItsLimit(t *testing.T) {
	c, _ := newClient(t)
	name := unique(t)
	ctx := ctxFor(t, 30*time.Second)
	sem := eslm.NewSemaphore(c, name, 3)
	one, err := sem.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	two, err := eslm.NewSemaphore(c, name, 3, eslm.WithPermits(2)).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if two.Permits() != 2 || two.Remaining() != 0 || two.Token() <= one.Token() {
		t.Fatalf("permits %d remaining %d tokens %d %d", two.Permits(), two.Remaining(), one.Token(), two.Token())
	}
	if _, err := sem.TryAcquire(ctx); !errors.Is(err, eslm.ErrLocked) {
		t.Fatalf("no room: want ErrLocked, got %v", err)
	}
	_, err = eslm.NewSemaphore(c, name, 4).TryAcquire(ctx)
	var e *eslm.Error
	if !errors.Is(err, eslm.ErrSemaphoreLimitMismatch) || !errors.As(err, &e) || e.Field("limit") != "3" {
		t.Fatalf("another limit: %v", err)
	}
	got := make(chan *eslm.Permit, 1)
	go func() {
		p, err := sem.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- p
	}()
	awaitTrue(t, 10*time.Second, "the third acquire queued", func() bool {
		_, body := rest(t, "GET", "/_semaphores/"+name, nil)
		w, _ := body["waiters"].([]any)
		return len(w) == 1
	})
	if err := one.Release(ctx); err != nil {
		t.Fatal(err)
	}
	three := <-got
	if three == nil || three.Token() <= two.Token() {
		t.Fatal("the waiter was granted when a permit came back")
	}
	// A semaphore's grant is lost like a lock (no watch: its renewal finds it).
	shortName := unique(t)
	short, err := eslm.NewSemaphore(c, shortName, 1, eslm.WithLease(1500*time.Millisecond)).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	forceRelease(t, shortName, "semaphore")
	if ok, _ := closedWithin(short.Done(), 1500*time.Millisecond); !ok || !errors.Is(short.Err(), eslm.ErrLost) {
		t.Fatalf("a force-released permit is lost within its lease: %v", short.Err())
	}
	for _, p := range []*eslm.Permit{two, three} {
		if err := p.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
