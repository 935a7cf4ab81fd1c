//! Change tracking for replication: what a primary's table changed since the last take, as a
//! [`PartitionDelta`] a replica applies to its [`crate::Standby`] (docs/LOCK_CORE.md,
//! "Replication support").
//!
//! Off by default: the `memory` durability mode pays one predictable branch per change and
//! nothing else. When on, the hooks only note slab numbers and session ids (and the key name
//! of a removed lock, which may be swept before the take); the records are built once, at
//! [`LockTable::take_changes`], from the state as it is then, so a lock granted and released
//! between two takes costs the replica nothing but its removal.
//!
//! Leases and session expiries travel as time left at the take, never as instants: the
//! nodes' clocks differ, and a replica that counts down from when it applied the delta never
//! ends a lease earlier than the primary.

use serde::{Deserialize, Serialize};

use super::delay::DelaySnapshot;
use super::ids::{LockIdx, SessIdx};
use super::snapshot::{LockSnapshot, PartitionSnapshot, SessionSnapshot};
use super::LockTable;
use crate::error::LockError;
use crate::types::{FencingToken, Scope, SessionId};

/// What a primary changed since its previous take, for its replicas.
///
/// `seq` grows by one per take, so a replica can tell a lost batch (a gap: it needs a full
/// state) from a repeated one (ignored). Waiters are not replicated: their coordinators
/// re-queue them after a failover.
///
/// Its first member is its [format](crate::STATE_FORMAT) (left out in format 1); members it
/// does not know are refused (docs/ARCHITECTURE.md, "Formats and versions").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionDelta {
    /// The format it is written in; 1 when the member is absent.
    #[serde(
        default = "crate::format::format_1",
        skip_serializing_if = "crate::format::is_format_1"
    )]
    pub format: u32,
    pub seq: u64,
    pub epoch: u64,
    /// The fencing counter at the take: a promoted replica issues tokens after it.
    pub counter: u64,
    /// Locks granted, upgraded, downgraded or renewed: the lock as it is at the take, lease
    /// as time left (upsert by token, scope and key).
    pub locks: Vec<LockSnapshot>,
    /// Locks that are gone: released, expired, force-released, ended with their session, or
    /// replaced by an upgrade under a newer token.
    pub released: Vec<ReleasedLock>,
    /// Sessions created or kept alive: as they are at the take (upsert by id).
    pub sessions: Vec<SessionSnapshot>,
    /// Sessions ended or expired, by id; their locks go with them.
    pub ended_sessions: Vec<String>,
    /// Lock-delays started (format 3; absent when none): a replica keeps each until its time
    /// left runs out (docs/LOCK_CORE.md, "Lock-delay").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delays: Vec<DelaySnapshot>,
    /// The partition's groups, all of them, when the set changed since the previous take
    /// (format 5; absent when unchanged): a group is created and deleted rarely, and a whole list
    /// cannot be applied out of order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
}

impl PartitionDelta {
    /// Marks the delta as written in `format`, leaving out what that format does not have (as
    /// [`PartitionSnapshot::set_format`]).
    pub fn set_format(&mut self, format: u32) {
        self.format = format;
        super::snapshot::leave_out_newer(format, &mut self.delays, &mut self.locks);
    }

    /// Whether nothing changed: such a delta carries the previous take's `seq`, and need not be
    /// sent (applying it anyway changes nothing).
    pub fn is_empty(&self) -> bool {
        self.locks.is_empty()
            && self.released.is_empty()
            && self.sessions.is_empty()
            && self.ended_sessions.is_empty()
            && self.delays.is_empty()
            && self.groups.is_none()
    }
}

/// A lock that is gone. The token alone does not name a lock: a multi-key grant shares one
/// token between its keys, and each of them can be released on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReleasedLock {
    pub fencing_token: FencingToken,
    pub scope: Scope,
    pub key: String,
}

/// A table's whole held state with the `seq` of its latest take: what a new replica starts
/// from ([`crate::Standby::from_full`]); the delta with `seq + 1` follows it.
/// Its format is its snapshot's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FullState {
    pub seq: u64,
    pub snapshot: PartitionSnapshot,
}

/// The changes noted since the last take: slab numbers and ids only, resolved at the take.
#[derive(Debug, Default)]
pub(super) struct Changes {
    locks: Vec<LockIdx>,
    released: Vec<ReleasedLock>,
    sessions: Vec<SessionId>,
    ended: Vec<SessionId>,
    delays: Vec<DelaySnapshot>,
}

impl LockTable {
    /// The work of [`LockTable::set_change_tracking`].
    pub(super) fn track_changes(&mut self, on: bool) {
        match (on, self.changes.is_some()) {
            (true, false) => self.changes = Some(Box::default()),
            (false, true) => {
                self.changes = None;
                // What changed while off reaches no replica: a standby synced before must see
                // a gap at the next take and ask for a full state. Two, because an empty take
                // keeps the seq: even that must not look like the standby's next delta.
                self.change_seq += 2;
            }
            _ => {}
        }
    }

    /// Notes a lock granted, upgraded, downgraded or renewed.
    #[inline]
    pub(super) fn note_lock(&mut self, l: LockIdx) {
        if let Some(c) = self.changes.as_mut() {
            c.locks.push(l);
        }
    }

    /// Notes a lock going away under its current token (before it is removed or upgraded).
    #[inline]
    pub(super) fn note_removed(&mut self, l: LockIdx) {
        if self.changes.is_some() {
            self.note_removed_slow(l);
        }
    }

    #[cold]
    fn note_removed_slow(&mut self, l: LockIdx) {
        let lk = *self.lock(l);
        let ks = self.key_state(lk.key);
        let r =
            ReleasedLock { fencing_token: lk.token, scope: ks.scope, key: ks.name[..].to_owned() };
        if let Some(c) = self.changes.as_mut() {
            c.released.push(r);
        }
    }

    /// Notes a lock-delay started (built at once: it never changes, and its lock is gone).
    pub(super) fn note_delay(&mut self, d: DelaySnapshot) {
        if let Some(c) = self.changes.as_mut() {
            c.delays.push(d);
        }
    }

    /// Notes a session created or kept alive.
    #[inline]
    pub(super) fn note_session(&mut self, id: SessionId) {
        if let Some(c) = self.changes.as_mut() {
            c.sessions.push(id);
        }
    }

    /// Notes a session ended or expired.
    #[inline]
    pub(super) fn note_session_end(&mut self, id: SessionId) {
        if let Some(c) = self.changes.as_mut() {
            c.ended.push(id);
        }
    }

    /// The work of [`LockTable::take_changes`] (time already advanced).
    pub(super) fn collect_changes(&mut self) -> Result<PartitionDelta, LockError> {
        let Some(c) = self.changes.as_mut() else {
            return Err(LockError::invalid("change_tracking", "is off: turn it on first"));
        };
        let mut lock_idx = std::mem::take(&mut c.locks);
        let released = std::mem::take(&mut c.released);
        let mut session_ids = std::mem::take(&mut c.sessions);
        let ended = std::mem::take(&mut c.ended);
        let delays = std::mem::take(&mut c.delays);
        let groups = std::mem::take(&mut self.groups.changed).then(|| self.listed_groups());
        lock_idx.sort_unstable();
        lock_idx.dedup();
        session_ids.sort_unstable();
        session_ids.dedup();
        let mut locks: Vec<LockSnapshot> = lock_idx
            .iter()
            .filter_map(|&l| self.locks.get(l as usize).filter(|lk| lk.live).map(|lk| (l, *lk)))
            .map(|(l, lk)| self.lock_info(l, &lk))
            .collect();
        locks.sort_by_key(|l| l.fencing_token);
        let sessions = session_ids
            .iter()
            .filter_map(|id| self.session_index.get(id).copied())
            .map(|idx| self.session_snapshot(idx))
            .collect();
        let changed = !(locks.is_empty()
            && released.is_empty()
            && session_ids.is_empty()
            && ended.is_empty()
            && delays.is_empty()
            && groups.is_none());
        if changed {
            // An empty take keeps the seq: there is nothing to send, and a replica that never
            // sees it has no gap.
            self.change_seq += 1;
        }
        Ok(PartitionDelta {
            format: crate::STATE_FORMAT,
            seq: self.change_seq,
            epoch: self.epoch,
            counter: self.counter,
            locks,
            released,
            sessions,
            ended_sessions: ended.iter().map(SessionId::to_string).collect(),
            delays,
            groups,
        })
    }

    /// One live session as a snapshot and a delta show it.
    pub(super) fn session_snapshot(&self, idx: SessIdx) -> SessionSnapshot {
        let s = self.sessions.live(idx);
        SessionSnapshot {
            session: s.id.to_string(),
            owner: self.owner_name(s.owner),
            ttl_ms: s.ttl_ms,
            expires_in_ms: s.expires_at.saturating_sub(self.now),
        }
    }
}
