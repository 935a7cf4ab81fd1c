package eslm

import (
	"context"
	"errors"
	"fmt"
)

// ErrNoLeader is answered by Election.Leader when nobody leads.
var ErrNoLeader = errors.New("eslm: election has no leader")

// Election is a leader election (docs/API.md "Elections"), in the manner of etcd's
// concurrency.Election: Campaign waits until this candidate is elected, Resign steps down,
// Leader reads who leads, Observe follows the leaders. A leadership is a lock of its own kind:
// its term is a fencing token (Term), it is renewed by a watchdog every lease/3 (made on a
// Session: by its keep-alive) and watched, and Done is closed when it is lost or resigned.
// Every Campaign is a candidate of its own (unless the client has WithOwner, or the Election is
// made on a Session). Safe for concurrent use: one leadership at a time per Election.
type Election struct {
	m    *Mutex
	name string
}

// LeaderState is an election's state: Leader "" and Term 0 when nobody leads.
type LeaderState struct {
	Name       string   `json:"name"`
	Leader     string   `json:"leader"`
	Value      string   `json:"value"`
	Term       uint64   `json:"term"`
	LeaseMs    int64    `json:"lease_ms"`
	Candidates []string `json:"candidates"`
}

type leaderAnswer struct {
	Name       string   `json:"name"`
	Leader     *string  `json:"leader"`
	Value      *string  `json:"value"`
	Term       uint64   `json:"term"`
	LeaseMs    int64    `json:"lease_ms"`
	Candidates []string `json:"candidates"`
	Changed    bool     `json:"changed"`
}

func (a *leaderAnswer) state() LeaderState {
	s := LeaderState{Name: a.Name, Term: a.Term, LeaseMs: a.LeaseMs, Candidates: a.Candidates}
	if a.Leader != nil {
		s.Leader = *a.Leader
	}
	if a.Value != nil {
		s.Value = *a.Value
	}
	return s
}

// NewElection returns election name, campaigned in through h. Options: WithLease,
// WithLockDelay, WithoutKeepAlive.
func NewElection(h Holder, name string, opts ...Option) *Election {
	return &Election{m: newMutex(h, scopeElection, name, opts), name: name}
}

// Campaign waits until this candidate is elected, publishing value (at most 1024 bytes) with
// its leadership; ctx's deadline (ErrWaitTimeout) or cancellation ends the wait.
func (e *Election) Campaign(ctx context.Context, value string) error {
	return e.m.lock(ctx, &value, true)
}

// TryCampaign is elected only if nobody leads now; ErrLocked otherwise.
func (e *Election) TryCampaign(ctx context.Context, value string) error {
	return e.m.lock(ctx, &value, false)
}

// Resign ends this candidate's leadership; the next queued candidate is elected at once.
// ErrLost if it turned out lost.
func (e *Election) Resign(ctx context.Context) error { return e.m.Unlock(ctx) }

// Term is the term of the leadership held now (or last): a fencing token for the leader's writes.
func (e *Election) Term() uint64 { return e.m.Token() }

// Candidate is the candidate of the leadership held now (or last).
func (e *Election) Candidate() string { return e.m.Owner() }

// Done is closed when the leadership held now ends: lost (Err says why) or resigned.
func (e *Election) Done() <-chan struct{} { return e.m.Done() }

// Err is nil unless the leadership held now (or last) was lost.
func (e *Election) Err() error { return e.m.Err() }

// Leader answers the election's state (GET /_elections/{name}); ErrNoLeader when nobody leads.
func (e *Election) Leader(ctx context.Context) (*LeaderState, error) {
	if e.m.c == nil {
		return nil, invalid("[holder] must be a *Client or a *Session, got nil")
	}
	if err := checkName(e.name, "name"); err != nil {
		return nil, err
	}
	data, err := e.m.c.call(ctx, "GET", basePath(scopeElection, e.name), nil)
	if err != nil {
		return nil, err
	}
	var a leaderAnswer
	if err := decode(data, &a); err != nil {
		return nil, err
	}
	s := a.state()
	if s.Leader == "" {
		return &s, ErrNoLeader
	}
	return &s, nil
}

// Observe follows the election's leaders: the channel receives the current leader (once there
// is one) and each new leadership after it, in order, until ctx ends, when it is closed. It
// long-polls GET /_elections/{name}/_observe; failed polls are retried after a second.
func (e *Election) Observe(ctx context.Context) <-chan LeaderState {
	ch := make(chan LeaderState)
	c := e.m.c
	go func() {
		defer close(ch)
		if c == nil || checkName(e.name, "name") != nil {
			return
		}
		var term uint64
		for ctx.Err() == nil {
			path := fmt.Sprintf("%s/_observe?term=%d&wait=30s", basePath(scopeElection, e.name), term)
			data, err := c.sendWaiting(ctx, "GET", path, nil)
			if err != nil {
				if ctx.Err() == nil {
					c.log.Info("eslm: observe failed, retrying", "election", e.name, "error", err)
					_ = sleep(ctx, backoff(5))
				}
				continue
			}
			var a leaderAnswer
			if decode(data, &a) != nil || !a.Changed {
				continue
			}
			term = a.Term
			if a.Leader == nil {
				continue
			}
			select {
			case ch <- a.state():
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}
