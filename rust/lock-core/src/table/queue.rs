//! Queue order and hand-off: where a waiter stands in each key's queue, when it is blocked,
//! and the pump that grants waiters in queue order whenever something is released.
//!
//! # Queue order
//!
//! A waiter of priority `p` (0..=9) that arrived at time `t` gets the rank `t − p·aging_ms`
//! (with aging off: `(9 − p)`), and waiters are considered in (rank, arrival) order. Its
//! effective priority `p + (now − t) / aging_ms` grows with time, and comparing two waiters'
//! effective priorities at any instant gives the same answer as comparing their ranks — so the
//! order never has to be re-sorted while time passes. Within one priority this is plain FIFO.
//! An upgrade of a held lock is ranked ahead of everything (it already holds the key).
//!
//! A waiter is granted when, on every key it needs, its mode is compatible with every holder of
//! another owner and with every waiter ranked ahead of it (no barging past an earlier
//! incompatible waiter; an owner's own earlier waiter also blocks it, so one owner's requests are
//! served in order). All its keys are granted in one step (all-or-nothing). Because the rank
//! order is the same on every key, waiters never wait for each other in a cycle; only holders
//! that wait can deadlock, and those cycles are found on the owner wait-for graph
//! (`deadlock.rs`).

use std::ops::Bound;

use super::deadline::DeadlineKind;
use super::grant::GrantTerms;
use super::ids::{KeyIdx, OwnerIdx, NO_SESSION};
use super::records::{Dirty, QueueKey, Waiter};
use super::LockTable;
use crate::answer::Grant;
use crate::event::{CancelReason, Event};
use crate::mode::Mode;
use crate::types::{Millis, Priority, Scope, SessionId, WaiterId};

/// Every mode compatible: the neutral element of the queue-scan mask (one bit per mode, see
/// [`Mode::bit`]).
const ALL_MASK: u8 = 0b11111;

impl LockTable {
    /// The rank of a new waiter of priority `p` arriving at `now` (see the module docs).
    pub(super) fn rank(&self, p: Priority, now: Millis) -> i128 {
        if self.config.aging_ms == 0 {
            i128::from(Priority::MAX.0 - p.0.min(Priority::MAX.0))
        } else {
            i128::from(now) - i128::from(p.0) * i128::from(self.config.aging_ms)
        }
    }

    /// Whether `mode` on key `k` for `owner` is blocked by a holder of another owner or by a
    /// waiter ranked before `qkey`; on a semaphore, whether `permits` do not fit
    /// (`semaphore.rs`).
    ///
    /// A key on which the owner already holds a covering mode never blocks: every other holder
    /// is compatible with that holding, and every waiter it would pass waits for it already.
    pub(super) fn blocked_at(
        &self,
        k: KeyIdx,
        owner: OwnerIdx,
        mode: Mode,
        permits: u16,
        qkey: QueueKey,
    ) -> bool {
        let ks = self.key_state(k);
        if ks.scope == Scope::Semaphore {
            return self.semaphore_blocked(k, owner, permits, qkey);
        }
        if ks.holders.iter().any(|h| h.owner == owner && h.mode.covers(mode)) {
            return false;
        }
        if self.delay_blocks(k, owner, mode) {
            return true;
        }
        if ks.holders.iter().any(|h| h.owner != owner && !h.mode.compatible_with(mode)) {
            return true;
        }
        if let Some(q) = &ks.queue {
            for (_, wid) in q.range(..qkey) {
                let w = self.waiter(*wid);
                if w.owner == owner || !w.mode_on(k).compatible_with(mode) {
                    return true;
                }
            }
        }
        false
    }

    /// Puts a waiter in every structure: the queue of each of its keys, its owner, its
    /// session and the deadline heap.
    pub(super) fn insert_waiter(&mut self, id: WaiterId, w: Waiter) {
        for &(k, _) in &w.keys {
            let ks = self.keys.live_mut(k);
            if ks.queue.is_none() {
                self.queues += 1;
            }
            ks.queue.get_or_insert_with(Default::default).insert(w.qkey, id);
        }
        self.queue_entries += w.keys.len();
        let o = self.owners.live_mut(w.owner);
        o.refs += 1;
        o.waiters.push(id);
        if w.session != NO_SESSION {
            self.sessions.live_mut(w.session).waiters.insert(id);
        }
        self.push_deadline(w.deadline, DeadlineKind::Wait { waiter: id });
        self.waiters.insert(id, w);
    }

    /// Takes a waiter out of every structure; its keys go to `dirty`.
    pub(super) fn remove_waiter(&mut self, id: WaiterId, dirty: &mut Dirty) -> Option<Waiter> {
        let w = self.waiters.remove(&id)?;
        self.election_values.unpend(id);
        self.queue_entries -= w.keys.len();
        for &(k, _) in &w.keys {
            let ks = self.keys.live_mut(k);
            if let Some(q) = ks.queue.as_mut() {
                q.remove(&w.qkey);
                if q.is_empty() {
                    ks.queue = None;
                    self.queues -= 1;
                }
            }
            dirty.push(k);
        }
        let o = self.owners.live_mut(w.owner);
        o.waiters.retain(|x| *x != id);
        if w.session != NO_SESSION {
            if let Some(s) = self.sessions.get_mut(w.session) {
                s.waiters.remove(&id);
            }
        }
        self.owner_unref(w.owner);
        Some(w)
    }

    /// Grants whatever became grantable on the `dirty` keys, in queue order, until nothing
    /// changes; then frees keys nobody holds or waits for.
    pub(super) fn pump(&mut self, dirty: &mut Dirty) {
        let mut touched: Dirty = Dirty::new();
        while let Some(k) = dirty.pop() {
            if !self.keys.contains(k) {
                continue;
            }
            touched.push(k);
            self.pump_key(k, dirty);
        }
        if touched.len() > 1 {
            touched.sort_unstable();
            touched.dedup();
        }
        for k in touched {
            self.free_key_if_unused(k);
        }
    }

    /// Grants the waiters of key `k` that became grantable, in queue order.
    pub(super) fn pump_key(&mut self, k: KeyIdx, dirty: &mut Dirty) {
        if self.key_state(k).scope == Scope::Semaphore {
            return self.pump_semaphore(k, dirty);
        }
        // Modes still compatible with every waiter looked at so far (see module docs). Once
        // it (or the holders' mask) is empty, only waiters of owners that hold this key can
        // still pass (a covering holding never blocks its owner); if there are none, stop.
        let mut wmask = ALL_MASK;
        let mut cursor: Option<QueueKey> = None;
        loop {
            let ks = self.key_state(k);
            let Some(q) = ks.queue.as_ref() else { break };
            let next = match cursor {
                None => q.iter().next(),
                Some(c) => q.range((Bound::Excluded(c), Bound::Unbounded)).next(),
            };
            let Some((&qk, &wid)) = next else { break };
            let hmask = ks.holders.iter().fold(ALL_MASK, |m, h| m & h.mode.compat_mask());
            if (wmask == 0 || hmask == 0) && !self.holder_owners_wait_on(k) {
                break;
            }
            let w = self.waiter(wid);
            let m = w.mode_on(k);
            let owner_holds = ks.holders.iter().any(|h| h.owner == w.owner);
            let own_covers =
                owner_holds && ks.holders.iter().any(|h| h.owner == w.owner && h.mode.covers(m));
            let maybe =
                own_covers || (wmask & m.bit() != 0 && (owner_holds || hmask & m.bit() != 0));
            if maybe && self.waiter_grantable(wid) {
                self.grant_waiter(wid, dirty);
                continue;
            }
            wmask &= m.compat_mask();
            cursor = Some(qk);
        }
    }

    /// Whether an owner holding key `k` also waits on it (an upgrade may still pass).
    pub(super) fn holder_owners_wait_on(&self, k: KeyIdx) -> bool {
        self.key_state(k).holders.iter().any(|h| {
            self.owners
                .live(h.owner)
                .waiters
                .iter()
                .any(|w| self.waiter(*w).keys.iter().any(|(kk, _)| *kk == k))
        })
    }

    /// Whether nothing blocks waiter `wid` on any of its keys.
    pub(super) fn waiter_grantable(&self, wid: WaiterId) -> bool {
        let w = self.waiter(wid);
        w.keys.iter().all(|&(k, m)| !self.blocked_at(k, w.owner, m, w.permits, w.qkey))
    }

    /// Hand-off: removes a waiter, grants it all its targets under one fresh token and emits
    /// [`Event::Granted`].
    pub(super) fn grant_waiter(&mut self, wid: WaiterId, dirty: &mut Dirty) {
        let now = self.now;
        // The owner stays referenced through the grant: pin it across the waiter's removal.
        let Some(owner) = self.waiters.get(&wid).map(|w| w.owner) else { return };
        let value = self.election_values.unpend(wid);
        self.owners.live_mut(owner).refs += 1;
        let Some(w) = self.remove_waiter(wid, dirty) else { return };
        let Ok(token) = self.next_token() else {
            // Counter exhausted: time the waiter out rather than break tokens.
            self.owner_unref(owner);
            self.emit_timeout(wid, &w, now);
            return;
        };
        let waited = now.saturating_sub(w.enqueued_at);
        let session = if w.session != NO_SESSION && self.sessions.contains(w.session) {
            w.session
        } else {
            NO_SESSION
        };
        let terms = GrantTerms {
            token,
            now,
            lease_ms: w.lease_ms,
            session,
            permits: w.permits,
            lock_delay_ms: w.lock_delay_ms,
            priority: w.priority,
            acquisition: w.acquisition,
        };
        let granted = self.apply_grant(owner, &w.targets, &terms);
        self.audit_grants(&granted, Some(waited));
        if let (Some(v), Some(&(l, _))) = (value, granted.first()) {
            self.election_values.hold(l, v);
        }
        let grants: Vec<Grant> =
            granted.iter().map(|&(l, reentrant)| self.grant_record(l, waited, reentrant)).collect();
        self.owner_unref(owner);
        self.counters.grants_after_wait += 1;
        self.wait_hist.record(waited, now);
        let owner_name = self.owner_name(owner);
        self.events.push(Event::Granted {
            waiter_id: wid,
            request_id: w.request_id,
            owner: owner_name,
            grants,
            multi: w.multi,
        });
    }

    /// The key a waiter's events name: its first target (a multi-lock waits for all).
    pub(super) fn waiter_key(&self, w: &Waiter) -> String {
        w.targets.first().map(|t| self.key_name(t.key)).unwrap_or_default()
    }

    /// Emits [`Event::WaitTimedOut`] for a waiter already removed.
    pub(super) fn emit_timeout(&mut self, wid: WaiterId, w: &Waiter, now: Millis) {
        self.counters.wait_timeouts += 1;
        let key = self.waiter_key(w);
        self.events.push(Event::WaitTimedOut {
            waiter_id: wid,
            request_id: w.request_id,
            owner: self.owner_name(w.owner),
            key,
            waited_ms: now.saturating_sub(w.enqueued_at),
        });
    }

    /// Removes a waiter that will not be granted (timed out, cancelled, deadlock victim) and
    /// lets `answer` count it and emit its final event. The owner is pinned across the removal,
    /// so its name is still interned when the event names it. Its keys go to `dirty`, for the
    /// caller to pump. False when `wid` was not queued (then `answer` is not called).
    pub(super) fn end_waiter(
        &mut self,
        wid: WaiterId,
        dirty: &mut Dirty,
        answer: impl FnOnce(&mut Self, &Waiter),
    ) -> bool {
        let Some(owner) = self.waiters.get(&wid).map(|w| w.owner) else { return false };
        self.owners.live_mut(owner).refs += 1;
        let removed = self.remove_waiter(wid, dirty);
        if let Some(w) = &removed {
            answer(self, w);
        }
        self.owner_unref(owner);
        removed.is_some()
    }

    /// Removes a waiter with [`Event::Cancelled`] and passes its keys on; `session` is the
    /// session whose end dropped it, named in the event (and so in the waiter's error).
    pub(super) fn drop_waiter(
        &mut self,
        wid: WaiterId,
        reason: CancelReason,
        session: Option<SessionId>,
    ) {
        let mut dirty = Dirty::new();
        self.drop_waiter_unpumped(wid, reason, session, &mut dirty);
        self.pump(&mut dirty);
    }

    /// [`LockTable::drop_waiter`] without granting anyone: the keys it waited on go into
    /// `dirty` for the caller to pump once it has finished its other changes (ending a session
    /// drops all its waiters first, so none of them is granted in between).
    pub(super) fn drop_waiter_unpumped(
        &mut self,
        wid: WaiterId,
        reason: CancelReason,
        session: Option<SessionId>,
        dirty: &mut Dirty,
    ) {
        self.end_waiter(wid, dirty, |t, w| {
            t.counters.cancelled += 1;
            let key = t.waiter_key(w);
            t.events.push(Event::Cancelled {
                waiter_id: wid,
                request_id: w.request_id,
                owner: t.owner_name(w.owner),
                key,
                reason,
                session: session.map(|id| id.to_string()),
            });
        });
    }
}
