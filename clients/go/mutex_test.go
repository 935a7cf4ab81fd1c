package eslm_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	eslm "github.com/eslm/elasticsearch-lock-manager/clients/go"
)

func TestLockWaitsUntilGrantedThenAGreaterToken(t *testing.T) {
	c, _ := newClient(t)
	key := unique(t)
	first, second := eslm.NewMutex(c, key), eslm.NewMutex(c, key)
	ctx := ctxFor(t, 30*time.Second)
	if err := first.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if first.Token() == 0 || !first.IsOwner() {
		t.Fatalf("no token held: %d", first.Token())
	}
	granted := make(chan error, 1)
	go func() { granted <- second.Lock(ctx) }()
	awaitTrue(t, 10*time.Second, "the second Lock queued on the server", func() bool { return waiters(t, key) == 1 })
	select {
	case err := <-granted:
		t.Fatalf("granted while the first holds: %v", err)
	default:
	}
	if err := first.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-granted; err != nil {
		t.Fatal(err)
	}
	if second.Token() <= first.Token() {
		t.Fatalf("tokens must grow: %d then %d", first.Token(), second.Token())
	}
	if ok, _ := closedWithin(first.Done(), 0); !ok || first.Err() != nil {
		t.Fatalf("an unlocked Mutex's Done is closed and its Err nil: %v", first.Err())
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if len(holders(t, key)) != 0 {
		t.Fatal("released, yet held")
	}
	// A second Unlock does nothing (as etcd's and the Python client's): another holder stays.
	third := eslm.NewMutex(c, key)
	if err := third.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatalf("a second Unlock: %v", err)
	}
	if hs := holders(t, key); len(hs) != 1 || tokenOf(hs[0]) != third.Token() {
		t.Fatalf("a second Unlock ended another grant: %v", hs)
	}
	if err := third.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestTryLockOfABusyKeyIsErrLocked(t *testing.T) {
	c, _ := newClient(t)
	key := unique(t)
	ctx := ctxFor(t, 30*time.Second)
	held := eslm.NewMutex(c, key)
	if err := held.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	err := eslm.NewMutex(c, key).TryLock(ctx)
	var e *eslm.Error
	if !errors.Is(err, eslm.ErrLocked) || !errors.As(err, &e) || e.Status != 409 || e.Type != "lock_conflict_exception" {
		t.Fatalf("want 409 lock_conflict_exception, got %v", err)
	}
	if e.Field("holders") != held.Owner() {
		t.Fatalf("holders %q, want %q", e.Field("holders"), held.Owner())
	}
	// The same Mutex, held: busy at once, nothing sent.
	if err := held.TryLock(ctx); !errors.Is(err, eslm.ErrLocked) {
		t.Fatalf("TryLock of a held Mutex: %v", err)
	}
	if err := held.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := held.TryLock(ctx); err != nil {
		t.Fatalf("TryLock of a free key: %v", err)
	}
	if err := held.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLockGivesUpAtTheContextsDeadline(t *testing.T) {
	c, _ := newClient(t)
	key := unique(t)
	if err := eslm.NewMutex(c, key).Lock(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	err := eslm.NewMutex(c, key).Lock(ctx)
	took := time.Since(start)
	if !errors.Is(err, eslm.ErrWaitTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want ErrWaitTimeout and DeadlineExceeded, got %v", err)
	}
	if took < 350*time.Millisecond || took > 5*time.Second {
		t.Fatalf("gave up after %s, not at the 400ms deadline", took)
	}
	var e *eslm.Error
	if errors.As(err, &e) && e.Status != 0 && e.Type != "lock_wait_timeout_exception" {
		t.Fatalf("the server's answer, if any, is a wait timeout: %v", e)
	}
	awaitTrue(t, 5*time.Second, "no waiter left behind", func() bool { return waiters(t, key) == 0 })
}

func TestCancelledLockLeavesNoWaiterNorGrant(t *testing.T) {
	c, _ := newClient(t)
	key := unique(t)
	holder := eslm.NewMutex(c, key)
	if err := holder.Lock(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	waiter := eslm.NewMutex(c, key)
	result := make(chan error, 1)
	go func() { result <- waiter.Lock(ctx) }()
	awaitTrue(t, 10*time.Second, "queued", func() bool { return waiters(t, key) == 1 })
	cancel()
	if err := <-result; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	awaitTrue(t, 5*time.Second, "the waiter dropped", func() bool { return waiters(t, key) == 0 })
	if err := holder.Unlock(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if hs := holders(t, key); len(hs) != 0 {
		t.Fatalf("the cancelled waiter was granted: %v", hs)
	}
}

// countingTransport forwards to the real client and counts what it sent: bad options must be
// refused before anything is.
type countingTransport struct {
	next interface {
		Perform(*http.Request) (*http.Response, error)
	}
	sent atomic.Int64
}

func (c *countingTransport) Perform(r *http.Request) (*http.Response, error) {
	c.sent.Add(1)
	return c.next.Perform(r)
}

func TestBadOptionsAreRefusedBeforeAnythingIsSent(t *testing.T) {
	counting := &countingTransport{next: newES(t)}
	c, err := eslm.NewClient(counting)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx := ctxFor(t, 10*time.Second)
	key := unique(t)
	cases := map[string]error{
		"empty key":        eslm.NewMutex(c, "").Lock(ctx),
		"negative lease":   eslm.NewMutex(c, key, eslm.WithLease(-time.Second)).Lock(ctx),
		"priority 12":      eslm.NewMutex(c, key, eslm.WithPriority(12)).TryLock(ctx),
		"permits on lock":  eslm.NewMutex(c, key, eslm.WithPermits(2)).Lock(ctx),
		"tree not a path":  eslm.NewMutex(c, "no-slash", eslm.WithTree()).Lock(ctx),
		"lock delay 2m":    eslm.NewMutex(c, key, eslm.WithLockDelay(2*time.Minute)).Lock(ctx),
		"key over 512 B":   eslm.NewMutex(c, string(make([]byte, 513))).Lock(ctx),
		"limit 0":          first(eslm.NewSemaphore(c, key, 0).Acquire(ctx)),
		"permits > limit":  first(eslm.NewSemaphore(c, key, 2, eslm.WithPermits(3)).Acquire(ctx)),
		"shared semaphore": first(eslm.NewSemaphore(c, key, 2, eslm.WithShared()).Acquire(ctx)),
		"value over 1 KiB": eslm.NewElection(c, key).Campaign(ctx, string(make([]byte, 1025))),
		"nil holder":       eslm.NewMutex(nil, key).Lock(ctx),
	}
	for name, err := range cases {
		var e *eslm.Error
		if !errors.Is(err, eslm.ErrInvalidArgument) || !errors.As(err, &e) || e.Status != 0 {
			t.Errorf("%s: want ErrInvalidArgument, got %v", name, err)
		}
	}
	if _, err := eslm.NewClient(counting, eslm.WithRenewFraction(1.5)); !errors.Is(err, eslm.ErrInvalidArgument) {
		t.Errorf("renew fraction 1.5: %v", err)
	}
	if _, err := eslm.NewSession(ctx, c, eslm.WithTTL(-time.Second)); !errors.Is(err, eslm.ErrInvalidArgument) {
		t.Errorf("negative ttl: %v", err)
	}
	if n := counting.sent.Load(); n != 0 {
		t.Fatalf("%d requests were sent for refused options", n)
	}
	// And a refusal by the server: a lease over locks.lease.max is a 400 naming the field.
	err = eslm.NewMutex(c, key, eslm.WithLease(time.Hour)).TryLock(ctx)
	var e *eslm.Error
	if !errors.Is(err, eslm.ErrBadRequest) || !errors.As(err, &e) || e.Status != 400 {
		t.Fatalf("want a 400, got %v", err)
	}
	if counting.sent.Load() != 1 {
		t.Fatalf("one request for the server's refusal, got %d", counting.sent.Load())
	}
}

func first[T any](_ T, err error) error { return err }

func TestForceReleaseIsSignalledOnDoneWithinTheLease(t *testing.T) {
	c, _ := newClient(t)
	key := unique(t)
	m := eslm.NewMutex(c, key, eslm.WithLease(3*time.Second))
	if err := m.Lock(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	done := m.Done()
	if ok, _ := closedWithin(done, 0); ok {
		t.Fatal("Done closed while held")
	}
	forceRelease(t, key, "key")
	ok, after := closedWithin(done, 3*time.Second)
	if !ok {
		t.Fatal("Done not closed within the lease after a force-release")
	}
	t.Logf("loss signalled %s after the force-release", after)
	if !errors.Is(m.Err(), eslm.ErrLost) || m.IsOwner() {
		t.Fatalf("Err after the loss: %v", m.Err())
	}
	if err := m.Unlock(ctxFor(t, 10*time.Second)); !errors.Is(err, eslm.ErrLost) {
		t.Fatalf("Unlock of a lost lock: want ErrLost, got %v", err)
	}
}

func TestWithoutLossWatchARenewalFindsTheLossWithinTheLease(t *testing.T) {
	c, _ := newClient(t, eslm.WithoutLossWatch())
	key := unique(t)
	m := eslm.NewMutex(c, key, eslm.WithLease(3*time.Second))
	if err := m.Lock(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	forceRelease(t, key, "key")
	if ok, _ := closedWithin(m.Done(), 3*time.Second); !ok {
		t.Fatal("Done not closed within the lease")
	}
	if !errors.Is(m.Err(), eslm.ErrLost) || !errors.Is(m.Err(), eslm.ErrNotHeld) {
		t.Fatalf("the renewal's 404 is the cause: %v", m.Err())
	}
	_ = m.Unlock(ctxFor(t, 10*time.Second))
}

func TestWithoutKeepAliveTheLeaseRunsOutAndIsSignalled(t *testing.T) {
	c, _ := newClient(t)
	key := unique(t)
	m := eslm.NewMutex(c, key, eslm.WithLease(time.Second), eslm.WithoutKeepAlive())
	if err := m.Lock(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := m.Renew(ctxFor(t, 5*time.Second), 2*time.Second); err != nil {
		t.Fatalf("a renewal by hand: %v", err)
	}
	ok, after := closedWithin(m.Done(), 6*time.Second)
	if !ok {
		t.Fatal("an unrenewed lease did not end")
	}
	if after < time.Second {
		t.Fatalf("lost after %s, before the 2s lease renewed by hand could end", after)
	}
	if err := m.Renew(ctxFor(t, 5*time.Second), 0); !errors.Is(err, eslm.ErrNotHeld) {
		t.Fatalf("a renewal after the lease ended: %v", err)
	}
}

func TestTheWatchdogKeepsTheLockPastItsLease(t *testing.T) {
	c, _ := newClient(t)
	key := unique(t)
	m := eslm.NewMutex(c, key, eslm.WithLease(1500*time.Millisecond))
	if err := m.Lock(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	awaitTrue(t, 15*time.Second, "held for three leases", func() bool {
		hs := holders(t, key)
		if len(hs) != 1 || tokenOf(hs[0]) != m.Token() {
			t.Fatalf("the lock changed hands: %v", hs)
		}
		held, _ := hs[0]["held_ms"].(interface{ Int64() (int64, error) })
		ms, _ := held.Int64()
		return ms > 4500
	})
	if m.Err() != nil {
		t.Fatal(m.Err())
	}
	if err := m.Unlock(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
}

func TestALateReleaseNeverEndsANewerGrant(t *testing.T) {
	// One owner for both acquisitions: the server tells them apart by acquisition and token.
	c, _ := newClient(t, eslm.WithOwner(unique(t)))
	key := unique(t)
	ctx := ctxFor(t, 20*time.Second)
	old := eslm.NewMutex(c, key)
	if err := old.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	forceRelease(t, key, "key") // the old grant ends while its holder is away
	newer := eslm.NewMutex(c, key)
	if err := newer.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := old.Unlock(ctx); !errors.Is(err, eslm.ErrLost) {
		t.Fatalf("the late release: want ErrLost, got %v", err)
	}
	hs := holders(t, key)
	if len(hs) != 1 || tokenOf(hs[0]) != newer.Token() || newer.Err() != nil {
		t.Fatalf("the newer grant (token %d) must stay: %v (%v)", newer.Token(), hs, newer.Err())
	}
	// A second acquisition of a held lock by the same owner replaces it under a newer token:
	// the replaced grant is lost (its watch answers "upgraded"), and its release ends nothing.
	third := eslm.NewMutex(c, key)
	if err := third.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := closedWithin(newer.Done(), 5*time.Second); !ok || !errors.Is(newer.Err(), eslm.ErrLost) {
		t.Fatalf("the replaced grant is lost: %v", newer.Err())
	}
	if err := newer.Unlock(ctx); !errors.Is(err, eslm.ErrLost) {
		t.Fatalf("release of the replaced grant: %v", err)
	}
	if hs := holders(t, key); len(hs) != 1 || tokenOf(hs[0]) != third.Token() {
		t.Fatalf("the newest grant must stay: %v", hs)
	}
	if err := third.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestReacquireAnswersTheSameGrant(t *testing.T) {
	c, _ := newClient(t)
	key := unique(t)
	ctx := ctxFor(t, 20*time.Second)
	m := eslm.NewMutex(c, key)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	token := m.Token()
	if err := m.Reacquire(ctx); err != nil || m.Token() != token {
		t.Fatalf("the same acquisition again: %v, token %d then %d", err, token, m.Token())
	}
	if hs := holders(t, key); len(hs) != 1 || tokenOf(hs[0]) != token {
		t.Fatalf("one grant, the same: %v", hs)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Reacquire(ctx); !errors.Is(err, eslm.ErrNotHeld) {
		t.Fatalf("Reacquire of an unlocked Mutex: %v", err)
	}
}

func TestMutexAndLockerExcludeGoroutinesOfOneProcess(t *testing.T) {
	c, _ := newClient(t)
	key := unique(t)
	shared := eslm.NewMutex(c, key, eslm.WithLease(5*time.Second))
	lockers := []sync.Locker{shared.Locker(), shared.Locker(), eslm.NewMutex(c, key).Locker(), eslm.NewMutex(c, key).Locker()}
	var inside, most, total atomic.Int64
	var wg sync.WaitGroup
	for _, l := range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				l.Lock()
				n := inside.Add(1)
				if n > most.Load() {
					most.Store(n)
				}
				total.Add(1)
				time.Sleep(5 * time.Millisecond) // work inside, so overlaps would show
				inside.Add(-1)
				l.Unlock()
			}
		}()
	}
	wg.Wait()
	if most.Load() != 1 || total.Load() != 12 {
		t.Fatalf("at most one inside at a time: most %d, total %d", most.Load(), total.Load())
	}
	if len(holders(t, key)) != 0 {
		t.Fatal("every Unlock released")
	}
}

func TestTreeLocks(t *testing.T) {
	c, _ := newClient(t)
	root := "/" + unique(t)
	ctx := ctxFor(t, 20*time.Second)
	leaf := eslm.NewMutex(c, root+"/eu/42", eslm.WithTree())
	if err := leaf.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := eslm.NewMutex(c, root, eslm.WithTree()).TryLock(ctx); !errors.Is(err, eslm.ErrLocked) {
		t.Fatalf("an exclusive lock of the tree's root waits for a leaf: %v", err)
	}
	sibling := eslm.NewMutex(c, root+"/us", eslm.WithTree(), eslm.WithShared())
	if err := sibling.TryLock(ctx); err != nil {
		t.Fatalf("a sibling is free: %v", err)
	}
	if err := leaf.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sibling.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestDeadlockVictimIsErrDeadlock(t *testing.T) {
	a, _ := newClient(t, eslm.WithOwner(unique(t)+"-a"))
	b, _ := newClient(t, eslm.WithOwner(unique(t)+"-b"))
	k1, k2 := unique(t), unique(t)
	ctx := ctxFor(t, 20*time.Second)
	if err := eslm.NewMutex(a, k1).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := eslm.NewMutex(b, k2).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 2)
	go func() { results <- eslm.NewMutex(a, k2).Lock(ctx) }()
	awaitTrue(t, 10*time.Second, "a waits for k2", func() bool { return waiters(t, k2) == 1 })
	go func() { results <- eslm.NewMutex(b, k1).Lock(ctx) }()
	err := <-results
	var e *eslm.Error
	if !errors.Is(err, eslm.ErrDeadlock) || !errors.As(err, &e) || e.Status != 409 {
		t.Fatalf("want a 409 deadlock_exception for the victim, got %v", err)
	}
	// The victim's own locks stay held until released: free them so the other is granted.
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-results
}
