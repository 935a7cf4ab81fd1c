package eslm

import (
	"fmt"
	"net/url"
	"time"
	"unicode/utf8"
)

// Priorities of an acquire (docs/API.md "Priorities"): 0 (lowest) to 9; waiters are served by
// priority, then in arrival order.
const (
	PriorityBackground = 2
	PriorityForeground = 7 // the server's default
)

const (
	maxNameBytes      = 512
	maxValueBytes     = 1024
	maxSemaphoreLimit = 65535
	maxLockDelay      = time.Minute
)

// The scopes of the server's grants.
const (
	scopeKey       = "key"
	scopeTree      = "tree"
	scopeSemaphore = "semaphore"
	scopeElection  = "election"
)

// Option configures a Mutex, RWMutex, Semaphore or Election. Options that do not apply to the
// kind they are given to, and bad values, are refused (ErrInvalidArgument) by its first call,
// before anything is sent.
type Option func(*settings)

type settings struct {
	lease     time.Duration // 0: the server's locks.lease.default
	priority  int           // -1: the server's default (foreground)
	tree      bool
	shared    bool
	lockDelay time.Duration // -1: the server's default
	keepAlive bool
	permits   int // semaphores
	errs      []error
}

func defaultSettings() settings {
	return settings{priority: -1, lockDelay: -1, keepAlive: true, permits: 1}
}

// WithLease sets the lease of each grant (default: the server's locks.lease.default, 30s). The
// watchdog renews it every lease/3 while held; it is ignored under a Session, whose ttl applies.
func WithLease(d time.Duration) Option {
	return func(s *settings) {
		if d <= 0 {
			s.errs = append(s.errs, invalid("[lease] must be > 0, got [%s]", d))
		}
		s.lease = d
	}
}

// WithPriority sets the queue priority of the acquires: 0 (lowest) to 9, PriorityBackground
// or PriorityForeground (the default).
func WithPriority(p int) Option {
	return func(s *settings) {
		if p < 0 || p > 9 {
			s.errs = append(s.errs, invalid("[priority] must be 0..9, got [%d]", p))
		}
		s.priority = p
	}
}

// WithTree locks the key as a path in a tree of locks (docs/API.md "Scopes"): the key must be
// an absolute path such as /orders/eu/42. Not for semaphores and elections.
func WithTree() Option { return func(s *settings) { s.tree = true } }

// WithShared takes the lock in shared mode (any number of shared holders, no exclusive one)
// instead of exclusive. An RWMutex's RLock does this for you. Not for semaphores and elections.
func WithShared() Option { return func(s *settings) { s.shared = true } }

// WithLockDelay keeps the key from other owners for d after the lock ends without a release
// (its lease ran out, or it was force-released): docs/API.md "Lock-delay". At most a minute;
// 0 turns the server's default delay off for this lock. Not for semaphores.
func WithLockDelay(d time.Duration) Option {
	return func(s *settings) {
		if d < 0 || d > maxLockDelay {
			s.errs = append(s.errs, invalid("[lock_delay] must be 0..1m, got [%s]", d))
		}
		s.lockDelay = d
	}
}

// WithoutKeepAlive turns the lease watchdog off: the grant is not renewed in the background
// and ends when its lease runs out unless renewed by hand (Renew). Its loss is still watched.
func WithoutKeepAlive() Option { return func(s *settings) { s.keepAlive = false } }

// WithPermits sets how many permits of a Semaphore each acquire takes (default 1).
func WithPermits(n int) Option {
	return func(s *settings) {
		if n < 1 || n > maxSemaphoreLimit {
			s.errs = append(s.errs, invalid("[permits] must be 1..%d, got [%d]", maxSemaphoreLimit, n))
		}
		s.permits = n
	}
}

// resolve applies opts for a grant of scope and checks them.
func resolve(scope string, opts []Option) (settings, error) {
	s := defaultSettings()
	for _, o := range opts {
		if o == nil {
			return s, invalid("an option is nil")
		}
		o(&s)
	}
	if len(s.errs) > 0 {
		return s, s.errs[0]
	}
	if scope != scopeKey && (s.tree || s.shared) {
		return s, invalid("[mode] and [scope] are for locks, not for a %s", scope)
	}
	if scope == scopeSemaphore && s.lockDelay >= 0 {
		return s, invalid("[lock_delay] a semaphore has no lock-delay")
	}
	if scope != scopeSemaphore && s.permits != 1 {
		return s, invalid("[permits] are for semaphores, not for a %s", scope)
	}
	if scope == scopeElection && s.priority >= 0 {
		return s, invalid("[priority] a campaign has no priority")
	}
	return s, nil
}

func (s settings) scope(kind string) string {
	if kind == scopeKey && s.tree {
		return scopeTree
	}
	return kind
}

func (s settings) mode() string {
	if s.shared {
		return "shared"
	}
	return "exclusive"
}

// checkName checks a key, owner or name: 1 to 512 bytes of UTF-8 (the server checks the rest).
func checkName(v, name string) error {
	if v == "" {
		return invalid("[%s] must be a non-empty string", name)
	}
	if !utf8.ValidString(v) {
		return invalid("[%s] must be valid UTF-8", name)
	}
	if len(v) > maxNameBytes {
		return invalid("[%s] must be at most %d bytes (UTF-8), got %d", name, maxNameBytes, len(v))
	}
	return nil
}

func checkTreePath(key string) error {
	if len(key) < 2 || key[0] != '/' || key[len(key)-1] == '/' {
		return invalid("[key] a tree lock's key is an absolute path such as /orders/eu/42, got [%s]", key)
	}
	return nil
}

// millis is d as whole milliseconds, a positive fraction of one counting as 1.
func millis(d time.Duration) int64 {
	ms := d.Milliseconds()
	if d > 0 && ms == 0 {
		return 1
	}
	if time.Duration(ms)*time.Millisecond < d {
		ms++
	}
	return ms
}

// basePath is the path of a grant's endpoints by scope.
func basePath(scope, key string) string {
	switch scope {
	case scopeSemaphore:
		return "/_semaphores/" + url.PathEscape(key)
	case scopeElection:
		return "/_elections/" + url.PathEscape(key)
	default:
		return "/_locks/" + url.PathEscape(key)
	}
}

// actionPath is the path of an action on a grant: an election's acquire is _campaign and its
// release _resign.
func actionPath(scope, key, action string) string {
	if scope == scopeElection {
		switch action {
		case "_acquire":
			action = "_campaign"
		case "_release":
			action = "_resign"
		}
	}
	return fmt.Sprintf("%s/%s", basePath(scope, key), action)
}
