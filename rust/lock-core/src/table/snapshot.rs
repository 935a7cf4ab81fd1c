//! Hand-over between nodes: a partition's held state exported as a [`PartitionSnapshot`] and
//! a table rebuilt from one. Waiters are not part of it (docs/ARCHITECTURE.md, "Partitions,
//! owners, epochs"); an import checks the snapshot as strictly as a request, so a corrupt or
//! hostile snapshot is refused instead of breaking the table's invariants.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::deadline::MAX_TIME;
use super::delay::DelaySnapshot;
use super::ids::{KeyIdx, LockIdx, NO_SESSION};
use super::records::{Dirty, Lock, QueueKey, SESSION_LEASE};
use super::semaphore::{snapshot_numbers, SemaphoreTerms};
use super::LockTable;
use crate::answer::LockInfo;
use crate::config::{Config, MAX_LEASE_EVER_MS};
use crate::error::LockError;
use crate::mode::Mode;
use crate::types::{FencingToken, Millis, Priority, Scope, SessionId};
use crate::validate::{self, tree_ancestors, validate_owner};

/// A partition's state for handing it to another node: held locks with their leases and
/// tokens, sessions, the epoch and the fencing counter. Times are relative ("ms left") because
/// the two nodes' clocks differ. Waiters are not included: they stay with the old owner, which
/// answers them as unavailable, and their clients retry (docs/ARCHITECTURE.md, "Partitions,
/// owners, epochs").
///
/// Its first member is its [format](crate::STATE_FORMAT) (left out in format 1); members it
/// does not know are refused (docs/ARCHITECTURE.md, "Formats and versions").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionSnapshot {
    /// The format it is written in; 1 when the member is absent.
    #[serde(
        default = "crate::format::format_1",
        skip_serializing_if = "crate::format::is_format_1"
    )]
    pub format: u32,
    pub epoch: u64,
    pub counter: u64,
    pub locks: Vec<LockSnapshot>,
    pub sessions: Vec<SessionSnapshot>,
    /// Recovery grace left (no grants until it ends): a partition in grace stays in grace on
    /// the node it moves to, since the leases its grace waits out may still be running.
    #[serde(default)]
    pub grace_ms: Millis,
    /// Lock-delays running (format 3; absent when none), with their time left.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delays: Vec<DelaySnapshot>,
    /// The partition's groups, by name (format 5; absent when none): their members are among
    /// `locks`, in scope `group` (docs/LOCK_CORE.md, "Groups").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

impl PartitionSnapshot {
    /// Marks the snapshot as written in `format` (a checked one this build writes), leaving out
    /// what that format does not have: before format 3, lock-delays and grant priorities (see
    /// [`crate::STATE_FORMAT_LOCK_DELAY`]; the core refuses delays while a peer reads an older
    /// format, and a priority is only lost to a preemption, docs/LOCK_CORE.md "Preemption").
    pub fn set_format(&mut self, format: u32) {
        self.format = format;
        leave_out_newer(format, &mut self.delays, &mut self.locks);
    }
}

/// Leaves out of a state written in `format` the members added after it: before format 3, the
/// delays running and each lock's lock-delay and priority. A snapshot and a delta share it.
pub(super) fn leave_out_newer(
    format: u32,
    delays: &mut Vec<DelaySnapshot>,
    locks: &mut [LockSnapshot],
) {
    if format < crate::STATE_FORMAT_LOCK_DELAY {
        delays.clear();
        for l in locks.iter_mut() {
            l.lock_delay_ms = None;
            l.priority = None;
        }
    }
    if format < crate::format::STATE_FORMAT_ACQUISITION {
        for l in locks {
            l.acquisition = None;
        }
    }
}

/// One held lock in a [`PartitionSnapshot`]: what a listing shows of it ([`LockInfo`]), built
/// by the same `lock_info`, so the snapshot and the listing cannot drift apart. On import,
/// `lease_ms` is the lease left and is ignored for a session lock.
pub type LockSnapshot = LockInfo;

/// One session in a [`PartitionSnapshot`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSnapshot {
    pub session: String,
    pub owner: String,
    pub ttl_ms: Millis,
    pub expires_in_ms: Millis,
}

impl LockTable {
    /// A snapshot lock's semaphore numbers: checked as a request's on a semaphore (and held
    /// in mode `shared`), absent elsewhere.
    fn import_semaphore_terms(
        &self,
        l: &LockSnapshot,
    ) -> Result<Option<SemaphoreTerms>, LockError> {
        if l.scope != Scope::Semaphore {
            if l.permits.is_some() || l.limit.is_some() {
                return Err(LockError::invalid(
                    "snapshot",
                    format!("lock [{}] has permits", l.key),
                ));
            }
            return Ok(None);
        }
        if l.mode != Mode::Shared {
            return Err(LockError::invalid(
                "snapshot",
                format!("semaphore [{}] not shared", l.key),
            ));
        }
        snapshot_numbers(l.permits, l.limit).map(Some)
    }
}

/// Queue position used to test an imported lock against the holders imported before it:
/// ahead of every waiter (there are none during an import), so only holders can block it.
const IMPORT_QKEY: QueueKey = QueueKey { rank: i128::MIN, seq: 0 };

impl LockTable {
    /// The work of [`LockTable::export`]: locks in token order, sessions by id.
    pub(super) fn snapshot(&self) -> PartitionSnapshot {
        let mut locks: Vec<LockSnapshot> = self
            .locks
            .iter()
            .enumerate()
            .filter(|(_, l)| l.live)
            .map(|(i, l)| self.lock_info(i as LockIdx, l))
            .collect();
        locks.sort_by_key(|l| l.fencing_token);
        let mut sessions: Vec<SessionSnapshot> =
            self.sessions.iter().map(|(idx, _)| self.session_snapshot(idx)).collect();
        sessions.sort_by(|a, b| a.session.cmp(&b.session));
        let grace_ms = self.grace_until.saturating_sub(self.now);
        PartitionSnapshot {
            format: crate::STATE_FORMAT,
            epoch: self.epoch,
            counter: self.counter,
            locks,
            sessions,
            grace_ms,
            delays: self.export_delays(),
            groups: self.listed_groups(),
        }
    }

    /// The work of [`LockTable::import`].
    pub(super) fn from_snapshot(
        snapshot: &PartitionSnapshot,
        epoch: u64,
        config: Config,
        now: Millis,
    ) -> Result<LockTable, LockError> {
        validate::epoch(snapshot.epoch)?;
        if epoch < snapshot.epoch {
            return Err(LockError::invalid("epoch", "must be at least the snapshot's epoch"));
        }
        if snapshot.counter > FencingToken::MAX_COUNTER {
            return Err(LockError::invalid("snapshot", "counter out of range"));
        }
        let mut t = LockTable::with_config(snapshot.epoch, config)?;
        t.now = now.min(MAX_TIME);
        t.counter = snapshot.counter;
        t.import_sessions(snapshot)?;
        t.set_groups(&snapshot.groups)?;
        let newest = FencingToken::new(snapshot.epoch, snapshot.counter);
        for l in &snapshot.locks {
            t.import_lock(l, newest)?;
        }
        for d in &snapshot.delays {
            t.import_delay(d)?;
        }
        t.set_epoch(epoch)?;
        t.prune_deadlines();
        if snapshot.grace_ms > 0 {
            t.begin_grace(t.now.saturating_add(snapshot.grace_ms));
        }
        Ok(t)
    }

    /// Imports the sessions under the ids they had: a session's id is its owner's credential,
    /// so it must work on the new owner exactly as on the old one. Each keeps its time left and
    /// its ttl as recorded, whatever this table's `max_lease_ms`: the setting bounds new sessions
    /// and keep-alives, never one already granted (docs/ARCHITECTURE.md, "Replication").
    fn import_sessions(&mut self, snapshot: &PartitionSnapshot) -> Result<(), LockError> {
        let now = self.now;
        for s in &snapshot.sessions {
            validate_owner(&s.owner)?;
            let id = SessionId::parse(&s.session).ok_or_else(|| {
                LockError::invalid("snapshot", format!("bad session id [{}]", s.session))
            })?;
            if self.session_index.contains_key(&id) || s.ttl_ms == 0 {
                return Err(LockError::invalid("snapshot", format!("bad session [{}]", s.session)));
            }
            let o = self.intern_owner(&s.owner);
            self.insert_session(
                id,
                o,
                s.ttl_ms.min(MAX_LEASE_EVER_MS),
                // At least 1 ms, as a lock's lease: a session whose time ran out at this very
                // instant on the node it comes from ends at this table's next tick, with its locks.
                now.saturating_add(s.expires_in_ms.clamp(1, MAX_LEASE_EVER_MS)),
            );
            self.owner_unref(o);
        }
        Ok(())
    }

    /// A snapshot lock's members of format 3, checked: its lock-delay and its grant's priority.
    fn import_format_3(&self, l: &LockSnapshot) -> Result<(Millis, Priority), LockError> {
        let lock_delay = self
            .lock_delay_for(l.lock_delay_ms, std::iter::once(l.scope))
            .map_err(|e| LockError::invalid("snapshot", e.to_string()))?;
        let priority = match l.priority {
            None => Priority::FOREGROUND,
            Some(p) if p <= Priority::MAX.0 => Priority(p),
            Some(_) => {
                return Err(LockError::invalid("snapshot", format!("bad priority on [{}]", l.key)))
            }
        };
        Ok((lock_delay, priority))
    }

    /// Imports one lock: checked like a request, and refused when it conflicts with a holder
    /// imported before it or its token is newer than the snapshot's counter.
    fn import_lock(&mut self, l: &LockSnapshot, newest: FencingToken) -> Result<(), LockError> {
        validate::name(&l.key, l.scope, &self.config.limits)?;
        validate_owner(&l.owner)?;
        self.check_imported_member(l)?;
        if l.fencing_token > newest {
            return Err(LockError::invalid(
                "snapshot",
                format!("token of [{}] is newer than the counter", l.key),
            ));
        }
        let session = match &l.session {
            None => NO_SESSION,
            Some(s) => self.session_for(Some(s), &l.owner).map_err(|_| {
                LockError::invalid("snapshot", format!("lock [{}] names a bad session", l.key))
            })?,
        };
        let semaphore = self.import_semaphore_terms(l)?;
        let (lock_delay, priority) = self.import_format_3(l)?;
        super::election::check_value(l.scope, l.value.as_deref())?;
        let o = self.intern_owner(&l.owner);
        let k = self.intern_key(l.scope, &l.key);
        let permits = semaphore.map_or(0, |s| s.permits);
        if let Some(s) = semaphore {
            let ks = self.keys.live_mut(k);
            if ks.holders.is_empty() {
                ks.limit = s.limit;
            } else if ks.limit != s.limit {
                self.owner_unref(o);
                let mut dirty: Dirty = smallvec::smallvec![k];
                self.pump(&mut dirty);
                return Err(LockError::invalid(
                    "snapshot",
                    format!("semaphore [{}] has two limits", l.key),
                ));
            }
        }
        let mut needed: SmallVec<[(KeyIdx, Mode); 8]> = SmallVec::new();
        needed.push((k, l.mode));
        if l.scope == Scope::Tree {
            for anc in tree_ancestors(&l.key) {
                needed.push((self.intern_key(Scope::Tree, anc), l.mode.intention()));
            }
        }
        // A semaphore's holders are not checked against its limit: after a lowering they may
        // hold more (nothing held is revoked, docs/LOCK_CORE.md "Semaphores").
        let conflict = self.find_target_lock(o, k).is_some()
            || (semaphore.is_none()
                && needed.iter().any(|&(kk, m)| self.blocked_at(kk, o, m, permits, IMPORT_QKEY)));
        if conflict {
            let mut dirty: Dirty = needed.iter().map(|(k, _)| *k).collect();
            self.owner_unref(o);
            self.pump(&mut dirty);
            return Err(LockError::invalid(
                "snapshot",
                format!("conflicting holders of [{}]", l.key),
            ));
        }
        let now = self.now;
        // The lease left as recorded: a lowered `max_lease_ms` on this node must not end a
        // holder's lease earlier than its grant promised (docs/ARCHITECTURE.md, "Replication").
        let lease_until = if session == NO_SESSION {
            now.saturating_add(l.lease_ms.clamp(1, MAX_LEASE_EVER_MS))
        } else {
            SESSION_LEASE
        };
        let l_idx = self.add_lock(Lock {
            owner: o,
            key: k,
            session,
            mode: l.mode,
            live: true,
            permits,
            token: l.fencing_token,
            granted_at: now.saturating_sub(l.held_ms),
            lease_until,
            acquisition: l.acquisition.unwrap_or(0),
        });
        if let Some(v) = &l.value {
            self.election_values.hold(l_idx, v.as_str().into());
        }
        self.keep_lock_delay(l_idx, lock_delay);
        self.keep_priority(l_idx, priority);
        self.owner_unref(o);
        Ok(())
    }
}
