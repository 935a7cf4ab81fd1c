package eslm_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

func TestSessionKeepsItsLocksAliveAndCloseReleasesThem(t *testing.T) {
	c, _ := newClient(t)
	ctx := ctxFor(t, 30*time.Second)
	s, err := eslm.NewSession(ctx, c, eslm.WithTTL(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() == "" || s.TTL() != 1500*time.Millisecond {
		t.Fatalf("session %q ttl %s", s.ID(), s.TTL())
	}
	a, b := eslm.NewMutex(s, unique(t)), eslm.NewMutex(s, unique(t))
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Owner() != s.Owner() {
		t.Fatalf("a session's locks are its owner's: %q, %q", a.Owner(), s.Owner())
	}
	awaitTrue(t, 15*time.Second, "held for three ttls by the keep-alive", func() bool {
		hs := holders(t, a.Key())
		if len(hs) != 1 {
			t.Fatalf("the session's lock ended: %v", hs)
		}
		ms, _ := hs[0]["held_ms"].(interface{ Int64() (int64, error) }).Int64()
		return ms > 4500
	})
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(holders(t, a.Key())) != 0 {
		t.Fatal("closing the session releases its locks")
	}
	if ok, _ := closedWithin(a.Done(), 0); !ok || a.Err() != nil {
		t.Fatalf("a lock released with its session is done, not lost: %v", a.Err())
	}
	if ok, _ := closedWithin(s.Done(), 0); !ok || s.Err() != nil {
		t.Fatalf("a closed session is done, not lost: %v", s.Err())
	}
	if err := eslm.NewMutex(s, unique(t)).Lock(ctx); !errors.Is(err, eslm.ErrClosed) {
		t.Fatalf("a lock under a closed session: %v", err)
	}
}

func TestALostSessionLosesItsLocks(t *testing.T) {
	c, _ := newClient(t)
	ctx := ctxFor(t, 30*time.Second)
	s, err := eslm.NewSession(ctx, c, eslm.WithTTL(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	m := eslm.NewMutex(s, unique(t))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// The session ends behind the client's back (as it would on expiry, or an operator's end).
	if status, body := rest(t, "DELETE", "/_locks/_session/"+s.ID(), map[string]any{"owner": s.Owner()}); status != 200 {
		t.Fatalf("end: %d %v", status, body)
	}
	if ok, _ := closedWithin(s.Done(), 3*time.Second); !ok {
		t.Fatal("the lost session's Done not closed within its ttl")
	}
	if !errors.Is(s.Err(), eslm.ErrLost) || !errors.Is(s.Err(), eslm.ErrSessionNotFound) {
		t.Fatalf("session Err: %v", s.Err())
	}
	if ok, _ := closedWithin(m.Done(), 0); !ok || !errors.Is(m.Err(), eslm.ErrLost) {
		t.Fatalf("its lock is lost with it: %v", m.Err())
	}
	err = eslm.NewMutex(s, unique(t)).Lock(ctx)
	if !errors.Is(err, eslm.ErrLost) {
		t.Fatalf("a lock under a lost session: %v", err)
	}
	if err := s.Close(ctx); !errors.Is(err, eslm.ErrLost) {
		t.Fatalf("Close of a lost session: %v", err)
	}
}

func TestAnUnknownSessionIsErrSessionNotFound(t *testing.T) {
	c, _ := newClient(t)
	ctx := ctxFor(t, 30*time.Second)
	s, err := eslm.NewSession(ctx, c, eslm.WithTTL(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rest(t, "DELETE", "/_locks/_session/"+s.ID(), map[string]any{"owner": s.Owner()})
	// Before the keep-alive finds out, an acquire under it is refused by the server.
	err = eslm.NewMutex(s, unique(t)).TryLock(ctx)
	var e *eslm.Error
	if !errors.Is(err, eslm.ErrSessionNotFound) {
		t.Fatalf("want 404 session_not_found_exception, got %v", err)
	}
	if errors.As(err, &e) && e.Status != 0 && (e.Status != 404 || e.Type != "session_not_found_exception") {
		t.Fatalf("want 404 session_not_found_exception, got %v", e)
	}
}

func TestCloseReleasesEverythingTheClientHolds(t *testing.T) {
	c, _ := newClient(t)
	ctx := ctxFor(t, 30*time.Second)
	plain, delayed := eslm.NewMutex(c, unique(t)), eslm.NewMutex(c, unique(t), eslm.WithLockDelay(30*time.Second))
	for _, m := range []*eslm.Mutex{plain, delayed} {
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sem, err := eslm.NewSemaphore(c, unique(t), 3).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lead := eslm.NewElection(c, unique(t))
	if err := lead.Campaign(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	s, err := eslm.NewSession(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	underSession := eslm.NewMutex(s, unique(t))
	if err := underSession.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() { waiting <- eslm.NewMutex(c, plain.Key()).Lock(ctx) }()
	awaitTrue(t, 10*time.Second, "an acquire queued", func() bool { return waiters(t, plain.Key()) == 1 })
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; !errors.Is(err, eslm.ErrClosed) {
		t.Fatalf("an acquire waiting when the client closed: want ErrClosed, got %v", err)
	}
	for _, m := range []*eslm.Mutex{plain, delayed, underSession} {
		if hs := holders(t, m.Key()); len(hs) != 0 {
			t.Fatalf("%s still held after Close: %v", m.Key(), hs)
		}
		if ok, _ := closedWithin(m.Done(), 0); !ok {
			t.Fatalf("%s: Done open after Close", m.Key())
		}
	}
	// A release leaves no lock-delay: the key is free for anyone at once.
	other, _ := newClient(t)
	if err := eslm.NewMutex(other, delayed.Key()).TryLock(ctx); err != nil {
		t.Fatalf("the released key is free: %v", err)
	}
	if ok, _ := closedWithin(sem.Done(), 0); !ok {
		t.Fatal("the semaphore's permit was not released")
	}
	if _, err := lead.Leader(ctx); !errors.Is(err, eslm.ErrNoLeader) {
		t.Fatalf("the leadership was not resigned: %v", err)
	}
	if ok, _ := closedWithin(s.Done(), 0); !ok {
		t.Fatal("the session was not ended")
	}
	if err := eslm.NewMutex(c, unique(t)).Lock(ctx); !errors.Is(err, eslm.ErrClosed) {
		t.Fatalf("Lock after Close: %v", err)
	}
	if _, err := eslm.NewSession(ctx, c); !errors.Is(err, eslm.ErrClosed) {
		t.Fatalf("NewSession after Close: %v", err)
	}
}

func TestRWMutexReadersShareWritersExclude(t *testing.T) {
	c, _ := newClient(t)
	key := unique(t)
	ctx := ctxFor(t, 30*time.Second)
	rw := eslm.NewRWMutex(c, key)
	if err := rw.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rw.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	other := eslm.NewRWMutex(c, key)
	if err := other.TryRLock(ctx); err != nil {
		t.Fatalf("readers share: %v", err)
	}
	if n := len(holders(t, key)); n != 3 {
		t.Fatalf("three shared grants, got %d", n)
	}
	if err := other.TryLock(ctx); !errors.Is(err, eslm.ErrLocked) {
		t.Fatalf("a writer is refused while readers hold: %v", err)
	}
	written := make(chan error, 1)
	go func() { written <- other.Lock(ctx) }()
	awaitTrue(t, 10*time.Second, "the writer queued", func() bool { return waiters(t, key) == 1 })
	// A later reader does not overtake the waiting writer.
	if err := eslm.NewRWMutex(c, key).TryRLock(ctx); !errors.Is(err, eslm.ErrLocked) {
		t.Fatalf("a reader overtook a waiting writer: %v", err)
	}
	for _, r := range []func(context.Context) error{rw.RUnlock, rw.RUnlock, other.RUnlock} {
		if err := r(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if err := rw.RUnlock(ctx); err != nil {
		t.Fatalf("RUnlock with no read lock does nothing: %v", err)
	}
	hs := holders(t, key)
	if len(hs) != 1 || hs[0]["mode"] != "exclusive" || tokenOf(hs[0]) != other.Writer().Token() {
		t.Fatalf("the writer alone holds: %v", hs)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	// The sync.Locker views: readers together, the writer alone.
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); l := rw.RLocker(); l.Lock(); l.Unlock() }()
	}
	wg.Wait()
	w := rw.Locker()
	w.Lock()
	w.Unlock()
	if len(holders(t, key)) != 0 {
		t.Fatal("all released")
	}
}
