//! Leader elections: keys of [`Scope::Election`], held exclusively by the leader, whose
//! grant's fencing token is the term (docs/LOCK_CORE.md, "Elections").
//!
//! The only state an election adds to a lock is its optional `value`: kept in a side map by
//! lock (so the lock record stays small and `Copy`), and by waiter while a campaign queues.
//! The held values are part of [`super::LockInfo`], so snapshots, deltas and standbys carry
//! them with their locks; the pending ones are not replicated, like the waiters they belong to.

use hashbrown::HashMap;

use super::acquire::Acquired;
use super::ids::LockIdx;
use super::LockTable;
use crate::error::LockError;
use crate::mode::Mode;
use crate::request::AcquireRequest;
use crate::types::{Scope, WaiterId, MAX_ELECTION_VALUE_BYTES};

/// The values of election grants and of queued campaigns, and their bytes (for the memory
/// estimate, `memory.rs`).
#[derive(Debug, Default)]
pub(super) struct ElectionValues {
    pub(super) held: HashMap<LockIdx, Box<str>>,
    pub(super) pending: HashMap<WaiterId, Box<str>>,
    pub(super) bytes: usize,
}

impl ElectionValues {
    /// Keeps `v` with lock `l` (replacing its value, if any).
    pub(super) fn hold(&mut self, l: LockIdx, v: Box<str>) {
        self.bytes += v.len();
        if let Some(old) = self.held.insert(l, v) {
            self.bytes -= old.len();
        }
    }

    /// Keeps `v` with waiter `w` until it is granted or leaves.
    pub(super) fn pend(&mut self, w: WaiterId, v: Box<str>) {
        self.bytes += v.len();
        if let Some(old) = self.pending.insert(w, v) {
            self.bytes -= old.len();
        }
    }

    /// Lock `l` goes: so does its value.
    pub(super) fn unhold(&mut self, l: LockIdx) {
        if let Some(old) = self.held.remove(&l) {
            self.bytes -= old.len();
        }
    }

    /// Waiter `w` leaves (granted or not): its value, to keep with its grant.
    pub(super) fn unpend(&mut self, w: WaiterId) -> Option<Box<str>> {
        let v = self.pending.remove(&w)?;
        self.bytes -= v.len();
        Some(v)
    }
}

/// A `value` is for elections only and bounded in length.
pub(super) fn check_value(scope: Scope, value: Option<&str>) -> Result<(), LockError> {
    let Some(v) = value else { return Ok(()) };
    if scope != Scope::Election && scope != Scope::Group {
        return Err(LockError::invalid(
            "value",
            "only an election grant and a group member have a value",
        ));
    }
    if v.len() > MAX_ELECTION_VALUE_BYTES {
        let field = if scope == Scope::Group { "capabilities" } else { "value" };
        return Err(LockError::invalid(
            field,
            format!("at most {MAX_ELECTION_VALUE_BYTES} bytes, got {}", v.len()),
        ));
    }
    Ok(())
}

impl LockTable {
    /// An election is held exclusively (one leader), a group joined as [`Self::check_group_join`]
    /// says; a value is bounded.
    pub(super) fn check_election(&self, req: &AcquireRequest) -> Result<(), LockError> {
        self.check_group_join(req)?;
        if req.scope == Scope::Election && req.mode != Mode::Exclusive {
            return Err(LockError::invalid("mode", "an election is held exclusively"));
        }
        check_value(req.scope, req.value.as_deref())
    }

    /// Keeps an election acquire's value with its grant, or with its waiter until granted.
    pub(super) fn keep_election_value(&mut self, req: &AcquireRequest, acquired: &Acquired) {
        let Some(v) = req.value.as_deref() else { return };
        match acquired {
            Acquired::Granted(gs) => {
                if let Some(c) = gs.first() {
                    self.election_values.hold(c.lock, v.into());
                }
            }
            Acquired::Queued(q) => {
                self.election_values.pend(q.waiter_id, v.into());
            }
        }
    }

    /// The value kept with lock `l`, if it is an election grant that has one.
    pub(super) fn election_value(&self, l: LockIdx) -> Option<String> {
        self.election_values.held.get(&l).map(|v| v.to_string())
    }

    /// Every kept value belongs to a live election lock or to a registered waiter.
    pub(super) fn check_election_values(&self) -> Result<(), String> {
        for l in self.election_values.held.keys() {
            let lk = self.locks.get(*l as usize).ok_or(format!("value of absent lock {l}"))?;
            let scope = self.key_state(lk.key).scope;
            if !lk.live || !matches!(scope, Scope::Election | Scope::Group) {
                return Err(format!("value kept for lock {l}, not a live election or member"));
            }
        }
        let values =
            self.election_values.held.values().chain(self.election_values.pending.values());
        let counted: usize = values.map(|v| v.len()).sum();
        if counted != self.election_values.bytes {
            return Err(format!(
                "{counted} bytes of election values, {} counted",
                self.election_values.bytes
            ));
        }
        let leaders = self
            .locks
            .iter()
            .filter(|l| l.live && self.key_state(l.key).scope == Scope::Election)
            .count();
        if leaders != self.election_leaders {
            return Err(format!("{leaders} election leaders, {} counted", self.election_leaders));
        }
        if let Some(w) =
            self.election_values.pending.keys().find(|w| !self.waiters.contains_key(*w))
        {
            return Err(format!("value kept for waiter {w}, not queued"));
        }
        Ok(())
    }
}
