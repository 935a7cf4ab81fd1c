//! Introspection: what a key, the partition's locks, its counters and its longest waiters look
//! like right now. Read-only (`&self`); answers are owned records for the bridge to serialise.

use serde::{Deserialize, Serialize};

use super::ids::{KeyIdx, LockIdx};
use super::listing::{ListCursor, ListPage, PageSpec};
use super::records::{Lock, Waiter};
use super::LockTable;
use crate::answer::{HolderInfo, KeyInfo, LockInfo, WaiterInfo};
use crate::mode::Mode;
use crate::stats::{PartitionStats, SampleDrain, Telemetry};
use crate::types::{Millis, Priority, Scope, WaiterId};

/// A filter for [`LockTable::list_locks`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ListFilter {
    pub owner: Option<String>,
    pub prefix: Option<String>,
    /// Only locks of this scope (e.g. the semaphores for `_cat/semaphores`); `None` = all.
    pub scope: Option<Scope>,
    /// The page starts strictly after this place in the listing order (the previous page's
    /// [`ListPage::next`]); `None` = from the start.
    pub after: Option<ListCursor>,
    /// Most entries answered; 0 = [`ListFilter::DEFAULT_SIZE`], more than
    /// [`ListFilter::MAX_SIZE`] = that many.
    pub size: usize,
}

impl ListFilter {
    /// Entries answered when the filter gives no size: a page an admin can read, and a bound
    /// on the answer of a scan over the whole partition.
    pub const DEFAULT_SIZE: usize = 100;
    /// Most entries one page answers: a bound on the answer built under the partition's lock
    /// (docs/API.md, `GET /_locks`).
    pub const MAX_SIZE: usize = 1000;

    /// The most locks a page of this filter answers: `size` made concrete.
    pub fn page_size(&self) -> usize {
        match self.size {
            0 => ListFilter::DEFAULT_SIZE,
            n => n.min(ListFilter::MAX_SIZE),
        }
    }
}

impl LockTable {
    /// The holders and waiters of a key that passed validation, at `now`.
    pub(super) fn describe_key(&self, key: &str, scope: Scope, now: Millis) -> KeyInfo {
        let Some(k) = self.find_key(scope, key) else {
            return KeyInfo {
                key: key.to_owned(),
                scope,
                holders: Vec::new(),
                waiters: Vec::new(),
                limit: None,
                lock_delays: Vec::new(),
            };
        };
        let waiters = self
            .key_state(k)
            .queue
            .iter()
            .flat_map(|q| q.values())
            .map(|wid| {
                let w = self.waiter(*wid);
                self.waiter_info(*wid, w, w.mode_on(k), None, now)
            })
            .collect();
        let used = !self.key_state(k).holders.is_empty() || self.key_state(k).queue.is_some();
        KeyInfo {
            key: key.to_owned(),
            scope,
            holders: self.holder_infos(k, now),
            waiters,
            limit: self.shown_limit(k).filter(|_| used),
            lock_delays: self.delays_on(k),
        }
    }

    /// A waiter as lookups show it, needing `mode` on the key it is listed under.
    fn waiter_info(
        &self,
        id: WaiterId,
        w: &Waiter,
        mode: Mode,
        key: Option<String>,
        now: Millis,
    ) -> WaiterInfo {
        WaiterInfo {
            waiter_id: id,
            owner: self.owner_name(w.owner),
            mode,
            priority: w.priority,
            waited_ms: now.saturating_sub(w.enqueued_at),
            wait_left_ms: w.deadline.saturating_sub(now),
            key,
            permits: w.targets.first().and_then(|t| self.shown_permits(t.key, w.permits)),
        }
    }

    /// The holders of a key (intention entries of tree locks below included), as lookups and
    /// conflict errors show them.
    pub(super) fn holder_infos(&self, k: KeyIdx, now: Millis) -> Vec<HolderInfo> {
        self.key_state(k)
            .holders
            .iter()
            .map(|h| {
                let lk = self.lock(h.lock);
                HolderInfo {
                    owner: self.owner_name(h.owner),
                    mode: h.mode,
                    fencing_token: lk.token,
                    held_ms: now.saturating_sub(lk.granted_at),
                    lease_ms: self.lease_left(h.lock),
                    intention: lk.key != k,
                    permits: self.shown_permits(k, lk.permits),
                    value: self.election_value(h.lock),
                }
            })
            .collect()
    }

    /// A live lock as listings and snapshots show it.
    pub(super) fn lock_info(&self, l: LockIdx, lk: &Lock) -> LockInfo {
        let ks = self.key_state(lk.key);
        LockInfo {
            key: ks.name[..].to_owned(),
            scope: ks.scope,
            owner: self.owner_name(lk.owner),
            mode: lk.mode,
            fencing_token: lk.token,
            held_ms: self.now.saturating_sub(lk.granted_at),
            lease_ms: self.lease_left(l),
            session: self.session_name(lk.session),
            permits: self.shown_permits(lk.key, lk.permits),
            limit: self.shown_limit(lk.key),
            value: self.election_value(l),
            lock_delay_ms: Some(self.lock_delay_of(l)).filter(|ms| *ms > 0),
            priority: Some(self.priority_of(l).0).filter(|p| *p != Priority::FOREGROUND.0),
            acquisition: Some(lk.acquisition).filter(|a| *a != 0),
        }
    }

    /// The work of [`LockTable::list_page`].
    pub(super) fn locks_matching(&self, filter: &ListFilter, budget: usize) -> (ListPage, usize) {
        self.page(&PageSpec {
            owner: filter.owner.as_deref(),
            prefix: filter.prefix.as_deref(),
            scope: filter.scope,
            after: filter.after.as_ref(),
            size: filter.page_size(),
            budget,
        })
    }

    /// The work of [`LockTable::stats`].
    pub(super) fn current_stats(&self) -> PartitionStats {
        PartitionStats {
            epoch: self.epoch,
            counters: self.counters.clone(),
            held_locks: self.live_locks,
            held_keys: self.held_keys,
            semaphore_grants: self.semaphore_grants,
            held_permits: self.held_permits,
            election_leaders: self.election_leaders,
            waiting: self.waiters.len(),
            watches: self.watches.len(),
            sessions: self.live_sessions,
            wait_time: self.wait_hist.summary(self.now),
            hold_time: self.hold_hist.summary(self.now),
            hottest_keys: self.hot.top(),
            memory: self.memory_usage(),
            audit: self.audit_stats(),
        }
    }

    /// The work of [`LockTable::telemetry`].
    pub(super) fn telemetry_figures(&mut self, samples: SampleDrain) -> Telemetry {
        let (wait_time, hold_time) = match samples {
            SampleDrain::None => (Vec::new(), Vec::new()),
            SampleDrain::Take => (self.wait_hist.drain(true), self.hold_hist.drain(true)),
            SampleDrain::Stop => (self.wait_hist.drain(false), self.hold_hist.drain(false)),
        };
        Telemetry {
            counters: self.counters.clone(),
            held_locks: self.live_locks,
            waiting: self.waiters.len(),
            sessions: self.live_sessions,
            memory_bytes: self.memory_usage().total,
            wait_time,
            hold_time,
        }
    }

    /// The work of [`LockTable::oldest_waiters`]: each listed under its first target.
    pub(super) fn longest_waiting(&self, n: usize) -> Vec<WaiterInfo> {
        let mut ws: Vec<(&WaiterId, &Waiter)> = self.waiters.iter().collect();
        ws.sort_by_key(|(id, w)| (w.enqueued_at, **id));
        ws.into_iter()
            .take(n)
            .map(|(id, w)| {
                let t = w.targets.first().copied();
                let mode = t.map_or(Mode::Exclusive, |t| t.mode);
                self.waiter_info(*id, w, mode, t.map(|t| self.key_name(t.key)), self.now)
            })
            .collect()
    }
}
