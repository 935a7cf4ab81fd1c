//! The lock history (opt-in, docs/LOCK_CORE.md "Lock history"): a bounded buffer of what
//! happened to locks — grants (at once or after a wait), releases, expiries, force-releases with
//! the administrator's reason, deadlock victims and refused renewals — which the bridge drains
//! into the plugin's history data stream (docs/API.md "Lock history").
//!
//! Off by default ([`Config::audit_capacity`](crate::Config::audit_capacity) 0): every hook is
//! one predictable branch and nothing else, as with change tracking (`changes.rs`). When on, a
//! record is pushed with the table's clock; a full buffer drops the record and counts it, so a
//! caller that does not drain (an index that refuses writes, a bulk still in flight) never slows
//! a lock nor grows the table. Only the table that grants records: a replica's
//! [`crate::Standby`] has no history of its own.

use std::sync::Arc;

use super::ids::LockIdx;
use super::records::Granted;
use super::LockTable;
use crate::answer::WatchReason;
use crate::error::LockError;
use crate::mode::Mode;
use crate::request::RenewRequest;
use crate::stats::AuditStats;
use crate::types::{Millis, Scope, WaiterId};

/// What happened, as the history document's `event.action` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditEvent {
    /// A lock was granted (at once, or to a waiter: then `waited_ms` is set), or upgraded.
    Granted,
    /// Its holder released it, or ended the session it was held under.
    Released,
    /// Its lease, or the session it was held under, ran out.
    Expired,
    /// An administrator took it (`reason`: what they gave, if anything).
    ForceReleased,
    /// A waiter was chosen as a deadlock's victim (`reason`: the cycle).
    DeadlockVictim,
    /// A renewal was refused: the lock was no longer held by that owner with that token.
    RenewRefused,
    /// A preempting waiter's grace ran out while the holder still held: the lock was taken.
    Preempted,
}

impl AuditEvent {
    /// The `event.action` value of the history document.
    pub fn name(self) -> &'static str {
        match self {
            AuditEvent::Granted => "granted",
            AuditEvent::Released => "released",
            AuditEvent::Expired => "expired",
            AuditEvent::ForceReleased => "force_released",
            AuditEvent::DeadlockVictim => "deadlock_victim",
            AuditEvent::RenewRefused => "renew_refused",
            AuditEvent::Preempted => "preempted",
        }
    }
}

/// One entry of the lock history, at the table's time `at` (the bridge turns it into the
/// document's `@timestamp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub at: Millis,
    pub event: AuditEvent,
    pub key: Arc<str>,
    pub scope: Scope,
    pub owner: Box<str>,
    /// The lock's mode (grants, releases, expiries, force-releases).
    pub mode: Option<Mode>,
    /// The lock's fencing token; 0 when no lock is concerned (a deadlock victim, a renewal
    /// refused without a token).
    pub token: u64,
    /// How long a granted waiter or a deadlock victim waited.
    pub waited_ms: Option<Millis>,
    /// How long the lock was held, when it ended.
    pub held_ms: Option<Millis>,
    pub reason: Option<Box<str>>,
}

/// The buffer and its counters.
#[derive(Debug, Default)]
pub(super) struct AuditLog {
    /// Most records kept until drained; 0 = off.
    capacity: usize,
    records: Vec<AuditRecord>,
    recorded: u64,
    dropped: u64,
    /// The reason of the force-release in progress ([`LockTable::force_release`]).
    reason: Option<Box<str>>,
}

impl AuditLog {
    /// Whether one more record may be pushed; a full buffer counts the record it refuses.
    fn admit(&mut self) -> bool {
        if self.records.len() < self.capacity {
            return true;
        }
        self.dropped += 1;
        false
    }

    fn push(&mut self, record: AuditRecord) {
        self.records.push(record);
        self.recorded += 1;
    }
}

impl LockTable {
    /// Applies [`Config::audit_capacity`](crate::Config::audit_capacity): turning the history off
    /// drops what was buffered (counted as dropped: it will never be delivered).
    pub(super) fn configure_audit(&mut self) {
        let a = &mut self.audit;
        a.capacity = self.config.audit_capacity;
        if a.capacity == 0 && !a.records.is_empty() {
            a.dropped += a.records.len() as u64;
            a.records = Vec::new();
        }
    }

    /// The work of [`LockTable::drain_audit`].
    pub(super) fn take_audit(&mut self, max: usize) -> Vec<AuditRecord> {
        let n = max.min(self.audit.records.len());
        if n == self.audit.records.len() {
            return std::mem::take(&mut self.audit.records);
        }
        self.audit.records.drain(..n).collect()
    }

    /// The history's counters, for the stats.
    pub(super) fn audit_stats(&self) -> AuditStats {
        AuditStats {
            recorded: self.audit.recorded,
            dropped: self.audit.dropped,
            buffered: self.audit.records.len() as u64,
        }
    }

    /// Runs a force-release with the administrator's `reason` in the records it makes.
    pub(super) fn with_force_reason<R>(
        &mut self,
        reason: Option<&str>,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        self.audit.reason = reason.map(Box::from);
        let out = f(self);
        self.audit.reason = None;
        out
    }

    /// Hook: `granted` were just granted (new locks and upgrades; a reentrant grant is no new
    /// event) after `waited_ms` in the queue (`None`: at once).
    #[inline]
    pub(super) fn audit_grants(&mut self, granted: &Granted, waited_ms: Option<Millis>) {
        if self.audit.capacity != 0 {
            self.audit_grants_slow(granted, waited_ms);
        }
    }

    #[cold]
    fn audit_grants_slow(&mut self, granted: &Granted, waited_ms: Option<Millis>) {
        for &(l, reentrant) in granted {
            if !reentrant && self.audit.admit() {
                let r = self.lock_record(l, AuditEvent::Granted, None, None);
                self.audit.push(AuditRecord { waited_ms, ..r });
            }
        }
    }

    /// Hook: lock `l` is about to be removed for `reason` (an upgrade is no end: its grant is
    /// recorded instead).
    #[inline]
    pub(super) fn audit_removed(&mut self, l: LockIdx, reason: WatchReason) {
        if self.audit.capacity != 0 {
            self.audit_removed_slow(l, reason);
        }
    }

    #[cold]
    fn audit_removed_slow(&mut self, l: LockIdx, reason: WatchReason) {
        let (event, why): (AuditEvent, Option<&'static str>) = match reason {
            WatchReason::Released => (AuditEvent::Released, None),
            WatchReason::SessionEnded => (AuditEvent::Released, Some("session_ended")),
            WatchReason::Expired => (AuditEvent::Expired, Some("lease_expired")),
            WatchReason::SessionExpired => (AuditEvent::Expired, Some("session_expired")),
            WatchReason::ForceReleased => (AuditEvent::ForceReleased, None),
            WatchReason::Preempted => (AuditEvent::Preempted, None),
            WatchReason::Upgraded
            | WatchReason::NotHeld
            | WatchReason::Held
            | WatchReason::RevokeRequested => return,
        };
        if !self.audit.admit() {
            return;
        }
        let why = match event {
            AuditEvent::ForceReleased => self.audit.reason.clone(),
            _ => why.map(Box::from),
        };
        let held = self.now.saturating_sub(self.lock(l).granted_at);
        let r = self.lock_record(l, event, Some(held), why);
        self.audit.push(r);
    }

    /// Hook: waiter `victim` is a deadlock's victim; `cycle` names the owners, victim first.
    #[inline]
    pub(super) fn audit_victim(&mut self, victim: WaiterId, cycle: &[String]) {
        if self.audit.capacity != 0 {
            self.audit_victim_slow(victim, cycle);
        }
    }

    #[cold]
    fn audit_victim_slow(&mut self, victim: WaiterId, cycle: &[String]) {
        let Some(w) = self.waiters.get(&victim) else { return };
        let Some(t) = w.targets.first().copied() else { return };
        if !self.audit.admit() {
            return;
        }
        let ks = self.key_state(t.key);
        let record = AuditRecord {
            at: self.now,
            event: AuditEvent::DeadlockVictim,
            key: Arc::clone(&ks.name),
            scope: ks.scope,
            owner: self.owner_name(w.owner).into(),
            mode: Some(t.mode),
            token: 0,
            waited_ms: Some(self.now.saturating_sub(w.enqueued_at)),
            held_ms: None,
            reason: Some(format!("deadlock cycle: {}", cycle.join(" -> ")).into()),
        };
        self.audit.push(record);
    }

    /// Hook: a renewal answered `err`. Only a lost lock or session is history; bad input is not.
    #[inline]
    pub(super) fn audit_renew_refused(&mut self, req: &RenewRequest, err: &LockError) {
        if self.audit.capacity != 0 {
            self.audit_renew_refused_slow(req, err);
        }
    }

    #[cold]
    fn audit_renew_refused_slow(&mut self, req: &RenewRequest, err: &LockError) {
        let reason = match err {
            LockError::NotHeld { .. } => "not_held",
            LockError::SessionNotFound { .. } => "session_not_found",
            LockError::Preempted { .. } => "preempted",
            _ => return,
        };
        if !self.audit.admit() {
            return;
        }
        let record = AuditRecord {
            at: self.now,
            event: AuditEvent::RenewRefused,
            key: Arc::from(req.key.as_str()),
            scope: req.scope,
            owner: req.owner.as_str().into(),
            mode: None,
            token: req.fencing_token.map_or(0, |t| t.0),
            waited_ms: None,
            held_ms: None,
            reason: Some(reason.into()),
        };
        self.audit.push(record);
    }

    /// A record of lock `l` as it is now.
    fn lock_record(
        &self,
        l: LockIdx,
        event: AuditEvent,
        held_ms: Option<Millis>,
        reason: Option<Box<str>>,
    ) -> AuditRecord {
        let lk = self.lock(l);
        let ks = self.key_state(lk.key);
        AuditRecord {
            at: self.now,
            event,
            key: Arc::clone(&ks.name),
            scope: ks.scope,
            owner: self.owners.live(lk.owner).name.clone(),
            mode: Some(lk.mode),
            token: lk.token.0,
            waited_ms: None,
            held_ms,
            reason,
        }
    }
}
