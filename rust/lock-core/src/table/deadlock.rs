//! Deadlock detection on the owner wait-for graph.
//!
//! Waiters never wait for each other in a cycle (the queue order is one total order on every
//! key, see `queue.rs`); only an owner that holds a lock and also waits can close a cycle. So a
//! search runs only when an owner starts to wait or is granted ahead of waiters, it starts
//! from that owner, and it is skipped by a cheap pre-test when nobody can wait for the owner.
//! A cycle is broken by dropping its lowest-priority, youngest waiter (docs/LOCK_CORE.md,
//! "Deadlocks").

use std::cmp::Reverse;
use std::ops::Bound;

use hashbrown::HashMap;

use super::ids::{KeyIdx, OwnerIdx};
use super::records::{Dirty, QueueKey, WaitQueue};
use super::LockTable;
use crate::event::Event;
use crate::types::WaiterId;

/// Queue entries the pre-test ([`LockTable::may_be_waited_for`]) looks at before it gives up
/// and lets the full search decide: bounds the pre-test's cost on long queues.
const PRETEST_BUDGET: usize = 64;

impl LockTable {
    /// Breaks every wait-for cycle through `owner`, choosing victims by (lowest priority,
    /// youngest). When `current` is the victim it is removed without an event and the cycle is
    /// returned (the caller answers it directly); other victims get [`Event::DeadlockVictim`].
    pub(super) fn resolve_deadlocks(
        &mut self,
        owner: OwnerIdx,
        current: Option<WaiterId>,
    ) -> Option<Vec<String>> {
        loop {
            if !self.may_be_waited_for(owner) {
                return None;
            }
            let start: Vec<WaiterId> = match current {
                Some(c) if self.waiters.contains_key(&c) => vec![c],
                Some(_) => return None,
                None => self.owners.live(owner).waiters.clone(),
            };
            if start.is_empty() {
                return None;
            }
            let cycle = self.find_cycle(owner, &start)?;
            let victim = *cycle
                .iter()
                .min_by_key(|w| {
                    let w = self.waiter(**w);
                    (w.priority, Reverse(w.enqueued_at), Reverse(w.qkey.seq))
                })
                .expect("a cycle has at least one waiter");
            let mut names: Vec<String> = cycle
                .iter()
                .map(|w| self.owners.live(self.waiter(*w).owner).name[..].to_owned())
                .collect();
            let vpos = cycle.iter().position(|w| *w == victim).unwrap_or(0);
            names.rotate_left(vpos);
            self.audit_victim(victim, &names);
            let mut dirty = Dirty::new();
            if Some(victim) == current {
                // The caller answers its own request with the cycle: no event.
                let removed = self.end_waiter(victim, &mut dirty, |_, _| {});
                self.pump(&mut dirty);
                return removed.then_some(names);
            }
            let removed = self.end_waiter(victim, &mut dirty, |t, w| {
                t.counters.deadlocks += 1;
                let key = t.waiter_key(w);
                t.events.push(Event::DeadlockVictim {
                    waiter_id: victim,
                    request_id: w.request_id,
                    owner: t.owner_name(w.owner),
                    key,
                    cycle: names,
                });
            });
            if !removed {
                return None;
            }
            self.pump(&mut dirty);
        }
    }

    /// Cheap pre-test for a cycle through `owner`: somebody must wait for it, i.e. it holds a
    /// lock, or a later incompatible waiter of another owner queues behind one of its waiters —
    /// and that owner must itself be waited for (checked one level deep, within a budget;
    /// beyond it the full search runs).
    pub(super) fn may_be_waited_for(&self, owner: OwnerIdx) -> bool {
        let Some(o) = self.owners.get(owner) else {
            return false;
        };
        if o.waiters.is_empty() {
            return false;
        }
        if o.locks > 0 {
            return true;
        }
        let mut budget = PRETEST_BUDGET;
        for wid in &o.waiters {
            let w = self.waiter(*wid);
            for &(k, m) in &w.keys {
                let Some(q) = self.key_state(k).queue.as_ref() else { continue };
                if !queued_behind(q, w.qkey) {
                    // The common case of a waiter that just queued at the end: no range
                    // search down the tree.
                    continue;
                }
                for (_, e) in q.range((Bound::Excluded(w.qkey), Bound::Unbounded)) {
                    budget = budget.saturating_sub(1);
                    if budget == 0 {
                        return true;
                    }
                    let e = self.waiter(*e);
                    if e.owner == owner || e.mode_on(k).compatible_with(m) {
                        continue;
                    }
                    if self.has_incoming_edges(e.owner) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Whether any owner can wait for `owner`: it holds a lock, or one of its waiters has a
    /// waiter queued behind it.
    pub(super) fn has_incoming_edges(&self, owner: OwnerIdx) -> bool {
        let Some(o) = self.owners.get(owner) else {
            return false;
        };
        o.locks > 0
            || o.waiters.iter().any(|wid| {
                let w = self.waiter(*wid);
                w.keys.iter().any(|(k, _)| {
                    self.key_state(*k).queue.as_ref().is_some_and(|q| queued_behind(q, w.qkey))
                })
            })
    }

    /// The wait-for edges out of waiter `wid`, as (blocking owner, via waiter): holders of
    /// another owner in an incompatible mode, and earlier incompatible waiters of another owner.
    ///
    /// `scanned` remembers, per (key, mode), how far the queue was already scanned in this
    /// search: every owner before that point was already reached, so a search costs one pass
    /// over each queue per mode instead of one per waiter. Scans by the search's start owner are
    /// not remembered: they skip the start owner's own waiters, which a later scan by another
    /// owner must see (an edge back to the start closes the cycle).
    pub(super) fn blockers_of(
        &self,
        wid: WaiterId,
        remember: bool,
        scanned: &mut HashMap<(KeyIdx, u8), QueueKey>,
        out: &mut Vec<(OwnerIdx, WaiterId)>,
    ) {
        let w = self.waiter(wid);
        for &(k, m) in &w.keys {
            let ks = self.key_state(k);
            if ks.holders.iter().any(|h| h.owner == w.owner && h.mode.covers(m)) {
                continue;
            }
            for h in &ks.holders {
                if h.owner != w.owner && !h.mode.compatible_with(m) {
                    out.push((h.owner, wid));
                }
            }
            let Some(q) = &ks.queue else { continue };
            let from = scanned.get(&(k, m.bit())).copied();
            if from.is_some_and(|f| f >= w.qkey) {
                continue;
            }
            let range = match from {
                Some(f) => q.range((Bound::Included(f), Bound::Excluded(w.qkey))),
                None => q.range((Bound::Unbounded, Bound::Excluded(w.qkey))),
            };
            for (_, e) in range {
                let e = self.waiter(*e);
                if e.owner != w.owner && !e.mode_on(k).compatible_with(m) {
                    out.push((e.owner, wid));
                }
            }
            if remember {
                scanned.insert((k, m.bit()), w.qkey);
            }
        }
    }

    /// Depth-first search for a path of wait-for edges from `owner` (through `start` waiters)
    /// back to `owner`; answers the waiters along the cycle, one per edge.
    pub(super) fn find_cycle(&self, owner: OwnerIdx, start: &[WaiterId]) -> Option<Vec<WaiterId>> {
        // parent[o] = (previous owner, waiter of the previous owner that waits for o)
        let mut parent: HashMap<OwnerIdx, (OwnerIdx, WaiterId)> = HashMap::new();
        let mut stack: Vec<OwnerIdx> = Vec::new();
        let mut edges = Vec::new();
        let mut scanned = HashMap::new();
        for &wid in start {
            self.blockers_of(wid, false, &mut scanned, &mut edges);
        }
        let visit = |from: OwnerIdx,
                     edges: &mut Vec<(OwnerIdx, WaiterId)>,
                     parent: &mut HashMap<OwnerIdx, (OwnerIdx, WaiterId)>,
                     stack: &mut Vec<OwnerIdx>|
         -> Option<WaiterId> {
            for (to, via) in edges.drain(..) {
                if to == owner {
                    return Some(via);
                }
                if let hashbrown::hash_map::Entry::Vacant(e) = parent.entry(to) {
                    e.insert((from, via));
                    stack.push(to);
                }
            }
            None
        };
        let mut closing = visit(owner, &mut edges, &mut parent, &mut stack);
        while closing.is_none() {
            let x = stack.pop()?;
            if let Some(o) = self.owners.get(x) {
                for &wid in &o.waiters {
                    self.blockers_of(wid, x != owner, &mut scanned, &mut edges);
                }
            }
            closing = visit(x, &mut edges, &mut parent, &mut stack);
        }
        // Walk back from the owner whose waiter closes the cycle.
        let last = closing?;
        let mut cycle = vec![last];
        let mut cur = self.waiter(last).owner;
        let mut guard = 0usize;
        while cur != owner {
            let (prev, via) = *parent.get(&cur)?;
            cycle.push(via);
            cur = prev;
            guard += 1;
            if guard > parent.len() + 1 {
                return None;
            }
        }
        cycle.reverse();
        Some(cycle)
    }
}

/// Whether anybody is queued behind position `qkey` (the last entry is later than it).
fn queued_behind(q: &WaitQueue, qkey: QueueKey) -> bool {
    q.last_key_value().is_some_and(|(last, _)| *last > qkey)
}
