package eslm

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elastic/go-elasticsearch/v9/esapi"
)

// Client is the lock manager's client over your own Elasticsearch client: every request goes
// through its Perform (an *elasticsearch.Client, *elasticsearch.TypedClient or any
// esapi.Transport), so its authentication, TLS, node pool and retries apply. One Client per
// application is enough; it is safe for concurrent use. Close releases every lock it still
// holds and ends its sessions.
type Client struct {
	es       esapi.Transport
	owner    string // every acquire's owner when set (WithOwner); else one per acquisition
	identity string // host/pid/random
	seq      atomic.Uint64
	retryFor time.Duration
	fraction float64
	watch    bool
	log      *slog.Logger

	mu       sync.Mutex
	closed   bool
	holds    map[*hold]struct{}
	sessions map[*Session]struct{}
	wg       sync.WaitGroup // background work: releases of abandoned grants
	// stopped ends with Close: acquires still waiting then are cut short (ErrClosed).
	stopped context.Context
	stop    context.CancelFunc
}

// ClientOption configures a Client (NewClient).
type ClientOption func(*Client) error

// WithOwner makes every acquire of the client (not under a session) use this owner, instead
// of an owner of its own per acquisition. Two acquires of one key under one owner do not
// exclude each other: the second replaces the first's grant under a newer token (docs/API.md
// "Acquisitions"), so use it only where one owner per process is what you want.
func WithOwner(owner string) ClientOption {
	return func(c *Client) error {
		if err := checkName(owner, "owner"); err != nil {
			return err
		}
		c.owner = owner
		return nil
	}
}

// WithRetryFor bounds how long calls without a budget of their own (Unlock, Release, Resign,
// Close, sessions, reads, a TryLock without a context deadline is not retried) retry a 503
// when their context has no deadline. Default 10s.
func WithRetryFor(d time.Duration) ClientOption {
	return func(c *Client) error {
		if d < 0 {
			return invalid("[retry_for] must be >= 0, got [%s]", d)
		}
		c.retryFor = d
		return nil
	}
}

// WithRenewFraction sets how often the watchdog renews a lock (and a session its keep-alive):
// every lease × fraction. Default 1/3.
func WithRenewFraction(f float64) ClientOption {
	return func(c *Client) error {
		if !(f > 0 && f < 1) {
			return invalid("[renew_fraction] must be between 0 and 1, got [%v]", f)
		}
		c.fraction = f
		return nil
	}
}

// WithoutLossWatch turns the loss watches off: a held lock's loss is then found by its next
// renewal (within a third of its lease) rather than at once by a long poll of
// GET /_locks/{key}/_watch. Each watch holds one connection while its lock is held.
func WithoutLossWatch() ClientOption {
	return func(c *Client) error {
		c.watch = false
		return nil
	}
}

// WithLogger sets where the client logs losses, retries and failed background work (default
// slog.Default()).
func WithLogger(l *slog.Logger) ClientOption {
	return func(c *Client) error {
		if l == nil {
			return invalid("[logger] must not be nil")
		}
		c.log = l
		return nil
	}
}

// NewClient returns a lock client that sends every request through es (an
// *elasticsearch.Client, or any esapi.Transport). Bad options are refused (ErrInvalidArgument)
// before anything is sent.
//
// The official client retries 502, 503 and 504 answers itself by default (up to 3 times, at
// once, on the next node). This client retries a 503 with a backoff within each call's budget
// on top of that; to leave the 503s to this client alone, configure the official client with
// RetryOnStatus: []int{502, 504}.
func NewClient(es esapi.Transport, opts ...ClientOption) (*Client, error) {
	if es == nil {
		return nil, invalid("[es] must be an Elasticsearch client (esapi.Transport), got nil")
	}
	host, _ := os.Hostname()
	c := &Client{
		es:       es,
		identity: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), randomHex(6)),
		retryFor: 10 * time.Second,
		fraction: 1.0 / 3,
		watch:    true,
		log:      slog.Default(),
		holds:    map[*hold]struct{}{},
		sessions: map[*Session]struct{}{},
	}
	for _, opt := range opts {
		if err := opt(c); err != nil {
			return nil, err
		}
	}
	c.stopped, c.stop = context.WithCancel(context.Background())
	return c, nil
}

// Close cuts short the acquires still waiting (they answer ErrClosed), releases every lock the
// client still holds (not under a session), ends every session it opened (releasing their
// locks), and stops its background work. Calls after it answer
// ErrClosed. It returns the first failure, if any (a lock whose release failed ends with its
// lease). The Elasticsearch client stays yours to close.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	holds := make([]*hold, 0, len(c.holds))
	for h := range c.holds {
		holds = append(holds, h)
	}
	sessions := make([]*Session, 0, len(c.sessions))
	for s := range c.sessions {
		sessions = append(sessions, s)
	}
	c.mu.Unlock()
	c.stop()
	var first error
	for _, h := range holds {
		if err := h.release(ctx); err != nil && !errors.Is(err, ErrLost) {
			c.log.Warn("eslm: closing the client: a lock was not released cleanly", "key", h.key, "error", err)
			if first == nil {
				first = err
			}
		}
	}
	for _, s := range sessions {
		if err := s.Close(ctx); err != nil && first == nil {
			first = err
		}
	}
	c.wg.Wait()
	return first
}

func (c *Client) checkOpen() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return closedError("the client")
	}
	return nil
}

// track adds a held lock for Close; false when the client is closed.
func (c *Client) track(h *hold) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.holds[h] = struct{}{}
	return true
}

func (c *Client) untrack(h *hold) {
	c.mu.Lock()
	delete(c.holds, h)
	c.mu.Unlock()
}

// freshOwner is an owner nobody else uses: the client's identity and a sequence number.
func (c *Client) freshOwner() string {
	return fmt.Sprintf("%s/%d", c.identity, c.seq.Add(1))
}

func (c *Client) ownerFor(s *Session) string {
	switch {
	case s != nil:
		return s.owner
	case c.owner != "":
		return c.owner
	default:
		return c.freshOwner()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

// newAcquisition is a fresh acquisition id (docs/API.md "Acquisitions"): 128 random bits.
func newAcquisition() string { return randomHex(16) }

// --- requests --------------------------------------------------------------------------------

// send performs one request through the user's transport and answers the body of a 2xx
// answer, or the *Error of an error answer. A request cut short by ctx answers ctx's error
// (wrapped); no answer at all is ErrConnection.
func (c *Client) send(ctx context.Context, method, path string, body any) ([]byte, error) {
	if body == nil {
		return c.sendRaw(ctx, method, path, "", nil)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, invalid("the request body cannot be written as JSON: %v", err)
	}
	return c.sendRaw(ctx, method, path, "application/json", b)
}

// sendRaw is send with a body already written, of the given content type (none: no body).
func (c *Client) sendRaw(ctx context.Context, method, path, contentType string, body []byte) ([]byte, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, reader)
	if err != nil {
		return nil, invalid("bad request path %q: %v", path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := c.es.Perform(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("eslm: %s %s: %w", method, path, context.Cause(ctx))
		}
		return nil, clientError("connection", fmt.Sprintf("%s %s: no answer: %v", method, path, err), err, ErrConnection)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("eslm: %s %s: %w", method, path, context.Cause(ctx))
		}
		return nil, clientError("connection", fmt.Sprintf("%s %s: answer cut short: %v", method, path, err), err, ErrConnection)
	}
	if res.StatusCode >= 300 {
		return nil, fromResponse(res.StatusCode, data)
	}
	return data, nil
}

// 503 backoff: 50 ms doubling to 1 s, each delay drawn from its upper half (jitter), as the
// Python client's; a 503 that names retry_after_ms is retried after that long.
const (
	backoffFirst = 50 * time.Millisecond
	backoffMax   = time.Second
)

func backoff(attempt int) time.Duration {
	d := backoffFirst << min(attempt, 10)
	if d > backoffMax {
		d = backoffMax
	}
	return d/2 + rand.N(d/2+1)
}

// retryDelay is how long to wait before retrying err, a 503: the backoff, or the answer's
// retry_after_ms when that is longer, up to the backoff's cap (a recovery grace names all of
// its time left; the call still retries within its own budget, as the Python client does).
func retryDelay(err error, attempt int) time.Duration {
	d := backoff(attempt)
	var e *Error
	if errors.As(err, &e) {
		if hint := time.Duration(e.RetryAfterMs()) * time.Millisecond; hint > d {
			d = min(hint, backoffMax) + rand.N(20*time.Millisecond)
		}
	}
	return d
}

// budget is when a call without a wait of its own stops retrying a 503: ctx's deadline, else
// the client's retryFor from now.
func (c *Client) budget(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(c.retryFor)
}

// retrying runs attempt until it answers something other than a 503, retrying a 503 after a
// backoff while the next attempt still starts before deadline (the zero time: no deadline).
func (c *Client) retrying(ctx context.Context, deadline time.Time, what string, attempt func() ([]byte, error)) ([]byte, error) {
	for n := 0; ; n++ {
		data, err := attempt()
		if err == nil || !isStatus(err, 503) {
			return data, err
		}
		delay := retryDelay(err, n)
		if !deadline.IsZero() && !time.Now().Add(delay).Before(deadline) {
			return nil, err
		}
		c.log.Info("eslm: answered 503, retrying", "request", what, "retry", n+1, "delay", delay, "error", err)
		if err := sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
}

// call sends one request, retrying a 503 until ctx's deadline (else the client's retryFor).
func (c *Client) call(ctx context.Context, method, path string, body any) ([]byte, error) {
	return c.retrying(ctx, c.budget(ctx), method+" "+path, func() ([]byte, error) {
		return c.send(ctx, method, path, body)
	})
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// answerMargin is how long a request that queues on the server (an acquire with a wait) may
// take beyond its caller's deadline for the server's own answer (granted, or 409 when the wait
// ran out at that deadline) to arrive, before the client gives up on it. The node that routes a
// request may hold it longer than its wait while the key's partition has no owner ready
// (docs/API.md "Errors", 503: up to routingBudget in all, e.g. the last seconds of a recovery
// grace), so a request is never cut before routingBudget + answerMargin either.
const (
	answerMargin  = 5 * time.Second
	routingBudget = 10 * time.Second
)

// sendWaiting sends a request that queues on the server until about ctx's deadline: it is not
// cut at the deadline itself (the server answers then, and a grant made in that instant must
// not be lost), only answerMargin after it (and no sooner than routingBudget + answerMargin
// after it was sent), or at once when ctx is cancelled.
func (c *Client) sendWaiting(ctx context.Context, method, path string, body any) ([]byte, error) {
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	earliestCut := time.Now().Add(routingBudget + answerMargin)
	var timer *time.Timer
	var timerMu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel(context.Cause(ctx))
			return
		}
		timerMu.Lock()
		timer = time.AfterFunc(max(answerMargin, time.Until(earliestCut)), func() { cancel(context.Cause(ctx)) })
		timerMu.Unlock()
	})
	defer func() {
		stop()
		timerMu.Lock()
		if timer != nil {
			timer.Stop()
		}
		timerMu.Unlock()
	}()
	return c.send(rctx, method, path, body)
}

// decode reads a JSON answer into v.
func decode(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return clientError("bad_answer", fmt.Sprintf("unexpected answer %q: %v", truncate(data), err), err, ErrConnection)
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// background runs f in the background, counted for Close; once the client is closed, at once.
func (c *Client) background(f func()) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		f()
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		f()
	}()
}
