//! Granting: turning targets into held locks under one fresh fencing token, in-place upgrades
//! and downgrades (with the intention modes on tree ancestors), and the answer records of a
//! grant.
//!
//! Used by both an immediate grant (`acquire.rs`) and the hand-off to a waiter (`queue.rs`),
//! so a lock is created in exactly one place.

use super::deadline::DeadlineKind;
use super::ids::{KeyIdx, LockIdx, OwnerIdx, SessIdx, NO_SESSION};
use super::records::{Captured, Granted, HolderEntry, Lock, Target, SESSION_LEASE};
use super::LockTable;
use crate::answer::WatchReason;
use crate::answer::{Grant, TokenGrant};
use crate::error::LockError;
use crate::mode::Mode;
use crate::types::{FencingToken, Millis, Priority, Scope};

/// The terms every target of one grant shares.
#[derive(Debug, Clone, Copy)]
pub(super) struct GrantTerms {
    /// One fresh token for all targets of the request.
    pub(super) token: FencingToken,
    /// The grant time.
    pub(super) now: Millis,
    /// The lease of a lock not held under a session.
    pub(super) lease_ms: Millis,
    /// The session to hold the locks under, or [`NO_SESSION`].
    pub(super) session: SessIdx,
    /// A semaphore grant's permits, 0 for other scopes (`semaphore.rs`).
    pub(super) permits: u16,
    /// The lock-delay of the locks granted (`delay.rs`), 0 for none.
    pub(super) lock_delay_ms: Millis,
    /// The priority they were asked at (`preempt.rs`).
    pub(super) priority: Priority,
    /// The acquisition's digest (0: none): a held target of another acquisition is granted
    /// again under `token`, which ends the grant it had (docs/API.md, "Acquisitions").
    pub(super) acquisition: u64,
}

/// Whether a held lock of acquisition `held` is the grant a request of acquisition `asked`
/// names again (a retry): only the same id, never "no id" (docs/API.md, "Acquisitions").
pub(super) fn same_acquisition(held: u64, asked: u64) -> bool {
    asked != 0 && held == asked
}

impl LockTable {
    /// Grants `targets` to `owner` with one fresh token (in `terms`): new locks, in-place
    /// upgrades and re-grants of a lock held under another acquisition, or the existing lock
    /// when the same acquisition already holds it in a covering mode.
    pub(super) fn apply_grant(
        &mut self,
        owner: OwnerIdx,
        targets: &[Target],
        terms: &GrantTerms,
    ) -> Granted {
        let GrantTerms {
            token,
            now,
            lease_ms,
            session,
            permits,
            lock_delay_ms,
            priority,
            acquisition,
        } = *terms;
        let lease_until =
            if session == NO_SESSION { now.saturating_add(lease_ms) } else { SESSION_LEASE };
        let mut grants = Granted::new();
        for t in targets {
            match self.find_target_lock(owner, t.key) {
                Some(l)
                    if self.lock(l).mode.covers(t.mode)
                        && same_acquisition(self.lock(l).acquisition, acquisition) =>
                {
                    grants.push((l, true));
                }
                Some(l) => {
                    let mode = self.lock(l).mode.join(t.mode);
                    if !self.lock(l).mode.covers(t.mode) {
                        self.counters.upgrades += 1;
                    }
                    // Replicas know the lock by its token, which the new grant replaces.
                    self.note_removed(l);
                    self.fire_watches(l, WatchReason::Upgraded);
                    // A new leadership publishes its own value, or none (`election.rs`).
                    self.election_values.unhold(l);
                    self.set_lock_mode(l, mode);
                    // An upgrade keeps the lock's lease regime: a lock held under a session
                    // stays under it; a lock with its own lease gets a fresh one (never the
                    // session marker — see `regression_upgrade_with_session_made_lease_endless`).
                    let lk = self.lock_mut(l);
                    lk.token = token;
                    lk.acquisition = acquisition;
                    if lk.session == NO_SESSION {
                        let until = now.saturating_add(lease_ms);
                        lk.lease_until = until;
                        self.push_deadline(until, DeadlineKind::Lease { lock: l, token: token.0 });
                    }
                    self.keep_lock_delay(l, lock_delay_ms);
                    // Under its new token the lock is another grant: a revoke of the old one lapses.
                    self.forget_preemption(l);
                    self.keep_priority(l, priority);
                    grants.push((l, false));
                }
                None => {
                    let l = self.add_lock(Lock {
                        owner,
                        key: t.key,
                        session,
                        mode: t.mode,
                        live: true,
                        permits,
                        token,
                        granted_at: now,
                        lease_until,
                        acquisition,
                    });
                    self.keep_lock_delay(l, lock_delay_ms);
                    self.keep_priority(l, priority);
                    grants.push((l, false));
                }
            }
        }
        grants
    }

    /// Stores a new live lock: holder entries on its key and tree ancestors, its owner's
    /// counts, and its lease deadline (or its session's lock set).
    pub(super) fn add_lock(&mut self, lock: Lock) -> LockIdx {
        let Lock { owner, key, session, mode, token, lease_until, .. } = lock;
        let scope = self.key_state(key).scope;
        let l = match self.free_locks.pop() {
            Some(l) => {
                if let Some(slot) = self.locks.get_mut(l as usize) {
                    *slot = lock;
                }
                l
            }
            None => {
                self.locks.push(lock);
                (self.locks.len() - 1) as LockIdx
            }
        };
        self.live_locks += 1;
        if lock.permits > 0 {
            self.semaphore_grants += 1;
            self.held_permits += u64::from(lock.permits);
        }
        if scope == Scope::Election {
            self.election_leaders += 1;
        }
        self.note_lock(l);
        let o = self.owners.live_mut(owner);
        o.refs += 1;
        o.locks += 1;
        self.add_holder(key, HolderEntry { lock: l, owner, mode });
        self.list_lock_added(key);
        if !self.watches.by_name.is_empty() {
            self.fire_holder_watches(l);
        }
        if scope == Scope::Tree {
            for anc in self.ancestor_keys(key) {
                self.add_holder(anc, HolderEntry { lock: l, owner, mode: mode.intention() });
            }
        }
        if session == NO_SESSION {
            self.push_deadline(lease_until, DeadlineKind::Lease { lock: l, token: token.0 });
        } else {
            self.sessions.live_mut(session).locks.insert(l);
        }
        l
    }

    /// Adds a holder entry, counting the key as held when it is its first.
    pub(super) fn add_holder(&mut self, k: KeyIdx, h: HolderEntry) {
        let ks = self.keys.live_mut(k);
        if ks.holders.is_empty() {
            self.held_keys += 1;
        }
        ks.holders.push(h);
        self.holder_entries += 1;
    }

    /// Changes a lock's mode, with the intention modes on its tree ancestors.
    pub(super) fn set_lock_mode(&mut self, l: LockIdx, mode: Mode) {
        let k = self.lock(l).key;
        self.note_lock(l);
        self.lock_mut(l).mode = mode;
        for h in self.keys.live_mut(k).holders.iter_mut().filter(|h| h.lock == l) {
            h.mode = mode;
        }
        if self.key_state(k).scope == Scope::Tree {
            for anc in self.ancestor_keys(k) {
                for h in self.keys.live_mut(anc).holders.iter_mut().filter(|h| h.lock == l) {
                    h.mode = mode.intention();
                }
            }
        }
    }

    /// The answer values of a grant as they are now (see [`Captured`]).
    pub(super) fn capture(&self, l: LockIdx, reentrant: bool) -> Captured {
        let lk = self.lock(l);
        let grant = TokenGrant {
            fencing_token: lk.token,
            mode: lk.mode,
            lease_ms: self.lease_left(l),
            reentrant,
        };
        Captured { lock: l, grant }
    }

    /// The answer record of an immediate grant, with the values captured when it was made.
    pub(super) fn captured_record(&self, c: &Captured) -> Grant {
        let TokenGrant { fencing_token, mode, lease_ms, reentrant } = c.grant;
        Grant { fencing_token, mode, lease_ms, ..self.grant_record(c.lock, 0, reentrant) }
    }

    /// The answer record of a lock as it is now.
    pub(super) fn grant_record(&self, l: LockIdx, waited_ms: Millis, reentrant: bool) -> Grant {
        let lk = self.lock(l);
        let ks = self.key_state(lk.key);
        Grant {
            key: ks.name[..].to_owned(),
            owner: self.owner_name(lk.owner),
            mode: lk.mode,
            fencing_token: lk.token,
            waited_ms,
            reentrant,
            scope: ks.scope,
            lease_ms: self.lease_left(l),
            session: self.session_name(lk.session),
            permits: self.shown_permits(lk.key, lk.permits),
            limit: self.shown_limit(lk.key),
            remaining: self.shown_remaining(lk.key),
            value: self.election_value(l),
        }
    }

    /// Milliseconds of lease left (a session lock: of its session).
    pub(super) fn lease_left(&self, l: LockIdx) -> Millis {
        let lk = self.lock(l);
        let until = if lk.session == NO_SESSION {
            lk.lease_until
        } else {
            self.sessions.live(lk.session).expires_at
        };
        until.saturating_sub(self.now)
    }

    /// The next fencing token of this epoch.
    pub(super) fn next_token(&mut self) -> Result<FencingToken, LockError> {
        if self.counter >= FencingToken::MAX_COUNTER {
            // Not reachable in practice (10^12 grants in one epoch); refusing beats wrapping,
            // which would break the strictly-increasing promise.
            return Err(LockError::invalid("epoch", "fencing counter exhausted in this epoch"));
        }
        self.counter += 1;
        Ok(FencingToken::new(self.epoch, self.counter))
    }
}
