package eslm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Mutex is a cluster-wide lock on one key (docs/API.md "Single keys"), in the manner of etcd's
// concurrency.Mutex: Lock waits until granted (the context's deadline or cancellation bounds
// the wait), TryLock answers ErrLocked when the key is busy, Unlock releases. While held, the
// lock is renewed by a watchdog every lease/3 (made on a Session: by the session's keep-alive)
// and watched for its loss; Done is closed when it is lost or unlocked, and Token is its
// fencing token, for the writes it protects (docs/API.md "The fencing recipe").
//
// Every Lock is an acquisition of its own, under an owner of its own (unless the client has
// WithOwner, or the Mutex is made on a Session): two Mutexes on one key exclude each other even
// in one process, and a Mutex is safe for concurrent use: goroutines that share one take turns
// as with a sync.Mutex (one grant at a time per Mutex).
type Mutex struct {
	c    *Client
	sess *Session
	kind string
	key  string
	opts []Option

	gate chan struct{} // holds one token while this Mutex holds (or takes) a grant
	mu   sync.Mutex
	cur  *hold // the grant held now, or the last one
	held bool
}

// NewMutex returns a Mutex on key, taken through h (a *Client, or a *Session whose lease its
// grants follow). Options: WithLease, WithPriority, WithTree, WithShared, WithLockDelay,
// WithoutKeepAlive. Bad options and keys are refused by Lock and TryLock before anything is
// sent.
func NewMutex(h Holder, key string, opts ...Option) *Mutex {
	return newMutex(h, scopeKey, key, opts)
}

func newMutex(h Holder, kind, key string, opts []Option) *Mutex {
	m := &Mutex{kind: kind, key: key, opts: opts, gate: make(chan struct{}, 1)}
	if h != nil {
		m.c, m.sess = h.holder()
	}
	return m
}

// request is a new acquisition of m's key, its options checked.
func (m *Mutex) request(value *string) (*request, error) {
	if m.c == nil {
		return nil, invalid("[holder] must be a *Client or a *Session, got nil")
	}
	if err := checkName(m.key, "key"); err != nil {
		return nil, err
	}
	s, err := resolve(m.kind, m.opts)
	if err != nil {
		return nil, err
	}
	if s.tree {
		if err := checkTreePath(m.key); err != nil {
			return nil, err
		}
	}
	if value != nil && len(*value) > maxValueBytes {
		return nil, invalid("[value] must be at most %d bytes (UTF-8), got %d", maxValueBytes, len(*value))
	}
	return &request{c: m.c, sess: m.sess, scope: s.scope(m.kind), key: m.key, s: s, value: value}, nil
}

// Lock acquires the lock, waiting until it is granted. The wait ends with ctx: at its deadline
// with an error matching ErrWaitTimeout (and context.DeadlineExceeded), when cancelled with
// ctx's error; a 503 is retried meanwhile. Other refusals: ErrDeadlock, ErrLimitExceeded,
// ErrBadRequest, ErrInvalidArgument (before anything is sent), ErrClosed.
func (m *Mutex) Lock(ctx context.Context) error {
	return m.lock(ctx, nil, true)
}

// TryLock acquires the lock if it is free now; a busy key answers ErrLocked at once. A 503 is
// retried within ctx's deadline if it has one, else not at all.
func (m *Mutex) TryLock(ctx context.Context) error {
	return m.lock(ctx, nil, false)
}

func (m *Mutex) lock(ctx context.Context, value *string, waiting bool) error {
	r, err := m.request(value)
	if err != nil {
		return err
	}
	if waiting {
		select {
		case m.gate <- struct{}{}:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return waitTimedOut(m.key, nil)
			}
			return fmt.Errorf("eslm: lock of [%s]: %w", m.key, context.Cause(ctx))
		}
	} else {
		select {
		case m.gate <- struct{}{}:
		default:
			return clientError("lock_conflict", fmt.Sprintf("[%s] is held through this Mutex", m.key), nil, ErrLocked)
		}
	}
	h, err := m.c.take(ctx, r, waiting)
	if err != nil {
		<-m.gate
		return err
	}
	m.mu.Lock()
	m.cur, m.held = h, true
	m.mu.Unlock()
	return nil
}

// Unlock releases the lock (naming its token and acquisition, so a late release never ends a
// newer grant). It answers ErrLost when the lock turned out lost, now or before (then the
// key was free for others meanwhile: what was done under it must not be trusted). Unlock of a
// Mutex that holds nothing (never locked, or unlocked already) does nothing and answers nil, as
// etcd's Mutex and the Python client's release do. A release that got no answer
// (ErrUnavailable, ErrConnection after retries within ctx, else the client's retryFor) leaves
// the Mutex locked: call Unlock again, or let the lease end the lock.
func (m *Mutex) Unlock(ctx context.Context) error {
	m.mu.Lock()
	h, held := m.cur, m.held
	m.mu.Unlock()
	if !held {
		return nil
	}
	err := h.release(ctx)
	if err != nil && !h.isReleased() {
		return err
	}
	m.mu.Lock()
	m.held = false
	m.mu.Unlock()
	<-m.gate
	return err
}

// adopt makes m (which holds nothing) hold h, a grant another Mutex of its key took.
func (m *Mutex) adopt(h *hold) {
	m.gate <- struct{}{}
	m.mu.Lock()
	m.cur, m.held = h, true
	m.mu.Unlock()
}

// disown lets go of the grant m holds without releasing it (another Mutex adopted it); Token,
// Done and Err still tell of it, as of the last grant.
func (m *Mutex) disown() {
	m.mu.Lock()
	m.held = false
	m.mu.Unlock()
	<-m.gate
}

func (m *Mutex) current() *hold {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur
}

// Key is the key locked.
func (m *Mutex) Key() string { return m.key }

// Token is the fencing token of the grant held now (or last), 0 before the first Lock.
func (m *Mutex) Token() uint64 {
	if h := m.current(); h != nil {
		return h.token
	}
	return 0
}

// Owner is the owner of the grant held now (or last), "" before the first Lock.
func (m *Mutex) Owner() string {
	if h := m.current(); h != nil {
		return h.owner
	}
	return ""
}

// Done is closed when the grant held now ends: lost (Err says why) or unlocked. Before the
// first Lock it is closed. Take it after Lock returned.
func (m *Mutex) Done() <-chan struct{} {
	if h := m.current(); h != nil {
		return h.done
	}
	return closedChan
}

// Err is nil unless the grant held now (or last) was lost: then an *Error matching ErrLost
// whose cause is the answer that showed it.
func (m *Mutex) Err() error {
	if h := m.current(); h != nil {
		return h.err()
	}
	return nil
}

// IsOwner reports whether this Mutex holds a grant not known lost.
func (m *Mutex) IsOwner() bool {
	m.mu.Lock()
	h, held := m.cur, m.held
	m.mu.Unlock()
	return held && h.err() == nil
}

func (m *Mutex) heldNow() (*hold, error) {
	m.mu.Lock()
	h, held := m.cur, m.held
	m.mu.Unlock()
	if !held {
		return nil, clientError("not_locked", fmt.Sprintf("[%s]: this Mutex holds nothing", m.key), nil, ErrNotHeld)
	}
	return h, nil
}

// Renew renews the lease now, for lease (0: the lease it was acquired with), counted from now;
// the watchdog does this by itself. A 503 is retried within ctx's deadline, else until the
// lease would have run out. ErrNotHeld when the server no longer has the grant (it is then
// lost).
func (m *Mutex) Renew(ctx context.Context, lease time.Duration) error {
	h, err := m.heldNow()
	if err != nil {
		return err
	}
	if lease < 0 {
		return invalid("[lease] must be >= 0, got [%s]", lease)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = h.leaseEndNow()
	}
	return h.renew(ctx, lease, deadline)
}

// Reacquire sends this grant's acquire again under the same acquisition id, as a retry whose
// answer was lost does (docs/API.md "Acquisitions"): while the grant holds, the server answers
// it again (same token). When the server answers another token instead, the grant had ended:
// it is marked lost, the new grant released, and ErrLost returned.
func (m *Mutex) Reacquire(ctx context.Context) error {
	h, err := m.heldNow()
	if err != nil {
		return err
	}
	if err := h.err(); err != nil {
		return err
	}
	r := &request{c: h.c, sess: h.sess, scope: h.scope, key: h.key, s: h.s, owner: h.owner,
		acquisition: h.acquisition, value: h.value}
	a, _, err := h.c.acquire(ctx, r, false)
	if err != nil {
		return err
	}
	if got := a.token(h.scope); got != h.token {
		h.lose(fmt.Sprintf("its acquisition was answered with another grant (token %d)", got), nil)
		fresh := &hold{c: h.c, sess: h.sess, scope: h.scope, key: h.key, owner: h.owner,
			acquisition: h.acquisition, token: got, s: h.s, done: make(chan struct{})}
		_ = fresh.release(ctx)
		return h.err()
	}
	return nil
}

// Locker is a sync.Locker view of the Mutex, as etcd's NewLocker: Lock waits with
// context.Background (until granted, retrying 503s and lost connections; it panics only on an
// error that retrying cannot fix: a closed client, a refused request), Unlock releases within
// the client's retryFor and never panics (a failure is logged; the lease ends the lock).
func (m *Mutex) Locker() sync.Locker { return locker{m.lock, m.Unlock, m.c, m.key} }

type locker struct {
	lock   func(context.Context, *string, bool) error
	unlock func(context.Context) error
	c      *Client
	key    string
}

func (l locker) Lock() {
	for attempt := 0; ; attempt++ {
		err := l.lock(context.Background(), nil, true)
		if err == nil {
			return
		}
		if !retryable(err) {
			panic(err)
		}
		l.c.log.Warn("eslm: Locker.Lock failed, retrying", "key", l.key, "error", err)
		time.Sleep(backoff(attempt))
	}
}

func (l locker) Unlock() {
	if err := l.unlock(context.Background()); err != nil {
		l.c.log.Warn("eslm: Locker.Unlock failed", "key", l.key, "error", err)
	}
}

// retryable: an error another attempt may not see.
func retryable(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrConnection) || errors.Is(err, ErrLocked) ||
		errors.Is(err, ErrDeadlock) || errors.Is(err, ErrWaitTimeout) || errors.Is(err, ErrCorePanic) ||
		errors.Is(err, ErrLimitExceeded)
}

// RWMutex is a read/write lock on one key: RLock takes it in shared mode (any number of
// readers), Lock in exclusive mode (one writer, no reader), both waiting as Mutex.Lock does.
// Each RLock is a shared grant of its own (the server queues them in order with writers, so a
// waiting writer is not overtaken by later readers); RUnlock releases one of them (one found
// lost first, else the latest). Safe for concurrent use.
type RWMutex struct {
	h    Holder
	key  string
	opts []Option
	w    *Mutex

	mu      sync.Mutex
	readers []*Mutex
}

// NewRWMutex returns a read/write lock on key, taken through h, with NewMutex's options
// (WithShared is implied for readers).
func NewRWMutex(h Holder, key string, opts ...Option) *RWMutex {
	return &RWMutex{h: h, key: key, opts: opts, w: NewMutex(h, key, opts...)}
}

func (rw *RWMutex) reader() *Mutex {
	return NewMutex(rw.h, rw.key, append(append([]Option{}, rw.opts...), WithShared())...)
}

// RLock takes a shared (read) grant, waiting until granted within ctx.
func (rw *RWMutex) RLock(ctx context.Context) error { return rw.rlock(ctx, true) }

// TryRLock takes a shared grant if no writer holds or waits; ErrLocked otherwise.
func (rw *RWMutex) TryRLock(ctx context.Context) error { return rw.rlock(ctx, false) }

func (rw *RWMutex) rlock(ctx context.Context, waiting bool) error {
	r := rw.reader()
	var err error
	if waiting {
		err = r.Lock(ctx)
	} else {
		err = r.TryLock(ctx)
	}
	if err != nil {
		return err
	}
	rw.mu.Lock()
	rw.readers = append(rw.readers, r)
	rw.mu.Unlock()
	return nil
}

// RUnlock releases one shared grant of this RWMutex (one found lost first: its ErrLost is
// answered; else the latest); with none held it does nothing, as Unlock.
func (rw *RWMutex) RUnlock(ctx context.Context) error {
	rw.mu.Lock()
	if len(rw.readers) == 0 {
		rw.mu.Unlock()
		return nil
	}
	i := len(rw.readers) - 1
	for j, r := range rw.readers {
		if r.Err() != nil {
			i = j
			break
		}
	}
	r := rw.readers[i]
	rw.readers = append(rw.readers[:i], rw.readers[i+1:]...)
	rw.mu.Unlock()
	err := r.Unlock(ctx)
	if err != nil && r.IsOwner() { // no answer: still held, keep it for another RUnlock
		rw.mu.Lock()
		rw.readers = append(rw.readers, r)
		rw.mu.Unlock()
	}
	return err
}

// Downgrade turns the exclusive (write) grant held into a shared (read) one without letting go
// (POST /_locks/{key}/_downgrade, docs/API.md): the lock stays held throughout, so no waiting
// writer gets in between, while readers queued for the key (ahead of any waiting writer) are let
// in at once. The grant keeps its fencing token, its lease and its watchdog, and becomes a read
// grant of this RWMutex: RUnlock releases it (Readers lists it), and Lock may take a write grant
// again. A 503 is retried within ctx's deadline, else within the lease. Errors: ErrNotHeld when
// no write grant is held; the loss (ErrLost) without sending when it is known lost, or when the
// downgrade finds it gone (it is then lost; the error matches ErrNotHeld too); ErrInvalidArgument
// for a write lock taken with WithShared.
func (rw *RWMutex) Downgrade(ctx context.Context) error {
	h, err := rw.w.heldNow()
	if err != nil {
		return err
	}
	if err := h.err(); err != nil {
		return err
	}
	if h.s.shared {
		return invalid("[%s] is held shared already: only an exclusive grant is downgraded", h.key)
	}
	if err := h.downgrade(ctx); err != nil {
		return err
	}
	r := rw.reader()
	r.adopt(h)
	rw.w.disown()
	rw.mu.Lock()
	rw.readers = append(rw.readers, r)
	rw.mu.Unlock()
	return nil
}

// Lock takes the exclusive (write) grant, waiting until granted within ctx.
func (rw *RWMutex) Lock(ctx context.Context) error { return rw.w.Lock(ctx) }

// TryLock takes the exclusive grant if the key is free; ErrLocked otherwise.
func (rw *RWMutex) TryLock(ctx context.Context) error { return rw.w.TryLock(ctx) }

// Unlock releases the exclusive grant (as Mutex.Unlock).
func (rw *RWMutex) Unlock(ctx context.Context) error { return rw.w.Unlock(ctx) }

// Writer is the Mutex of the exclusive side, for its Token, Done, Err and Renew.
func (rw *RWMutex) Writer() *Mutex { return rw.w }

// Readers are the Mutexes of the shared grants held now, oldest first.
func (rw *RWMutex) Readers() []*Mutex {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return append([]*Mutex{}, rw.readers...)
}

// Locker is the sync.Locker of the exclusive side (as Mutex.Locker).
func (rw *RWMutex) Locker() sync.Locker { return rw.w.Locker() }

// RLocker is a sync.Locker whose Lock is RLock and Unlock RUnlock (as Mutex.Locker).
func (rw *RWMutex) RLocker() sync.Locker {
	lock := func(ctx context.Context, _ *string, waiting bool) error { return rw.rlock(ctx, waiting) }
	return locker{lock, rw.RUnlock, rw.w.c, rw.key}
}
