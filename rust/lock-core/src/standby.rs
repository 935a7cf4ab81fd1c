//! The standby table a replica keeps: the primary's held locks, sessions and fencing counter,
//! kept current by applying [`PartitionDelta`]s in `seq` order, and turned into a
//! [`PartitionSnapshot`] when the replica is promoted (docs/LOCK_CORE.md, "Replication
//! support").
//!
//! A standby is passive: it grants, expires and queues nothing, and never reads a clock. It
//! keeps every lease and session expiry as "time left when applied" plus the time it was
//! applied, so a snapshot counts down from the apply. The primary measured "time left" before
//! the replica applied it, so a lease on the standby never ends earlier than on the primary;
//! a promoted replica never hands a key on while its old holder may still use it.

use std::collections::BTreeMap;

use crate::error::LockError;
use crate::table::{
    DelaySnapshot, FullState, LockSnapshot, PartitionDelta, PartitionSnapshot, SessionSnapshot,
};
use crate::types::{FencingToken, Millis, Scope};

/// A lock's identity on the standby: token, scope and key (a multi-key grant shares a token).
type LockId = (FencingToken, Scope, String);

/// A record as the primary sent it, and when it was applied here.
#[derive(Debug, Clone)]
struct Applied<T> {
    item: T,
    at: Millis,
}

/// A replica's copy of one partition's held state. See the module docs.
#[derive(Debug, Clone)]
pub struct Standby {
    seq: u64,
    epoch: u64,
    counter: u64,
    locks: BTreeMap<LockId, Applied<LockSnapshot>>,
    sessions: BTreeMap<String, Applied<SessionSnapshot>>,
    /// Lock-delays running, each with its time left when applied.
    delays: Vec<Applied<DelaySnapshot>>,
    /// The primary's recovery grace left when its full state arrived (deltas never change it).
    grace: Applied<Millis>,
    /// The partition's groups, as the primary last sent them whole.
    groups: Vec<String>,
}

impl Standby {
    /// A standby holding a primary's full state ([`crate::LockTable::export_full`]), received
    /// at `now` on this node's clock.
    pub fn from_full(full: &FullState, now: Millis) -> Standby {
        let snap = &full.snapshot;
        let mut s = Standby {
            seq: full.seq,
            epoch: snap.epoch,
            counter: snap.counter,
            locks: BTreeMap::new(),
            sessions: BTreeMap::new(),
            delays: Vec::new(),
            grace: Applied { item: snap.grace_ms, at: now },
            groups: snap.groups.clone(),
        };
        s.upsert(&snap.locks, &snap.sessions, now);
        s.add_delays(&snap.delays, now);
        s
    }

    /// The `seq` of the latest delta applied (or of the full state).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The primary's epoch.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Whether `full` is newer than this standby: a later epoch, or the same epoch and a later
    /// `seq`. A copy catching up installs a full state only then (see
    /// `NodeCore::standby_catch_up` in lock-jni).
    pub fn older_than(&self, full: &FullState) -> bool {
        (self.epoch, self.seq) < (full.snapshot.epoch, full.seq)
    }

    /// The primary's fencing counter as of the latest delta.
    pub fn counter(&self) -> u64 {
        self.counter
    }

    /// Number of held locks (a tree lock counts once).
    pub fn held_locks(&self) -> usize {
        self.locks.len()
    }

    /// Number of open sessions.
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Applies the primary's next delta, received at `now` on this node's clock. A delta
    /// already applied (same or older `seq`) is ignored, so a retried send is harmless.
    ///
    /// # Errors
    /// [`LockError::InvalidArgument`] naming `delta` when the delta does not follow this
    /// state: a `seq` gap (a batch was lost) or another epoch (another primary, or a new
    /// primary term). Nothing is changed; the caller must send a full state instead.
    pub fn apply(&mut self, delta: &PartitionDelta, now: Millis) -> Result<(), LockError> {
        if delta.epoch != self.epoch {
            return Err(LockError::invalid(
                "delta",
                format!(
                    "epoch {} is not the standby's {}: send a full state",
                    delta.epoch, self.epoch
                ),
            ));
        }
        if delta.seq <= self.seq {
            return Ok(());
        }
        #[cfg(feature = "fault-injection")]
        if crate::fault::skips(delta) {
            return Ok(());
        }
        // An empty take keeps the seq of the delta before it, so one that is ahead of this
        // standby means that delta never arrived.
        if delta.seq != self.seq + 1 || delta.is_empty() {
            return Err(LockError::invalid(
                "delta",
                format!(
                    "seq {} does not follow the standby's {} (a batch is missing): send a full state",
                    delta.seq, self.seq
                ),
            ));
        }
        for id in &delta.ended_sessions {
            self.sessions.remove(id);
            self.locks.retain(|_, l| l.item.session.as_ref() != Some(id));
        }
        for r in &delta.released {
            self.locks.remove(&(r.fencing_token, r.scope, r.key.clone()));
        }
        self.upsert(&delta.locks, &delta.sessions, now);
        self.add_delays(&delta.delays, now);
        if let Some(groups) = &delta.groups {
            self.groups.clone_from(groups);
        }
        self.counter = delta.counter;
        self.seq = delta.seq;
        Ok(())
    }

    /// The held state at `now` on this node's clock, for promotion with
    /// [`crate::LockTable::import`]: each lease and session has what it had left when applied,
    /// less the time since, never below 0. A lock held under a session shows its session's
    /// time left, as on the primary.
    pub fn snapshot(&self, now: Millis) -> PartitionSnapshot {
        let sessions: Vec<SessionSnapshot> = self
            .sessions
            .values()
            .map(|s| SessionSnapshot {
                expires_in_ms: left(s.item.expires_in_ms, s.at, now),
                ..s.item.clone()
            })
            .collect();
        let locks = self
            .locks
            .values()
            .map(|l| {
                let own = left(l.item.lease_ms, l.at, now);
                let lease_ms = match &l.item.session {
                    Some(id) => {
                        self.sessions.get(id).map_or(own, |s| left(s.item.expires_in_ms, s.at, now))
                    }
                    None => own,
                };
                let held_ms = l.item.held_ms.saturating_add(now.saturating_sub(l.at));
                LockSnapshot { lease_ms, held_ms, ..l.item.clone() }
            })
            .collect();
        let grace_ms = left(self.grace.item, self.grace.at, now);
        let delays = self
            .delays
            .iter()
            .map(|d| DelaySnapshot {
                delay_left_ms: left(d.item.delay_left_ms, d.at, now),
                ..d.item.clone()
            })
            .filter(|d| d.delay_left_ms > 0)
            .collect();
        PartitionSnapshot {
            format: crate::STATE_FORMAT,
            epoch: self.epoch,
            counter: self.counter,
            locks,
            sessions,
            grace_ms,
            delays,
            groups: self.groups.clone(),
        }
    }

    /// Keeps lock-delays as applied at `now`, dropping those whose time has run out.
    fn add_delays(&mut self, delays: &[DelaySnapshot], now: Millis) {
        self.delays.retain(|d| left(d.item.delay_left_ms, d.at, now) > 0);
        self.delays.extend(delays.iter().map(|d| Applied { item: d.clone(), at: now }));
    }

    /// Stores locks and sessions as applied at `now`, replacing earlier versions.
    fn upsert(&mut self, locks: &[LockSnapshot], sessions: &[SessionSnapshot], now: Millis) {
        for s in sessions {
            self.sessions.insert(s.session.clone(), Applied { item: s.clone(), at: now });
        }
        for l in locks {
            let id = (l.fencing_token, l.scope, l.key.clone());
            self.locks.insert(id, Applied { item: l.clone(), at: now });
        }
    }
}

/// Time left at `now` of something that had `left_then` left at `at`.
fn left(left_then: Millis, at: Millis, now: Millis) -> Millis {
    left_then.saturating_sub(now.saturating_sub(at))
}
