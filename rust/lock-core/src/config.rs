//! Settings of one lock table: lease and wait bounds, aging and limits.
//!
//! The plugin maps its node settings (`locks.lease.*`, `locks.wait.max`, `locks.priority.aging`,
//! `locks.max_waiters`, `locks.max_keys_per_request`, `locks.limits.*`) onto this record
//! (docs/API.md, "Settings").

use serde::{Deserialize, Serialize};

use crate::error::LockError;
use crate::types::{Millis, MAX_KEY_BYTES};

/// Limits that protect a partition from one caller. Every breach is a
/// [`LockError::LimitExceeded`] (or [`LockError::InvalidArgument`] for the key length) naming
/// the limit; nothing is changed by a refused request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Longest key in bytes (at most 512).
    pub max_key_bytes: usize,
    /// Most segments of a tree path.
    pub max_tree_depth: usize,
    /// Most requests queued on one key.
    pub max_waiters_per_key: usize,
    /// Most keys in one multi-lock request.
    pub max_keys_per_request: usize,
    /// Most locks held in the partition at once (a tree lock counts once).
    pub max_locks: usize,
    /// Most requests queued in the partition at once.
    pub max_waiters: usize,
    /// Most open sessions.
    pub max_sessions: usize,
    /// Most watches registered in the partition at once (`locks.limits.max_watches`).
    pub max_watches: usize,
    /// Most locks one owner holds in the partition (`locks.limits.max_locks_per_owner`).
    pub max_locks_per_owner: usize,
    /// Most requests one owner has queued in the partition.
    pub max_waiters_per_owner: usize,
    /// Most open sessions of one owner in the partition.
    pub max_sessions_per_owner: usize,
    /// The partition's estimated memory (see [`crate::MemoryUsage`]) past which new locks,
    /// waiters and sessions are refused (`locks.limits.max_memory`).
    pub max_memory_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_key_bytes: MAX_KEY_BYTES,
            max_tree_depth: 32,
            max_waiters_per_key: 10_000,
            max_keys_per_request: 100,
            max_locks: 1_000_000,
            max_waiters: 100_000,
            max_sessions: 100_000,
            max_watches: 100_000,
            max_locks_per_owner: 100_000,
            max_waiters_per_owner: 10_000,
            max_sessions_per_owner: 1_000,
            max_memory_bytes: 256 << 20,
        }
    }
}

/// The settings of one lock table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Lease of a grant whose request names none (`locks.lease.default`).
    pub default_lease_ms: Millis,
    /// Longest lease and session TTL (`locks.lease.max`); longer requests are capped.
    pub max_lease_ms: Millis,
    /// Longest wait (`locks.wait.max`); longer requests are capped.
    pub max_wait_ms: Millis,
    /// Wait of an acquire whose body names none (`locks.wait.default`), filled in where the
    /// plugin's bodies are read (rust/lock-jni `ops/requests`); the table itself never reads it.
    pub default_wait_ms: Millis,
    /// Aging (`locks.priority.aging`): a waiter gains one priority level per this many
    /// milliseconds waited. 0 turns aging off (pure priority order, then FIFO).
    pub aging_ms: Millis,
    /// Number of hottest keys tracked (a bounded top-k sketch).
    pub hot_keys: usize,
    /// Unused keys and owners kept interned before a sweep frees them, so a key locked and
    /// unlocked over and over costs no allocation.
    pub idle_cache: usize,
    /// Lock-delay of a grant whose request names none (`locks.lock_delay.default`): after a
    /// lock ends without its holder's release (lease or session expiry, force-release), its
    /// keys are not granted to another owner for this long (docs/LOCK_CORE.md, "Lock-delay").
    /// 0: off.
    pub default_lock_delay_ms: Millis,
    pub limits: Limits,
    /// Lock history records kept until drained, 0 = no history (`locks.audit.enabled` and
    /// `locks.audit.buffer_size`; docs/LOCK_CORE.md "Lock history"). Past it, records are
    /// dropped and counted.
    pub audit_capacity: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            default_lease_ms: 30_000,
            max_lease_ms: 600_000,
            max_wait_ms: 300_000,
            default_wait_ms: 0,
            aging_ms: 1_000,
            hot_keys: 16,
            idle_cache: 4096,
            default_lock_delay_ms: 0,
            limits: Limits::default(),
            audit_capacity: 0,
        }
    }
}

/// Longest lock-delay accepted, by a request or the setting: a minute (as Consul's). A delay
/// keeps a key from everyone else with nobody to renew or release it, so it stays short.
pub const MAX_LOCK_DELAY_MS: Millis = 60_000;

/// Longest aging step accepted: one day (keeps queue ranks far from overflow).
pub const MAX_AGING_MS: Millis = 86_400_000;

/// The largest lock history buffer of one table ([`Config::audit_capacity`]).
pub const MAX_AUDIT_CAPACITY: usize = 1_000_000;

/// The longest lease or wait any configuration accepts: a year. A snapshot's leases are
/// imported as recorded up to this (a lease above it was never granted by any configuration).
pub const MAX_LEASE_EVER_MS: Millis = MAX_AGING_MS * 365;

impl Config {
    /// Checks the settings, naming the first bad one.
    pub fn validate(&self) -> Result<(), LockError> {
        if self.default_lease_ms == 0 || self.max_lease_ms == 0 {
            return Err(LockError::invalid("lease", "lease settings must be positive"));
        }
        if self.default_lease_ms > self.max_lease_ms {
            return Err(LockError::invalid("default_lease_ms", "must not exceed max_lease_ms"));
        }
        if self.max_lease_ms > MAX_LEASE_EVER_MS || self.max_wait_ms > MAX_LEASE_EVER_MS {
            return Err(LockError::invalid("max_lease_ms", "must be at most a year"));
        }
        if self.default_wait_ms > self.max_wait_ms {
            return Err(LockError::invalid("default_wait_ms", "must not exceed max_wait_ms"));
        }
        if self.default_lock_delay_ms > MAX_LOCK_DELAY_MS {
            return Err(LockError::invalid("default_lock_delay_ms", "must be at most a minute"));
        }
        if self.aging_ms > MAX_AGING_MS {
            return Err(LockError::invalid("aging_ms", "must be at most one day"));
        }
        if self.audit_capacity > MAX_AUDIT_CAPACITY {
            return Err(LockError::invalid("audit_capacity", "must be at most 1000000"));
        }
        let l = &self.limits;
        if l.max_key_bytes == 0 || l.max_key_bytes > MAX_KEY_BYTES {
            return Err(LockError::invalid("max_key_bytes", "must be 1..=512"));
        }
        if l.max_tree_depth == 0 || l.max_keys_per_request == 0 {
            return Err(LockError::invalid(
                "limits",
                "depth and keys per request must be positive",
            ));
        }
        let counts = [
            ("max_waiters_per_key", l.max_waiters_per_key),
            ("max_locks", l.max_locks),
            ("max_waiters", l.max_waiters),
            ("max_sessions", l.max_sessions),
            ("max_watches", l.max_watches),
            ("max_locks_per_owner", l.max_locks_per_owner),
            ("max_waiters_per_owner", l.max_waiters_per_owner),
            ("max_sessions_per_owner", l.max_sessions_per_owner),
        ];
        if let Some((name, _)) = counts.iter().find(|(_, v)| *v == 0) {
            return Err(LockError::invalid(name, "must be positive"));
        }
        if l.max_memory_bytes == 0 {
            return Err(LockError::invalid("max_memory_bytes", "must be positive"));
        }
        Ok(())
    }
}
