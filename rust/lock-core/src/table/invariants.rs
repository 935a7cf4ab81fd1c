//! The table's structural invariants, checked by [`LockTable::check_invariants`]: every index
//! agrees with its records, counts have not drifted, no two owners hold incompatible modes,
//! nothing outlives its deadline, and no waiter waits although it could be granted.
//!
//! Always compiled (it is `pub` so that the integration tests, the stress test and the fuzz
//! target can call it), never called by the table itself: its cost is a full scan.

use std::cmp::Reverse;

use super::ids::{KeyIdx, LockIdx, OwnerIdx, NO_SESSION};
use super::records::KeyState;
use super::LockTable;

impl LockTable {
    /// The work of [`LockTable::check_invariants`].
    pub(super) fn check_structure(&self) -> Result<(), String> {
        let mut held_keys = 0usize;
        for (k, ks) in self.keys.iter() {
            self.check_key(k, ks)?;
            if !ks.holders.is_empty() {
                held_keys += 1;
            }
        }
        let live_locks = self.check_locks()?;
        if held_keys != self.held_keys || live_locks != self.live_locks {
            return Err(format!(
                "counts drifted: held_keys {held_keys} vs {}, locks {live_locks} vs {}",
                self.held_keys, self.live_locks
            ));
        }
        self.check_listing()?;
        self.check_semaphores()?;
        self.check_waiters()?;
        self.check_watches()?;
        self.check_election_values()?;
        self.check_groups()?;
        self.check_delays()?;
        self.check_preemption()?;
        self.check_owners_and_sessions()?;
        self.check_memory_counts()?;
        if let Some(Reverse(d)) = self.deadlines.peek() {
            if d.at <= self.now {
                return Err("an overdue deadline was not processed".into());
            }
        }
        Ok(())
    }

    /// One key: indexed, freed or idle when empty, holders agree with their locks and are
    /// compatible, queue entries agree with their waiters.
    fn check_key(&self, k: KeyIdx, ks: &KeyState) -> Result<(), String> {
        if self.find_key(ks.scope, &ks.name) != Some(k) {
            return Err(format!("key {} not indexed", ks.name));
        }
        if ks.holders.is_empty() && ks.queue.is_none() && !ks.delayed && !ks.idle {
            return Err(format!("key {} is empty but neither freed nor idle", ks.name));
        }
        for (i, a) in ks.holders.iter().enumerate() {
            let l = self.locks.get(a.lock as usize).ok_or("holder refers to no lock")?;
            if !l.live || l.owner != a.owner {
                return Err(format!("holder of {} refers to a dead or foreign lock", ks.name));
            }
            let expected = if l.key == k { l.mode } else { l.mode.intention() };
            if a.mode != expected {
                return Err(format!("holder mode on {} disagrees with its lock", ks.name));
            }
            if l.session == NO_SESSION && l.lease_until <= self.now {
                return Err(format!("lock on {} outlived its lease", ks.name));
            }
            for b in &ks.holders[i + 1..] {
                if a.owner != b.owner && !a.mode.compatible_with(b.mode) {
                    return Err(format!(
                        "incompatible holders on {}: {} and {}",
                        ks.name,
                        a.mode.short(),
                        b.mode.short()
                    ));
                }
            }
        }
        if let Some(q) = &ks.queue {
            if q.is_empty() {
                return Err(format!("empty queue kept on {}", ks.name));
            }
            for (qk, wid) in q.iter() {
                let w = self.waiters.get(wid).ok_or("queue refers to no waiter")?;
                if w.qkey != *qk || !w.keys.iter().any(|(kk, _)| *kk == k) {
                    return Err(format!("queue entry on {} disagrees with its waiter", ks.name));
                }
            }
        }
        Ok(())
    }

    /// Every live lock has a holder entry on its key and, under a session, is in its live
    /// session. Answers the number of live locks.
    fn check_locks(&self) -> Result<usize, String> {
        let mut live_locks = 0usize;
        for (i, l) in self.locks.iter().enumerate() {
            if !l.live {
                continue;
            }
            live_locks += 1;
            let ks = self.keys.get(l.key).ok_or("lock on freed key")?;
            if !ks.holders.iter().any(|h| h.lock == i as LockIdx) {
                return Err(format!("lock on {} has no holder entry", ks.name));
            }
            if l.session != NO_SESSION {
                let s = self.sessions.get(l.session).ok_or("lock of a dead session")?;
                if !s.locks.contains(&(i as LockIdx)) || s.expires_at <= self.now {
                    return Err("session lock not in its live session".into());
                }
            }
        }
        Ok(live_locks)
    }

    /// The counters behind the memory estimate (`memory.rs`) agree with a full count.
    fn check_memory_counts(&self) -> Result<(), String> {
        let holders: usize = self.keys.values().map(|k| k.holders.len()).sum();
        let queued: usize = self.waiters.values().map(|w| w.keys.len()).sum();
        let queues = self.keys.values().filter(|k| k.queue.is_some()).count();
        if queues != self.queues {
            return Err(format!("memory counts drifted: queues {queues} vs {}", self.queues));
        }
        if holders != self.holder_entries || queued != self.queue_entries {
            return Err(format!(
                "memory counts drifted: holders {holders} vs {}, queue entries {queued} vs {}",
                self.holder_entries, self.queue_entries
            ));
        }
        Ok(())
    }

    /// Every waiter is before its deadline, in the queue of each of its keys, listed by its
    /// owner, and not grantable (the pump would have granted it).
    fn check_waiters(&self) -> Result<(), String> {
        for (id, w) in &self.waiters {
            if w.deadline <= self.now {
                return Err(format!("waiter {id} outlived its deadline"));
            }
            for &(k, _) in &w.keys {
                let ks = self.keys.get(k).ok_or("waiter on freed key")?;
                if ks.queue.as_ref().and_then(|q| q.get(&w.qkey)) != Some(id) {
                    return Err(format!("waiter {id} missing from queue of {}", ks.name));
                }
            }
            if self.waiter_grantable(*id) {
                return Err(format!("waiter {id} is grantable but still waits"));
            }
            let o = self.owners.get(w.owner).ok_or("waiter of dead owner")?;
            if !o.waiters.contains(id) {
                return Err(format!("waiter {id} not listed by its owner"));
            }
        }
        Ok(())
    }

    /// Owner reference counts equal locks + waiters + sessions + lock-delays running; no session
    /// outlived its TTL.
    fn check_owners_and_sessions(&self) -> Result<(), String> {
        for (i, o) in self.owners.iter() {
            let locks = self.locks.iter().filter(|l| l.live && l.owner == i as OwnerIdx).count();
            let sessions = self.sessions.values().filter(|s| s.owner == i as OwnerIdx).count();
            let refs = locks + o.waiters.len() + sessions + self.delays_of(i as OwnerIdx);
            if o.locks as usize != locks || o.refs as usize != refs {
                return Err(format!("owner {} refcount drifted", o.name));
            }
            if o.sessions as usize != sessions {
                return Err(format!("owner {} session count drifted", o.name));
            }
        }
        for s in self.sessions.values() {
            if s.expires_at <= self.now {
                return Err(format!("session {} outlived its ttl", s.id));
            }
        }
        Ok(())
    }
}
