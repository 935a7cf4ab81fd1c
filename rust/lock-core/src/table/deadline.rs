//! Time: the heap of lease, wait, session and watch deadlines, and `advance`, which processes them
//! in deadline order. The table never reads a clock; every call brings its `now`
//! (docs/ARCHITECTURE.md, "Waiting without threads, and time").

use std::cmp::Reverse;

use super::ids::{KeyIdx, LockIdx, SessIdx, NO_SESSION};
use super::records::Dirty;
use super::LockTable;
use crate::answer::WatchReason;
use crate::event::{CancelReason, Event};
use crate::types::{Millis, WaiterId};

/// Latest time the table works with (about 146 million years of milliseconds); later clock
/// values count as this, so `now + lease` never reaches the internal "held under a session"
/// lease marker (`u64::MAX`).
pub const MAX_TIME: Millis = 1 << 62;

/// Stale heap entries tolerated beyond twice the live records before the heap is compacted:
/// small enough to bound memory, large enough that compaction is rare.
const STALE_SLACK: usize = 1024;

/// What a deadline ends. Each kind carries what identifies its record's current version, so
/// an entry left behind by a renewal is recognised as stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum DeadlineKind {
    Lease {
        lock: LockIdx,
        token: u64,
    },
    Wait {
        waiter: WaiterId,
    },
    /// A session by its slot: an entry outlives its session only as a stale one, since a slot
    /// reused by a later session is live only at that session's own expiry.
    Session {
        idx: SessIdx,
    },
    /// A watch's wait (`watch.rs`).
    Watch {
        watch: WaiterId,
    },
    /// The end of a lock-delay on a key (`delay.rs`).
    Delay {
        key: KeyIdx,
    },
    /// The end of the grace a holder was given to yield (`preempt.rs`).
    Revoke {
        lock: LockIdx,
        token: u64,
    },
}

/// One entry of the deadline heap (a min-heap through `Reverse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Deadline {
    pub(super) at: Millis,
    pub(super) kind: DeadlineKind,
}

impl LockTable {
    /// [`LockTable::advance`] without the final heap pruning (the public calls prune once at
    /// their end).
    pub(super) fn advance_to(&mut self, now: Millis) {
        let now = now.min(MAX_TIME);
        if now > self.now {
            self.now = now;
        }
        let now = self.now;
        let mut dirty = Dirty::new();
        while let Some(Reverse(d)) = self.deadlines.peek().copied() {
            if d.at > now {
                break;
            }
            self.deadlines.pop();
            if !self.deadline_live(&d) {
                continue;
            }
            match d.kind {
                DeadlineKind::Lease { lock, .. } => self.expire_lease(lock, &mut dirty),
                DeadlineKind::Wait { waiter } => self.expire_wait(waiter, &mut dirty),
                DeadlineKind::Session { idx } => self.expire_session(idx),
                DeadlineKind::Watch { watch } => self.expire_watch(watch),
                DeadlineKind::Delay { key } => self.expire_delays(key, &mut dirty),
                DeadlineKind::Revoke { lock, .. } => self.end_grace(lock, &mut dirty),
            }
            self.pump(&mut dirty);
        }
    }

    /// A lease ran out: [`Event::LeaseExpired`], and the lock goes.
    fn expire_lease(&mut self, lock: LockIdx, dirty: &mut Dirty) {
        let now = self.now;
        let lk = *self.lock(lock);
        let ks = self.key_state(lk.key);
        self.events.push(Event::LeaseExpired {
            key: ks.name[..].to_owned(),
            scope: ks.scope,
            owner: self.owner_name(lk.owner),
            fencing_token: lk.token,
            held_ms: now.saturating_sub(lk.granted_at),
        });
        self.counters.lease_expiries += 1;
        self.remove_lock(lock, dirty, WatchReason::Expired);
    }

    /// A wait ran out: [`Event::WaitTimedOut`], and the waiter goes.
    fn expire_wait(&mut self, waiter: WaiterId, dirty: &mut Dirty) {
        let now = self.now;
        self.end_waiter(waiter, dirty, |t, w| t.emit_timeout(waiter, w, now));
    }

    /// A session ran out: its locks and waiters go, then [`Event::SessionExpired`].
    fn expire_session(&mut self, idx: SessIdx) {
        if let Some(s) = self.sessions.get(idx) {
            let (id, owner) = (s.id, s.owner);
            let owner_name = self.owner_name(owner);
            self.owners.live_mut(owner).refs += 1;
            let (released, _) = self.close_session(idx, CancelReason::SessionExpired);
            self.counters.sessions_expired += 1;
            self.events.push(Event::SessionExpired {
                session: id.to_string(),
                owner: owner_name,
                released,
            });
            self.owner_unref(owner);
        }
    }

    /// Whether a heap entry still describes its record (a renewed lease, a granted waiter or
    /// a kept-alive session leaves a stale entry behind, skipped lazily).
    pub(super) fn deadline_live(&self, d: &Deadline) -> bool {
        match d.kind {
            DeadlineKind::Lease { lock, token } => self.locks.get(lock as usize).is_some_and(|l| {
                l.live && l.token.0 == token && l.session == NO_SESSION && l.lease_until == d.at
            }),
            DeadlineKind::Wait { waiter } => {
                self.waiters.get(&waiter).is_some_and(|w| w.deadline == d.at)
            }
            DeadlineKind::Session { idx } => {
                self.sessions.get(idx).is_some_and(|s| s.expires_at == d.at)
            }
            DeadlineKind::Watch { watch } => self.watch_deadline_live(watch, d.at),
            DeadlineKind::Delay { key } => self.delay_deadline_live(key, d.at),
            DeadlineKind::Revoke { lock, token } => self.revoke_deadline_live(lock, token, d.at),
        }
    }

    /// Adds a deadline; the "never" marker ([`Millis::MAX`], a session lock's lease) is not
    /// stored.
    pub(super) fn push_deadline(&mut self, at: Millis, kind: DeadlineKind) {
        if at == Millis::MAX {
            return;
        }
        self.deadlines.push(Reverse(Deadline { at, kind }));
    }

    /// Drops stale deadlines from the top of the heap (so `next_deadline` is exact) and
    /// compacts the heap when stale entries dominate.
    pub(super) fn prune_deadlines(&mut self) {
        while let Some(Reverse(d)) = self.deadlines.peek().copied() {
            if self.deadline_live(&d) {
                break;
            }
            self.deadlines.pop();
        }
        let live = self.live_locks
            + self.waiters.len()
            + self.live_sessions
            + self.watches.len()
            + self.delayed_keys();
        if self.deadlines.len() > STALE_SLACK + 2 * live {
            let heap = std::mem::take(&mut self.deadlines);
            self.deadlines = heap.into_iter().filter(|Reverse(d)| self.deadline_live(d)).collect();
        }
    }
}
