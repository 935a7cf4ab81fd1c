package eslm

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// Holder is what locks are taken through: a *Client (each grant under a lease of its own,
// renewed by a watchdog) or a *Session (grants under the session's lease, kept by its
// keep-alive).
type Holder interface {
	holder() (*Client, *Session)
}

func (c *Client) holder() (*Client, *Session) { return c, nil }

// closedChan is the Done channel of something never held.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// request is one acquisition: what it asks for, and who asks (chosen once, before it is sent,
// so every retry names the same acquisition).
type request struct {
	c           *Client
	sess        *Session
	scope, key  string
	s           settings
	owner       string
	acquisition string
	limit       int     // semaphores
	value       *string // elections
}

func (r *request) body(waitMs int64) map[string]any {
	b := map[string]any{"acquisition": r.acquisition, "wait": waitMs}
	switch r.scope {
	case scopeElection:
		b["candidate"] = r.owner
		if r.value != nil {
			b["value"] = *r.value
		}
	case scopeSemaphore:
		b["owner"] = r.owner
		b["limit"] = r.limit
		b["permits"] = r.s.permits
	default:
		b["owner"] = r.owner
		b["mode"] = r.s.mode()
		b["scope"] = r.scope
	}
	if r.s.lease > 0 {
		b["lease"] = millis(r.s.lease)
	}
	if r.s.priority >= 0 {
		b["priority"] = r.s.priority
	}
	if r.s.lockDelay >= 0 {
		b["lock_delay"] = millis(r.s.lockDelay)
	}
	if r.sess != nil {
		b["session"] = r.sess.id
	}
	return b
}

// keyedBody names one grant in a release or renewal: owner, token and acquisition
// (docs/API.md "Acquisitions"); an election's names them candidate and term. A zero token
// names the acquisition alone (an abandoned acquire's grant, whose token is unknown).
func keyedBody(scope, owner, acquisition string, token uint64) map[string]any {
	b := map[string]any{"acquisition": acquisition}
	switch scope {
	case scopeElection:
		b["candidate"] = owner
		if token != 0 {
			b["term"] = token
		}
	default:
		b["owner"] = owner
		if token != 0 {
			b["fencing_token"] = token
		}
		if scope != scopeSemaphore {
			b["scope"] = scope
		}
	}
	return b
}

type grantAnswer struct {
	FencingToken uint64  `json:"fencing_token"`
	Term         uint64  `json:"term"`
	LeaseMs      int64   `json:"lease_ms"`
	WaitedMs     int64   `json:"waited_ms"`
	Reentrant    bool    `json:"reentrant"`
	Permits      int     `json:"permits"`
	Limit        int     `json:"limit"`
	Remaining    int     `json:"remaining"`
	Value        *string `json:"value"`
}

func (a *grantAnswer) token(scope string) uint64 {
	if scope == scopeElection {
		return a.Term
	}
	return a.FencingToken
}

// serverWaitMax is the longest wait one acquire request asks for: the server's locks.wait.max
// unless an operator lowered it, which the server's refusal then names.
const serverWaitMax = 5 * time.Minute

var waitMaxRefusal = regexp.MustCompile(`\[wait\] must be at most \[(\d+)(ms|s|m|h|d)\] \(locks\.wait\.max\)`)

// lowerWaitMax is the cluster's locks.wait.max named in a 400 that refused a longer wait.
func lowerWaitMax(err error) (time.Duration, bool) {
	var e *Error
	if !errors.As(err, &e) || e.Status != 400 {
		return 0, false
	}
	m := waitMaxRefusal.FindStringSubmatch(e.Reason)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	unit := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute,
		"h": time.Hour, "d": 24 * time.Hour}[m[2]]
	return time.Duration(n) * unit, true
}

// waitTimedOut is the error of an acquire whose context's deadline ran out: ErrWaitTimeout and
// context.DeadlineExceeded both, keeping the server's answer when there was one.
func waitTimedOut(key string, answer error) error {
	var e *Error
	if errors.As(answer, &e) && e.Is(ErrWaitTimeout) {
		c := *e
		c.kinds = append(append([]error{}, e.kinds...), context.DeadlineExceeded)
		return &c
	}
	return clientError("wait_timeout", fmt.Sprintf("[%s] not granted before the context's deadline", key),
		answer, ErrWaitTimeout, context.DeadlineExceeded)
}

// acquire sends r until the server answers a grant or a refusal. waiting: queue until ctx's
// deadline (none: until granted), re-sent with what is left when the server's own wait cap
// runs out; otherwise try once. A 503 is retried while the next attempt starts before ctx's
// deadline (a try without a deadline: not at all). An acquire cut short by ctx leaves the
// release of a grant the server may have made in that instant to the background.
func (c *Client) acquire(ctx context.Context, r *request, waiting bool) (*grantAnswer, time.Time, error) {
	deadline, hasDeadline := ctx.Deadline()
	limit := serverWaitMax
	path := actionPath(r.scope, r.key, "_acquire")
	for unavailable := 0; ; {
		if err := ctx.Err(); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, time.Time{}, waitTimedOut(r.key, nil)
			}
			return nil, time.Time{}, fmt.Errorf("eslm: acquire of [%s]: %w", r.key, context.Cause(ctx))
		}
		var waitMs int64
		if waiting {
			w := limit
			if hasDeadline {
				w = min(w, time.Until(deadline))
			}
			waitMs = max(1, millis(w))
		}
		started := time.Now()
		var data []byte
		var err error
		if waitMs > 0 {
			data, err = c.sendWaiting(ctx, "POST", path, r.body(waitMs))
		} else {
			data, err = c.send(ctx, "POST", path, r.body(0))
		}
		if err == nil {
			var a grantAnswer
			if err := decode(data, &a); err != nil {
				return nil, started, err
			}
			return &a, started, nil
		}
		switch {
		case isStatus(err, 503):
			delay := retryDelay(err, unavailable)
			unavailable++
			if !hasDeadline && !waiting {
				return nil, started, err // a try without a budget
			}
			if hasDeadline && !time.Now().Add(delay).Before(deadline) {
				return nil, started, err
			}
			c.log.Info("eslm: acquire answered 503, retrying", "key", r.key, "retry", unavailable, "delay", delay, "error", err)
			if serr := sleep(ctx, delay); serr != nil {
				continue // the loop's top says why
			}
		case errors.Is(err, ErrWaitTimeout):
			if !waiting || (hasDeadline && !time.Now().Before(deadline)) {
				return nil, started, waitTimedOut(r.key, err)
			}
			c.log.Debug("eslm: the server's wait ran out, sending the acquire again", "key", r.key)
		case ctx.Err() != nil:
			c.abandon(r)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, started, waitTimedOut(r.key, err)
			}
			return nil, started, err
		default:
			if lower, ok := lowerWaitMax(err); ok && lower < limit && lower > 0 {
				limit = lower
				continue
			}
			return nil, started, err
		}
	}
}

// abandon releases, in the background, the grant an acquire cut short may have been made just
// before it was cut (named by its acquisition: nothing newer can be ended by it).
func (c *Client) abandon(r *request) {
	c.background(func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.retryFor)
		defer cancel()
		body := keyedBody(r.scope, r.owner, r.acquisition, 0)
		_, err := c.call(ctx, "POST", actionPath(r.scope, r.key, "_release"), body)
		if err != nil && !errors.Is(err, ErrNotHeld) {
			c.log.Warn("eslm: releasing the grant of an abandoned acquire failed (its lease ends it)", "key", r.key, "error", err)
		}
	})
}

// hold is one grant the server made: its token and lease, its watchdog and loss watch, and
// its end (released, or lost) signalled by closing done.
type hold struct {
	c           *Client
	sess        *Session
	scope, key  string
	owner       string
	acquisition string
	s           settings
	token       uint64
	permits     int
	remaining   int
	value       *string

	mu       sync.Mutex
	leaseMs  int64
	leaseEnd time.Time
	lostErr  *Error
	released bool
	closing  bool
	done     chan struct{}
	ended    bool // done closed
	stop     context.CancelFunc
	bg       sync.WaitGroup
}

// take acquires r and hands over its hold with its watchdog running.
func (c *Client) take(ctx context.Context, r *request, waiting bool) (*hold, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	if r.sess != nil {
		if err := r.sess.usable(); err != nil {
			return nil, err
		}
	}
	r.owner = c.ownerFor(r.sess)
	r.acquisition = newAcquisition()
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(c.stopped, func() { cancel(closedError("the client")) })
	defer stop()
	a, started, err := c.acquire(actx, r, waiting)
	if err != nil {
		return nil, err
	}
	h := &hold{
		c: c, sess: r.sess, scope: r.scope, key: r.key, owner: r.owner, acquisition: r.acquisition,
		s: r.s, token: a.token(r.scope), permits: a.Permits, remaining: a.Remaining, value: a.Value,
		leaseMs: a.LeaseMs, done: make(chan struct{}),
	}
	// The server granted no earlier than the request was sent plus the time it queued there:
	// the lease is counted from then on this client's clock, never from the answer.
	grantedAt := started.Add(time.Duration(a.WaitedMs) * time.Millisecond)
	h.leaseEnd = grantedAt.Add(time.Duration(a.LeaseMs) * time.Millisecond)
	if err := h.arrive(ctx, grantedAt); err != nil {
		return nil, err
	}
	if !c.track(h) {
		_ = h.release(context.Background())
		return nil, closedError("the client")
	}
	if h.sess != nil {
		h.sess.adopt(h)
	} else {
		h.start()
	}
	return h, nil
}

func (h *hold) watched() bool { return h.sess == nil }

func (h *hold) renewInterval() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Duration(float64(h.leaseMs)*h.c.fraction) * time.Millisecond
}

// arrive renews a grant whose answer came so late that its first renewal is already due (a
// stalled node, a slow network) before handing it over; one found gone, or not renewed before
// its lease could have ended, is not acquired (ErrLocked): a lock is never handed over as held
// after its lease could have run out.
func (h *hold) arrive(ctx context.Context, grantedAt time.Time) error {
	if !h.watched() || !h.s.keepAlive || time.Now().Before(grantedAt.Add(h.renewInterval())) {
		return nil
	}
	h.c.log.Warn("eslm: a grant arrived late; renewing it before handing it over", "key", h.key,
		"late", time.Since(grantedAt))
	// Not the caller's context, which may have ended while the answer travelled; the renewal is
	// sent even when the lease may have ended (the server knows), its 503s retried within it.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.c.retryFor)
	defer cancel()
	err := h.renew(rctx, 0, h.leaseEndNow())
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrNotHeld) && time.Now().Before(h.leaseEndNow()) {
		h.c.log.Warn("eslm: renewing a late grant failed within its lease; the watchdog retries", "key", h.key, "error", err)
		return nil
	}
	if !errors.Is(err, ErrNotHeld) {
		_ = h.release(context.Background())
	}
	h.markReleased()
	return clientError("grant_expired", fmt.Sprintf("the grant of [%s] arrived after its lease could have ended "+
		"and was not renewed in time: not acquired", h.key), err, ErrLocked)
}

func (h *hold) leaseEndNow() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.leaseEnd
}

// start runs its watchdog (renewals every lease × fraction) and its loss watch.
func (h *hold) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.mu.Lock()
	h.stop = cancel
	h.mu.Unlock()
	if h.s.keepAlive {
		h.bg.Add(1)
		go func() {
			defer h.bg.Done()
			h.watchdog(ctx)
		}()
	}
	if h.c.watch && h.scope != scopeSemaphore {
		h.bg.Add(1)
		go func() {
			defer h.bg.Done()
			h.lossWatch(ctx)
		}()
	}
}

func (h *hold) watchdog(ctx context.Context) {
	next := h.renewInterval()
	for {
		if sleep(ctx, next) != nil {
			return
		}
		err := h.renew(ctx, 0, h.leaseEndNow())
		next = h.renewInterval()
		switch {
		case err == nil:
		case ctx.Err() != nil || errors.Is(err, ErrNotHeld):
			return // let go, or lost (renew said so)
		case !time.Now().Before(h.leaseEndNow()):
			h.lose("renewals failed until its lease ran out", err)
			return
		default:
			h.c.log.Warn("eslm: renewal failed, retrying within the lease", "key", h.key, "error", err)
			next = min(next, time.Second)
		}
	}
}

// renew renews the grant for lease (0: the lease it was acquired with), retrying a 503 until
// deadline. A grant found gone is lost (and ErrNotHeld is returned).
func (h *hold) renew(ctx context.Context, lease time.Duration, deadline time.Time) error {
	body := keyedBody(h.scope, h.owner, h.acquisition, h.token)
	if lease <= 0 {
		lease = h.s.lease
	}
	if lease > 0 {
		body["lease"] = millis(lease)
	}
	path := actionPath(h.scope, h.key, "_renew")
	started := time.Now()
	data, err := h.c.retrying(ctx, deadline, "POST "+path, func() ([]byte, error) {
		return h.c.send(ctx, "POST", path, body)
	})
	if err != nil {
		if errors.Is(err, ErrNotHeld) && !h.isClosing() {
			h.lose("a renewal found it no longer held (expired, force-released or replaced)", err)
		}
		return err
	}
	var a grantAnswer
	if err := decode(data, &a); err != nil {
		return err
	}
	h.mu.Lock()
	h.leaseMs = a.LeaseMs
	h.leaseEnd = started.Add(time.Duration(a.LeaseMs) * time.Millisecond)
	h.mu.Unlock()
	return nil
}

// downgrade weakens the grant from exclusive to shared (POST /_locks/{key}/_downgrade),
// retrying a 503 within ctx's deadline, else within the lease; the token and the lease stay. A
// grant found gone is lost, and the loss returned.
func (h *hold) downgrade(ctx context.Context) error {
	body := keyedBody(h.scope, h.owner, h.acquisition, h.token)
	body["mode"] = "shared"
	path := actionPath(h.scope, h.key, "_downgrade")
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = h.leaseEndNow()
	}
	_, err := h.c.retrying(ctx, deadline, "POST "+path, func() ([]byte, error) {
		return h.c.send(ctx, "POST", path, body)
	})
	if errors.Is(err, ErrNotHeld) && !h.isClosing() {
		h.lose("the downgrade found it no longer held (expired, force-released or replaced)", err)
		if lost := h.err(); lost != nil {
			return lost
		}
	}
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.s.shared = true
	h.mu.Unlock()
	return nil
}

type watchAnswer struct {
	Changed bool    `json:"changed"`
	Reason  string  `json:"reason"`
	Leader  *string `json:"leader"`
	Term    uint64  `json:"term"`
}

// lossWatch long-polls the server for the end of this grant (a lock's _watch, a leadership's
// _observe of its term) until it is let go or lost.
func (h *hold) lossWatch(ctx context.Context) {
	for ctx.Err() == nil {
		waitMs := max(1000, h.renewInterval().Milliseconds())
		var path string
		if h.scope == scopeElection {
			path = fmt.Sprintf("%s/_observe?term=%d&wait=%dms", basePath(h.scope, h.key), h.token, waitMs)
		} else {
			path = fmt.Sprintf("%s/_watch?token=%d&wait=%dms&scope=%s", basePath(h.scope, h.key), h.token, waitMs,
				url.QueryEscape(h.scope))
		}
		data, err := h.c.send(ctx, "GET", path, nil)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if isStatus(err, 400) {
				h.c.log.Warn("eslm: the loss watch was refused; renewals alone will find a loss", "key", h.key, "error", err)
				return
			}
			h.c.log.Info("eslm: loss watch failed, retrying", "key", h.key, "error", err)
			if sleep(ctx, time.Second) != nil {
				return
			}
			continue
		}
		var a watchAnswer
		if decode(data, &a) != nil {
			continue
		}
		if a.Changed && ctx.Err() == nil {
			reason := a.Reason
			if reason == "" {
				leader := "none"
				if a.Leader != nil {
					leader = *a.Leader
				}
				reason = "its term ended; leader now " + leader
			}
			h.lose("the server ended it ("+reason+")", nil)
			return
		}
	}
}

func (h *hold) isClosing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closing
}

// lose marks the grant lost, once, unless it was let go: Err answers the loss and Done closes.
func (h *hold) lose(reason string, cause error) {
	h.mu.Lock()
	if h.lostErr != nil || h.released {
		h.mu.Unlock()
		return
	}
	h.lostErr = lostError(h.describe(), reason, cause)
	h.endLocked()
	stop := h.stop
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
	h.c.log.Warn("eslm: " + h.lostErr.Reason)
}

func (h *hold) describe() string {
	switch h.scope {
	case scopeElection:
		return fmt.Sprintf("the leadership of election [%s] (candidate [%s], term %d)", h.key, h.owner, h.token)
	case scopeSemaphore:
		return fmt.Sprintf("the permits of semaphore [%s] (owner [%s], token %d)", h.key, h.owner, h.token)
	default:
		return fmt.Sprintf("the lock [%s] (owner [%s], token %d)", h.key, h.owner, h.token)
	}
}

func (h *hold) endLocked() {
	if !h.ended {
		h.ended = true
		close(h.done)
	}
}

// err is the loss, or nil.
func (h *hold) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lostErr == nil {
		return nil
	}
	return h.lostErr
}

// markReleased ends the grant on purpose: it is no longer tracked, nothing can be lost after.
func (h *hold) markReleased() {
	h.mu.Lock()
	h.released = true
	h.closing = true
	h.endLocked()
	stop := h.stop
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
	h.c.untrack(h)
	if h.sess != nil {
		h.sess.forget(h)
	}
}

func (h *hold) isReleased() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.released
}

// release stops the watchdog and releases the grant (naming owner, token and acquisition),
// retrying a 503 within ctx's deadline, else the client's retryFor. A release that finds it
// not held reports the loss (ErrLost, matching ErrNotHeld too); a loss known before is
// reported the same way. A release that gets no answer leaves the grant to its lease, still
// tracked: calling it again (or Close) tries again.
func (h *hold) release(ctx context.Context) error {
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return h.err()
	}
	h.closing = true
	stop := h.stop
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
	h.bg.Wait()
	if h.sess != nil && h.sess.isEnded() {
		h.markReleased()
		return h.err()
	}
	body := keyedBody(h.scope, h.owner, h.acquisition, h.token)
	_, err := h.c.call(ctx, "POST", actionPath(h.scope, h.key, "_release"), body)
	if err != nil && !errors.Is(err, ErrNotHeld) {
		return err
	}
	if err != nil {
		h.mu.Lock()
		h.closing = false // a loss found now is still a loss
		h.mu.Unlock()
		h.lose("the release found it not held (expired, force-released or replaced)", err)
	}
	h.markReleased()
	return h.err()
}
