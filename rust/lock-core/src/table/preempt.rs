//! Preemption with notice (docs/LOCK_CORE.md, "Preemption"): a waiter that asks for it
//! (`preempt_ms`, a grace) asks every holder in its way whose grant has a lower priority to
//! yield. The holder is told at once — its watches that asked for notices end with
//! `revoke_requested` and the grace left — and keeps its lock through the grace: it may finish
//! and release. If it still holds the lock when the grace ends and a waiter of higher priority
//! that asked for preemption still waits for it, the lock is taken away (`Preempted`: its token
//! dies, the waiter is granted with a larger one, no lock-delay), and the holder's later renewals
//! and releases answer that it was preempted.
//!
//! A grant's priority is kept in a side map, only when it is not the default (`foreground`), so
//! that the lock record stays 48 bytes; it is replicated with the lock (`LockInfo::priority`).
//! A pending revoke is not: after a failover the waiter is queued again by its coordinator and
//! asks again, with a fresh grace.

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::deadline::DeadlineKind;
use super::ids::{KeyIdx, LockIdx};
use super::records::Dirty;
use super::LockTable;
use crate::answer::WatchReason;
use crate::error::LockError;
use crate::types::{FencingToken, Millis, Priority, Scope, WaiterId};

/// Most "preempted" answers kept for renewals that come late; beyond it the oldest go (a late
/// renewal then answers a plain "not held").
const MAX_PREEMPTED_KEPT: usize = 10_000;

/// A holder asked to yield: until when, and under which token.
#[derive(Debug, Clone, Copy)]
struct Revoke {
    until: Millis,
    token: FencingToken,
}

/// The priorities of grants, the revokes pending, and the locks lately preempted.
#[derive(Debug, Default)]
pub(super) struct Preemption {
    /// The priority of each live lock granted at another than the default.
    priorities: HashMap<LockIdx, Priority>,
    revokes: HashMap<LockIdx, Revoke>,
    /// (scope, key, owner) of a preempted lock -> until when a renewal is told so.
    preempted: HashMap<(Scope, Box<str>, Box<str>), Millis>,
}

impl LockTable {
    /// The grace of a preempting acquire, checked: it must wait, and not on a semaphore.
    pub(super) fn preempt_grace(
        &self,
        asked: Option<Millis>,
        wait_ms: Millis,
        mut scopes: impl Iterator<Item = Scope>,
    ) -> Result<Millis, LockError> {
        let Some(ms) = asked.filter(|ms| *ms > 0) else { return Ok(0) };
        if wait_ms == 0 {
            return Err(LockError::invalid("preempt_ms", "a preempting acquire must wait"));
        }
        if scopes.any(|s| matches!(s, Scope::Semaphore | Scope::Group)) {
            return Err(LockError::invalid(
                "preempt_ms",
                "a semaphore's holders and a group's members are not preempted",
            ));
        }
        Ok(ms.min(self.config.max_lease_ms))
    }

    /// Keeps the priority lock `l` was granted at.
    pub(super) fn keep_priority(&mut self, l: LockIdx, p: Priority) {
        if p != Priority::FOREGROUND {
            self.preemption.priorities.insert(l, p);
        } else if !self.preemption.priorities.is_empty() {
            self.preemption.priorities.remove(&l);
        }
    }

    /// The priority lock `l` was granted at.
    pub(super) fn priority_of(&self, l: LockIdx) -> Priority {
        self.preemption.priorities.get(&l).copied().unwrap_or(Priority::FOREGROUND)
    }

    /// Lock `l` goes: its priority and any revoke pending go with it.
    pub(super) fn forget_preemption(&mut self, l: LockIdx) {
        if !self.preemption.priorities.is_empty() {
            self.preemption.priorities.remove(&l);
        }
        if !self.preemption.revokes.is_empty() {
            self.preemption.revokes.remove(&l);
        }
    }

    /// Waiter `wid` was queued: if it asked for preemption, every holder of lower priority
    /// whose lock blocks it on one of its keys is asked to yield within its grace.
    pub(super) fn ask_holders_to_yield(&mut self, wid: WaiterId) {
        let Some(w) = self.waiters.get(&wid) else { return };
        if w.preempt_ms == 0 {
            return;
        }
        let (owner, priority, until) = (w.owner, w.priority, self.now.saturating_add(w.preempt_ms));
        let mut in_the_way: SmallVec<[LockIdx; 4]> = SmallVec::new();
        for &(k, mode) in &w.keys {
            for h in &self.key_state(k).holders {
                let lower = self.priority_of(h.lock) < priority;
                if h.owner != owner && !h.mode.compatible_with(mode) && lower {
                    in_the_way.push(h.lock);
                }
            }
        }
        for l in in_the_way {
            self.request_revoke(l, until);
        }
    }

    /// Asks the holder of lock `l` to yield by `until` (an earlier request stands).
    fn request_revoke(&mut self, l: LockIdx, until: Millis) {
        if self.preemption.revokes.get(&l).is_some_and(|r| r.until <= until) {
            return;
        }
        let token = self.lock(l).token;
        self.preemption.revokes.insert(l, Revoke { until, token });
        self.push_deadline(until, DeadlineKind::Revoke { lock: l, token: token.0 });
        self.counters.revokes_requested += 1;
        self.fire_revoke_watches(l, until - self.now);
    }

    /// The grace left of a revoke pending on lock `l`, if any.
    pub(super) fn revoke_left(&self, l: LockIdx) -> Option<Millis> {
        let r = self.preemption.revokes.get(&l)?;
        Some(r.until.saturating_sub(self.now))
    }

    /// A revoke's grace ended: the lock is taken away if a preempting waiter of higher priority
    /// still waits for one of its keys; otherwise the request lapses.
    pub(super) fn end_grace(&mut self, l: LockIdx, dirty: &mut Dirty) {
        self.preemption.revokes.remove(&l);
        let lk = *self.lock(l);
        let priority = self.priority_of(l);
        let wanted = self
            .key_and_ancestors(lk.key)
            .into_iter()
            .any(|k| self.preempter_waits(k, &lk, priority));
        if !wanted {
            return;
        }
        let ks = self.key_state(lk.key);
        let name = (ks.scope, ks.name[..].into(), self.owners.live(lk.owner).name.clone());
        self.remember_preempted(
            name,
            lk.lease_until.min(self.now.saturating_add(self.config.max_lease_ms)),
        );
        self.counters.preemptions += 1;
        self.remove_lock(l, dirty, WatchReason::Preempted);
    }

    /// Whether a waiter on key `k` that asked for preemption, of another owner and of higher
    /// priority than `priority`, still waits.
    fn preempter_waits(&self, k: KeyIdx, lk: &super::records::Lock, priority: Priority) -> bool {
        self.key_state(k).queue.iter().flat_map(|q| q.values()).any(|wid| {
            let w = self.waiter(*wid);
            w.preempt_ms > 0 && w.owner != lk.owner && w.priority > priority
        })
    }

    fn remember_preempted(&mut self, name: (Scope, Box<str>, Box<str>), until: Millis) {
        let now = self.now;
        let kept = &mut self.preemption.preempted;
        if kept.len() >= MAX_PREEMPTED_KEPT {
            kept.retain(|_, u| *u > now);
        }
        if kept.len() >= MAX_PREEMPTED_KEPT {
            kept.clear();
        }
        kept.insert(name, until.max(now.saturating_add(1)));
    }

    /// The error for `owner` not holding `key`: that its group does not exist, for a group;
    /// that it was preempted, if it lately was.
    pub(super) fn not_held(&self, key: &str, scope: Scope, owner: &str) -> LockError {
        if scope == Scope::Group {
            if let Err(gone) = self.check_group_exists(key) {
                return gone;
            }
        }
        let name = (scope, Box::<str>::from(key), Box::<str>::from(owner));
        match self.preemption.preempted.get(&name) {
            Some(until) if *until > self.now => {
                LockError::Preempted { key: key.to_owned(), owner: owner.to_owned() }
            }
            _ => LockError::NotHeld { key: key.to_owned(), owner: owner.to_owned() },
        }
    }

    /// Whether a revoke deadline of lock `l` under `token` at `at` is still pending.
    pub(super) fn revoke_deadline_live(&self, l: LockIdx, token: u64, at: Millis) -> bool {
        self.preemption.revokes.get(&l).is_some_and(|r| r.until == at && r.token.0 == token)
            && self.locks.get(l as usize).is_some_and(|lk| lk.live && lk.token.0 == token)
    }

    /// The invariants: priorities and revokes only of live locks, each revoke under the lock's
    /// token.
    pub(super) fn check_preemption(&self) -> Result<(), String> {
        let live = |l: &LockIdx| self.locks.get(*l as usize).is_some_and(|lk| lk.live);
        if let Some(l) = self.preemption.priorities.keys().find(|l| !live(l)) {
            return Err(format!("priority kept for dead lock {l}"));
        }
        for (l, r) in &self.preemption.revokes {
            if !live(l) || self.lock(*l).token != r.token {
                return Err(format!("revoke pending on dead or replaced lock {l}"));
            }
        }
        Ok(())
    }
}
