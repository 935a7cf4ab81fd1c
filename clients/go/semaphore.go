package eslm

import (
	"context"
	"fmt"
	"time"
)

// Semaphore is a counting semaphore (docs/API.md "Semaphores"): up to limit permits held at
// once across the cluster. Each Acquire is a grant of its own (an owner and acquisition of its
// own), with its own lease, watchdog and fencing token: a *Permit, released by its Release.
type Semaphore struct {
	c     *Client
	sess  *Session
	name  string
	limit int
	opts  []Option
}

// NewSemaphore returns semaphore name of limit permits (1..65535; while anyone holds or waits,
// every acquirer must name the limit it has, else ErrSemaphoreLimitMismatch), taken through h.
// Options: WithPermits (per acquire, default 1), WithLease, WithPriority, WithoutKeepAlive.
func NewSemaphore(h Holder, name string, limit int, opts ...Option) *Semaphore {
	s := &Semaphore{name: name, limit: limit, opts: opts}
	if h != nil {
		s.c, s.sess = h.holder()
	}
	return s
}

func (s *Semaphore) request() (*request, error) {
	if s.c == nil {
		return nil, invalid("[holder] must be a *Client or a *Session, got nil")
	}
	if err := checkName(s.name, "name"); err != nil {
		return nil, err
	}
	if s.limit < 1 || s.limit > maxSemaphoreLimit {
		return nil, invalid("[limit] must be 1..%d, got [%d]", maxSemaphoreLimit, s.limit)
	}
	st, err := resolve(scopeSemaphore, s.opts)
	if err != nil {
		return nil, err
	}
	if st.permits > s.limit {
		return nil, invalid("[permits] must be at most the limit %d, got [%d]", s.limit, st.permits)
	}
	return &request{c: s.c, sess: s.sess, scope: scopeSemaphore, key: s.name, s: st, limit: s.limit}, nil
}

// Acquire takes the permits, waiting until they fit (FIFO within a priority) as Mutex.Lock
// waits: ctx's deadline or cancellation ends the wait.
func (s *Semaphore) Acquire(ctx context.Context) (*Permit, error) { return s.acquire(ctx, true) }

// TryAcquire takes the permits if they fit now and nobody waits ahead; ErrLocked otherwise.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Permit, error) { return s.acquire(ctx, false) }

func (s *Semaphore) acquire(ctx context.Context, waiting bool) (*Permit, error) {
	r, err := s.request()
	if err != nil {
		return nil, err
	}
	h, err := s.c.take(ctx, r, waiting)
	if err != nil {
		return nil, err
	}
	return &Permit{h: h}, nil
}

// Permit is a grant of a semaphore's permits.
type Permit struct{ h *hold }

// Name is the semaphore's name.
func (p *Permit) Name() string { return p.h.key }

// Token is the grant's fencing token.
func (p *Permit) Token() uint64 { return p.h.token }

// Permits is how many permits the grant holds.
func (p *Permit) Permits() int { return p.h.permits }

// Remaining is how many permits of the limit nobody held just after this grant.
func (p *Permit) Remaining() int { return p.h.remaining }

// Done is closed when the grant ends: lost (Err says why) or released.
func (p *Permit) Done() <-chan struct{} { return p.h.done }

// Err is nil unless the grant was lost (an *Error matching ErrLost).
func (p *Permit) Err() error { return p.h.err() }

// Release gives the permits back (as Mutex.Unlock: ErrLost if they turned out lost).
func (p *Permit) Release(ctx context.Context) error { return p.h.release(ctx) }

// Renew renews the grant's lease now (0: the lease it was acquired with).
func (p *Permit) Renew(ctx context.Context, lease time.Duration) error {
	if lease < 0 {
		return invalid("[lease] must be >= 0, got [%s]", lease)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = p.h.leaseEndNow()
	}
	return p.h.renew(ctx, lease, deadline)
}

func (p *Permit) String() string {
	return fmt.Sprintf("permit of [%s] x%d (token %d)", p.h.key, p.h.permits, p.h.token)
}
