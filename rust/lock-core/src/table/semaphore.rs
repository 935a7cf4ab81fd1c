//! Counting semaphores: keys of [`Scope::Semaphore`], whose holders share the key, each with
//! its `permits`, as long as the permits held add up to no more than the key's `limit`. The
//! rules are in docs/LOCK_CORE.md ("Semaphores"); everything else (leases, sessions, tokens,
//! the queue, the hand-off, replication) is the lock table's own, so a semaphore grant is a
//! [`super::records::Lock`] in mode `shared` that carries its permits.
//!
//! Queue order is strict FIFO within a priority (`queue.rs` ranks waiters as for locks): a
//! semaphore waiter is blocked by every waiter ranked ahead of it, not only by incompatible
//! ones, so a request for many permits is never overtaken by later small ones, and the pump
//! stops at the first waiter that does not fit.

use super::ids::{KeyIdx, OwnerIdx};
use super::records::{Dirty, QueueKey};
use super::LockTable;
use crate::answer::LimitChanged;
use crate::error::LockError;
use crate::mode::Mode;
use crate::request::AcquireRequest;
use crate::types::{Millis, Scope, MAX_SEMAPHORE_LIMIT};

/// A semaphore acquire's checked numbers.
#[derive(Debug, Clone, Copy)]
pub(super) struct SemaphoreTerms {
    pub(super) permits: u16,
    pub(super) limit: u16,
}

impl LockTable {
    /// Checks the semaphore fields of an acquire (and refuses them on other scopes), then,
    /// for a semaphore, the request against the key as it is at `now`: the same limit while
    /// anyone holds or waits, no second grant or wait of the same owner with other permits.
    /// An unused key takes the request's limit here, before planning (`blocked_at` reads it).
    ///
    /// Same owner again: with the same permits the acquire is reentrant (the held grant and
    /// its token come back, as for locks); with other permits it is refused, naming
    /// `permits` — permits are not added up or given back in part.
    pub(super) fn semaphore_terms(
        &mut self,
        req: &AcquireRequest,
        now: Millis,
    ) -> Result<Option<SemaphoreTerms>, LockError> {
        if req.scope != Scope::Semaphore {
            if req.permits.is_some() {
                return Err(LockError::invalid("permits", "only semaphores have permits"));
            }
            if req.limit.is_some() {
                return Err(LockError::invalid("limit", "only semaphores have a limit"));
            }
            return Ok(None);
        }
        let terms = check_numbers(req)?;
        self.advance_to(now);
        let Some(k) = self.find_key(Scope::Semaphore, &req.key) else { return Ok(Some(terms)) };
        if !self.key_state(k).holders.is_empty() || self.key_state(k).queue.is_some() {
            let limit = self.key_state(k).limit;
            if limit != terms.limit {
                return Err(LockError::LimitMismatch {
                    key: req.key.clone(),
                    limit: u32::from(limit),
                    requested: u32::from(terms.limit),
                });
            }
            if let Some(o) = self.find_owner(&req.owner) {
                self.check_same_owner(k, o, &req.key, terms.permits)?;
            }
        } else {
            self.keys.live_mut(k).limit = terms.limit;
        }
        Ok(Some(terms))
    }

    /// Refuses an owner that holds the semaphore with other permits or already waits for it.
    fn check_same_owner(
        &self,
        k: KeyIdx,
        o: OwnerIdx,
        name: &str,
        permits: u16,
    ) -> Result<(), LockError> {
        if let Some(l) = self.find_target_lock(o, k) {
            let held = self.lock(l).permits;
            if held != permits {
                return Err(LockError::invalid(
                    "permits",
                    format!(
                        "[{}] holds [{held}] permits of semaphore [{name}]; release them before \
                         asking for [{permits}]",
                        self.owner_name(o)
                    ),
                ));
            }
        }
        let waits = self
            .owners
            .live(o)
            .waiters
            .iter()
            .any(|w| self.waiter(*w).keys.iter().any(|(kk, _)| *kk == k));
        if waits {
            return Err(LockError::invalid(
                "owner",
                format!("[{}] already waits for semaphore [{name}]", self.owner_name(o)),
            ));
        }
        Ok(())
    }

    /// Sets the limit of semaphore `name` once an acquire has interned it (granted or queued).
    pub(super) fn set_semaphore_limit(&mut self, name: &str, limit: u16) {
        if let Some(k) = self.find_key(Scope::Semaphore, name) {
            self.keys.live_mut(k).limit = limit;
        }
    }

    /// The work of [`LockTable::change_semaphore_limit`]: the semaphore must be in use (its limit
    /// lives only while anyone holds or waits); no waiter may ask for more than the new limit
    /// (it could never be granted); below the permits held only with `below_held`. Every holder
    /// is noted as changed, so the next delta carries the new limit to the replicas, and the
    /// pump grants the waiters a raised limit lets in.
    pub(super) fn change_limit(
        &mut self,
        name: &str,
        limit: u32,
        below_held: bool,
    ) -> Result<LimitChanged, LockError> {
        crate::validate::name(name, Scope::Semaphore, &self.config.limits)?;
        if limit == 0 || limit > MAX_SEMAPHORE_LIMIT {
            return Err(LockError::invalid(
                "limit",
                format!("must be 1..={MAX_SEMAPHORE_LIMIT}, got [{limit}]"),
            ));
        }
        let k = self
            .find_key(Scope::Semaphore, name)
            .filter(|&k| !self.key_state(k).holders.is_empty() || self.key_state(k).queue.is_some())
            .ok_or_else(|| LockError::NotHeld { key: name.to_owned(), owner: "anyone".into() })?;
        let held = self.held_permits(k);
        if limit < held && !below_held {
            return Err(LockError::invalid(
                "limit",
                format!(
                    "[{held}] permits of semaphore [{name}] are held: a limit below them needs \
                     every node of the cluster to read state format 3 (docs/API.md, \
                     \"Semaphores\")"
                ),
            ));
        }
        self.check_waiters_fit(k, name, limit)?;
        let previous = u32::from(self.key_state(k).limit);
        // Fits a u16: checked against MAX_SEMAPHORE_LIMIT above.
        self.keys.live_mut(k).limit = limit as u16;
        let holders: Vec<_> = self.key_state(k).holders.iter().map(|h| h.lock).collect();
        for l in holders {
            self.note_lock(l);
        }
        let mut dirty: Dirty = smallvec::smallvec![k];
        self.pump(&mut dirty);
        Ok(LimitChanged { limit, previous, held })
    }

    /// Refuses a limit below the permits a waiter of semaphore `k` asks for.
    fn check_waiters_fit(&self, k: KeyIdx, name: &str, limit: u32) -> Result<(), LockError> {
        let queue = self.key_state(k).queue.iter().flat_map(|q| q.values());
        if let Some(w) = queue.map(|wid| self.waiter(*wid)).find(|w| u32::from(w.permits) > limit) {
            return Err(LockError::invalid(
                "limit",
                format!(
                    "[{}] waits for [{}] permits of semaphore [{name}], more than [{limit}]",
                    self.owner_name(w.owner),
                    w.permits
                ),
            ));
        }
        Ok(())
    }

    /// Whether `permits` for `owner` on semaphore `k` are blocked: by the permits held (an
    /// owner that holds the key already is never blocked, as for locks) or by any waiter
    /// ranked before `qkey` (strict FIFO, see the module docs).
    pub(super) fn semaphore_blocked(
        &self,
        k: KeyIdx,
        owner: OwnerIdx,
        permits: u16,
        qkey: QueueKey,
    ) -> bool {
        let ks = self.key_state(k);
        if ks.holders.iter().any(|h| h.owner == owner) {
            return false;
        }
        if self.held_permits(k) + u32::from(permits) > u32::from(ks.limit) {
            return true;
        }
        ks.queue.as_ref().is_some_and(|q| q.range(..qkey).next().is_some())
    }

    /// The permits held on semaphore `k`.
    pub(super) fn held_permits(&self, k: KeyIdx) -> u32 {
        self.key_state(k).holders.iter().map(|h| u32::from(self.lock(h.lock).permits)).sum()
    }

    /// The pump of a semaphore: grants its waiters in queue order and stops at the first that
    /// does not fit (strict FIFO).
    pub(super) fn pump_semaphore(&mut self, k: KeyIdx, dirty: &mut Dirty) {
        while let Some(wid) =
            self.key_state(k).queue.as_ref().and_then(|q| q.values().next().copied())
        {
            if !self.waiter_grantable(wid) {
                break;
            }
            self.grant_waiter(wid, dirty);
        }
    }

    /// `permits` as the answers show them: only on a semaphore.
    pub(super) fn shown_permits(&self, k: KeyIdx, permits: u16) -> Option<u32> {
        (self.key_state(k).scope == Scope::Semaphore).then_some(u32::from(permits))
    }

    /// The limit of key `k` as the answers show it: only on a semaphore.
    pub(super) fn shown_limit(&self, k: KeyIdx) -> Option<u32> {
        let ks = self.key_state(k);
        (ks.scope == Scope::Semaphore).then_some(u32::from(ks.limit))
    }

    /// The permits of semaphore `k`'s limit that nobody holds, as the answers show them: only on
    /// a semaphore.
    pub(super) fn shown_remaining(&self, k: KeyIdx) -> Option<u32> {
        let limit = self.shown_limit(k)?;
        Some(limit.saturating_sub(self.held_permits(k)))
    }

    /// The invariants of the semaphores: a limit on every used semaphore, permits of every
    /// waiter within it, every holder with permits; no permits elsewhere. The permits held may
    /// exceed the limit after it was lowered (nothing held is revoked); that no grant ever
    /// takes them over it is checked by the model tests, which see every grant.
    pub(super) fn check_semaphores(&self) -> Result<(), String> {
        for (_, ks) in self.keys.iter() {
            let used = !ks.holders.is_empty() || ks.queue.is_some();
            if ks.scope != Scope::Semaphore || !used {
                continue;
            }
            if ks.limit == 0 {
                return Err(format!("semaphore {} has no limit", ks.name));
            }
            for h in &ks.holders {
                let lk = self.lock(h.lock);
                if lk.permits == 0 || lk.mode != Mode::Shared {
                    return Err(format!("semaphore {} has a holder without permits", ks.name));
                }
            }
            for wid in ks.queue.iter().flat_map(|q| q.values()) {
                let p = self.waiter(*wid).permits;
                if p == 0 || p > ks.limit {
                    return Err(format!("semaphore {} has a waiter for {p} permits", ks.name));
                }
            }
        }
        let (mut grants, mut permits) = (0usize, 0u64);
        for lk in self.locks.iter().filter(|l| l.live) {
            let sem = self.key_state(lk.key).scope == Scope::Semaphore;
            if !sem && lk.permits != 0 {
                return Err(format!("lock on {} has permits", self.key_name(lk.key)));
            }
            grants += usize::from(sem);
            permits += u64::from(lk.permits);
        }
        if (grants, permits) != (self.semaphore_grants, self.held_permits) {
            return Err(format!(
                "semaphore counts drifted: {grants} grants, {permits} permits vs {}, {}",
                self.semaphore_grants, self.held_permits
            ));
        }
        Ok(())
    }
}

/// The permits and limit of a semaphore acquire, each named when out of range.
fn check_numbers(req: &AcquireRequest) -> Result<SemaphoreTerms, LockError> {
    if req.mode != Mode::Exclusive {
        return Err(LockError::invalid("mode", "a semaphore has no modes"));
    }
    let limit = req.limit.ok_or_else(|| LockError::invalid("limit", "is required"))?;
    if limit == 0 || limit > MAX_SEMAPHORE_LIMIT {
        return Err(LockError::invalid(
            "limit",
            format!("must be 1..={MAX_SEMAPHORE_LIMIT}, got [{limit}]"),
        ));
    }
    let permits = req.permits.unwrap_or(1);
    if permits == 0 || permits > limit {
        return Err(LockError::invalid(
            "permits",
            format!("must be 1..=limit [{limit}], got [{permits}]"),
        ));
    }
    // Both fit a u16: limit <= MAX_SEMAPHORE_LIMIT and permits <= limit.
    Ok(SemaphoreTerms { permits: permits as u16, limit: limit as u16 })
}

/// The checked numbers of a semaphore lock in a snapshot: a limit and permits in range, as in a
/// request, except that the permits may exceed the limit (a holder's, after a lowering).
pub(super) fn snapshot_numbers(
    permits: Option<u32>,
    limit: Option<u32>,
) -> Result<SemaphoreTerms, LockError> {
    let raised = limit.map(|l| l.max(permits.unwrap_or(1)));
    let req = AcquireRequest { permits, limit: raised, ..Default::default() };
    let terms = check_numbers(&req).map_err(|e| LockError::invalid("snapshot", e.to_string()))?;
    // Checked by check_numbers: limit >= 1, so a u16.
    Ok(SemaphoreTerms { limit: limit.unwrap_or(0) as u16, ..terms })
}
