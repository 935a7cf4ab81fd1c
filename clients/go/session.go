package eslm

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"
)

// Session is many locks under one lease with one keep-alive (docs/API.md "Sessions"), as etcd's
// concurrency.Session: created by NewSession, kept alive in the background every ttl/3, ended
// by Close, which releases every lock taken under it. Locks, semaphores and elections made on
// a Session (NewMutex(s, ...)) follow its lease and have no watchdog of their own; when the
// session is lost (a keep-alive finds it gone, or keep-alives fail for its whole ttl), Done
// closes and every lock under it is lost too.
//
// The locks of one session share its owner: two Mutexes of one Session on one key do not
// exclude each other (the second acquire replaces the first's grant under a newer token, and
// the first is then found lost at its Unlock). Use one Mutex per key per session.
type Session struct {
	c     *Client
	owner string
	id    string
	ttl   time.Duration

	mu      sync.Mutex
	expires time.Time
	lostErr *Error
	ended   bool
	holds   map[*hold]struct{}
	done    chan struct{}
	closed  bool // done closed
	stop    context.CancelFunc
	bg      sync.WaitGroup
}

// SessionOption configures a Session (NewSession).
type SessionOption func(*sessionSettings)

type sessionSettings struct {
	ttl     time.Duration
	routing string
	errs    []error
}

// WithTTL sets the session's lease (default: the server's locks.lease.default).
func WithTTL(d time.Duration) SessionOption {
	return func(s *sessionSettings) {
		if d <= 0 {
			s.errs = append(s.errs, invalid("[ttl] must be > 0, got [%s]", d))
		}
		s.ttl = d
	}
}

// WithRouting places the session in the partition of this hash tag (docs/API.md "Partitions
// and hash tags"): the tag of the keys it will lock, with more than one partition.
func WithRouting(routing string) SessionOption {
	return func(s *sessionSettings) {
		if err := checkName(routing, "routing"); err != nil {
			s.errs = append(s.errs, err)
		}
		s.routing = routing
	}
}

func (s *Session) holder() (*Client, *Session) { return s.c, s }

type sessionAnswer struct {
	Session string `json:"session"`
	TTLMs   int64  `json:"ttl_ms"`
}

// NewSession creates a session (POST /_locks/_session) under an owner of its own (or the
// client's WithOwner) and starts its keep-alive. A 503 is retried within ctx's deadline, else
// the client's retryFor.
func NewSession(ctx context.Context, c *Client, opts ...SessionOption) (*Session, error) {
	if c == nil {
		return nil, invalid("[client] must not be nil")
	}
	var ss sessionSettings
	for _, o := range opts {
		if o == nil {
			return nil, invalid("a session option is nil")
		}
		o(&ss)
	}
	if len(ss.errs) > 0 {
		return nil, ss.errs[0]
	}
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	s := &Session{c: c, owner: c.ownerFor(nil), holds: map[*hold]struct{}{}, done: make(chan struct{})}
	body := map[string]any{"owner": s.owner}
	if ss.ttl > 0 {
		body["ttl"] = millis(ss.ttl)
	}
	if ss.routing != "" {
		body["routing"] = ss.routing
	}
	started := time.Now()
	data, err := c.call(ctx, "POST", "/_locks/_session", body)
	if err != nil {
		return nil, err
	}
	var a sessionAnswer
	if err := decode(data, &a); err != nil {
		return nil, err
	}
	s.id, s.ttl = a.Session, time.Duration(a.TTLMs)*time.Millisecond
	s.expires = started.Add(s.ttl)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = s.end(context.Background())
		return nil, closedError("the client")
	}
	c.sessions[s] = struct{}{}
	c.mu.Unlock()
	bg, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.keepAlive(bg)
	}()
	return s, nil
}

// ID is the session's id.
func (s *Session) ID() string { return s.id }

// Owner is the owner of the session and of every lock under it.
func (s *Session) Owner() string { return s.owner }

// TTL is the session's lease as the server granted it.
func (s *Session) TTL() time.Duration { return s.ttl }

// Done is closed when the session ends: lost, or closed.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is nil unless the session was lost (then an *Error matching ErrLost).
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lostErr == nil {
		return nil
	}
	return s.lostErr
}

func (s *Session) keepAlive(ctx context.Context) {
	path := fmt.Sprintf("/_locks/_session/%s/_keepalive", url.PathEscape(s.id))
	for {
		interval := time.Duration(float64(s.ttl) * s.c.fraction)
		if sleep(ctx, interval) != nil {
			return
		}
		for {
			started := time.Now()
			s.mu.Lock()
			expires := s.expires
			s.mu.Unlock()
			data, err := s.c.retrying(ctx, expires, "POST "+path, func() ([]byte, error) {
				return s.c.send(ctx, "POST", path, map[string]any{"owner": s.owner})
			})
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				var a sessionAnswer
				if decode(data, &a) == nil {
					s.mu.Lock()
					s.expires = started.Add(time.Duration(a.TTLMs) * time.Millisecond)
					s.mu.Unlock()
				}
				break
			}
			if errors.Is(err, ErrSessionNotFound) {
				s.lose("a keep-alive found it gone (expired or ended)", err)
				return
			}
			if !time.Now().Before(expires) {
				s.lose("keep-alives failed until its ttl ran out", err)
				return
			}
			s.c.log.Warn("eslm: session keep-alive failed, retrying within its ttl", "session", s.id, "error", err)
			if sleep(ctx, min(interval, time.Second)) != nil {
				return
			}
		}
	}
}

// lose marks the session lost, once, and loses every lock under it.
func (s *Session) lose(reason string, cause error) {
	s.mu.Lock()
	if s.lostErr != nil || s.ended {
		s.mu.Unlock()
		return
	}
	s.lostErr = lostError(fmt.Sprintf("session [%s] of [%s]", s.id, s.owner), reason, cause)
	holds := s.snapshot()
	s.mu.Unlock()
	s.c.log.Warn("eslm: " + s.lostErr.Reason)
	for _, h := range holds { // before Done closes: whoever sees it sees them lost too
		h.lose("its session was lost", s.lostErr)
	}
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.mu.Unlock()
}

func (s *Session) snapshot() []*hold {
	holds := make([]*hold, 0, len(s.holds))
	for h := range s.holds {
		holds = append(holds, h)
	}
	return holds
}

// usable refuses an acquire under a session that ended or was lost.
func (s *Session) usable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lostErr != nil {
		return s.lostErr
	}
	if s.ended {
		return closedError(fmt.Sprintf("session [%s]", s.id))
	}
	return nil
}

func (s *Session) adopt(h *hold) {
	s.mu.Lock()
	s.holds[h] = struct{}{}
	lost := s.lostErr
	s.mu.Unlock()
	if lost != nil {
		h.lose("its session was lost", lost)
	}
}

func (s *Session) forget(h *hold) {
	s.mu.Lock()
	delete(s.holds, h)
	s.mu.Unlock()
}

func (s *Session) isEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// Close ends the session (DELETE /_locks/_session/{id}), which releases every lock under it,
// and stops its keep-alive. It answers the loss (ErrLost) if the session was lost, and an
// error if the end got no answer (the session then ends with its ttl). Closing twice does
// nothing.
func (s *Session) Close(ctx context.Context) error {
	if s.stop != nil {
		s.stop()
	}
	s.bg.Wait()
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return s.Err()
	}
	s.mu.Unlock()
	err := s.end(ctx)
	s.c.mu.Lock()
	delete(s.c.sessions, s)
	s.c.mu.Unlock()
	if err != nil && !errors.Is(err, ErrSessionNotFound) {
		return err
	}
	if err != nil {
		s.lose("ending it found it gone (expired)", err)
	}
	s.mu.Lock()
	s.ended = true
	holds := s.snapshot()
	s.mu.Unlock()
	for _, h := range holds {
		h.markReleased()
	}
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	s.mu.Unlock()
	return s.Err()
}

func (s *Session) end(ctx context.Context) error {
	_, err := s.c.call(ctx, "DELETE", "/_locks/_session/"+url.PathEscape(s.id), map[string]any{"owner": s.owner})
	return err
}
