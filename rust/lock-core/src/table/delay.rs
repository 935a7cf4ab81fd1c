//! Lock-delay (docs/LOCK_CORE.md, "Lock-delay"; as Chubby's and Consul's): a lock granted with
//! a delay that ends without its holder's release — its lease or session ran out, or an
//! administrator force-released it — leaves its keys blocked for everyone else for the delay,
//! in the modes it held them (a tree lock's ancestors in their intention modes). The holder may
//! be alive but paused (a GC pause, a stopped VM) and about to write as if it still held the
//! lock; the delay gives such writes time to land or fail before another owner starts. The same
//! owner may take the keys back at once.
//!
//! Off unless asked for (a request's `lock_delay_ms` or the setting), and then kept in side maps
//! so that the lock record stays 48 bytes: the delay asked for, by lock, and the delays running,
//! by key. A running delay keeps its key interned (`KeyState::delayed`) and its owner
//! referenced until it ends at its deadline, when the key's waiters are pumped.

use hashbrown::HashMap;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::deadline::DeadlineKind;
use super::ids::{KeyIdx, LockIdx, OwnerIdx};
use super::records::{Dirty, Lock};
use super::LockTable;
use crate::answer::{DelayInfo, WatchReason};
use crate::config::MAX_LOCK_DELAY_MS;
use crate::error::LockError;
use crate::mode::Mode;
use crate::types::{Millis, Scope};

/// One running delay on a key: whose lock ended, the mode it held the key in, and until when.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyDelay {
    owner: OwnerIdx,
    mode: Mode,
    until: Millis,
}

/// The delays asked for and running (see the module docs).
#[derive(Debug, Default)]
pub(super) struct LockDelays {
    /// The lock-delay of each live lock granted with one.
    by_lock: HashMap<LockIdx, Millis>,
    /// The delays running, by key.
    by_key: HashMap<KeyIdx, SmallVec<[KeyDelay; 1]>>,
}

/// One running delay in a [`super::PartitionSnapshot`] or a [`super::PartitionDelta`]: the key,
/// whose lock ended, its mode, and the time left (relative, as leases are).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelaySnapshot {
    pub key: String,
    pub scope: Scope,
    pub owner: String,
    pub mode: Mode,
    pub delay_left_ms: Millis,
}

/// Whether a lock that ends for `reason` leaves its delay behind: not when its holder let it go.
fn delays_after(reason: WatchReason) -> bool {
    matches!(
        reason,
        WatchReason::Expired | WatchReason::ForceReleased | WatchReason::SessionExpired
    )
}

impl LockTable {
    /// The lock-delay of an acquire of `scopes`: the request's, else the setting's; at most
    /// [`MAX_LOCK_DELAY_MS`]. A semaphore has none (its permits are not a key's modes): asking
    /// for one is refused, the setting does not apply.
    pub(super) fn lock_delay_for(
        &self,
        asked: Option<Millis>,
        mut scopes: impl Iterator<Item = Scope>,
    ) -> Result<Millis, LockError> {
        // A semaphore's holders and a group's members share their key: no lock-delay.
        let semaphore = scopes.any(|s| matches!(s, Scope::Semaphore | Scope::Group));
        match asked {
            Some(ms) if ms > MAX_LOCK_DELAY_MS => Err(LockError::invalid(
                "lock_delay_ms",
                format!("must be at most [{MAX_LOCK_DELAY_MS}ms], got [{ms}ms]"),
            )),
            Some(ms) if ms > 0 && semaphore => {
                Err(LockError::invalid("lock_delay_ms", "a semaphore or group has no lock-delay"))
            }
            Some(ms) => Ok(ms),
            None if semaphore => Ok(0),
            None => Ok(self.config.default_lock_delay_ms),
        }
    }

    /// Keeps the lock-delay `ms` of lock `l` (granted or upgraded now); 0 keeps none.
    pub(super) fn keep_lock_delay(&mut self, l: LockIdx, ms: Millis) {
        if ms > 0 {
            self.delays.by_lock.insert(l, ms);
        } else if !self.delays.by_lock.is_empty() {
            self.delays.by_lock.remove(&l);
        }
    }

    /// The lock-delay lock `l` was granted with, 0 if none.
    pub(super) fn lock_delay_of(&self, l: LockIdx) -> Millis {
        self.delays.by_lock.get(&l).copied().unwrap_or(0)
    }

    /// Called by the removal of lock `l` (`lk`) for `reason`: forgets its delay, and starts it on
    /// its keys when the lock ended without its holder's release.
    pub(super) fn end_lock_with_delay(&mut self, l: LockIdx, lk: &Lock, reason: WatchReason) {
        if self.delays.by_lock.is_empty() {
            return;
        }
        let Some(ms) = self.delays.by_lock.remove(&l) else { return };
        if !delays_after(reason) {
            return;
        }
        let until = self.now.saturating_add(ms);
        for k in self.ancestor_keys_if_tree(lk.key) {
            self.start_delay(k, KeyDelay { owner: lk.owner, mode: lk.mode.intention(), until });
        }
        self.start_delay(lk.key, KeyDelay { owner: lk.owner, mode: lk.mode, until });
        self.counters.lock_delays += 1;
    }

    /// Puts a running delay on key `k`, pinning the key and the owner until it ends.
    fn start_delay(&mut self, k: KeyIdx, d: KeyDelay) {
        self.owners.live_mut(d.owner).refs += 1;
        self.keys.live_mut(k).delayed = true;
        self.delays.by_key.entry(k).or_default().push(d);
        self.push_deadline(d.until, DeadlineKind::Delay { key: k });
        if self.changes.is_some() {
            let snap = self.delay_snapshot(k, &d);
            self.note_delay(snap);
        }
    }

    /// Whether a running delay on key `k` keeps `mode` from `owner`: one of another owner whose
    /// mode is incompatible, as a holder's would be.
    #[inline]
    pub(super) fn delay_blocks(&self, k: KeyIdx, owner: OwnerIdx, mode: Mode) -> bool {
        if !self.key_state(k).delayed {
            return false;
        }
        self.delays.by_key.get(&k).is_some_and(|ds| {
            ds.iter()
                .any(|d| d.owner != owner && d.until > self.now && !d.mode.compatible_with(mode))
        })
    }

    /// A delay deadline of key `k` came: the delays that ran out end, and the key's waiters
    /// are pumped (through `dirty`).
    pub(super) fn expire_delays(&mut self, k: KeyIdx, dirty: &mut Dirty) {
        let now = self.now;
        self.end_delays_where(k, dirty, |d| d.until <= now);
    }

    fn end_delays_where(&mut self, k: KeyIdx, dirty: &mut Dirty, ends: impl Fn(&KeyDelay) -> bool) {
        let Some(ds) = self.delays.by_key.get_mut(&k) else { return };
        let ended: SmallVec<[OwnerIdx; 2]> =
            ds.iter().filter(|d| ends(d)).map(|d| d.owner).collect();
        if ended.is_empty() {
            return;
        }
        ds.retain(|d| !ends(d));
        if ds.is_empty() {
            self.delays.by_key.remove(&k);
            self.keys.live_mut(k).delayed = false;
        }
        for o in ended {
            self.owner_unref(o);
        }
        dirty.push(k);
    }

    /// The keys with a delay running: each has a live deadline (counted by `prune_deadlines`).
    pub(super) fn delayed_keys(&self) -> usize {
        self.delays.by_key.len()
    }

    /// Whether a delay deadline of key `k` at `at` still has a delay to end.
    pub(super) fn delay_deadline_live(&self, k: KeyIdx, at: Millis) -> bool {
        self.delays.by_key.get(&k).is_some_and(|ds| ds.iter().any(|d| d.until == at))
    }

    /// The longest time left of the delays running on key `k` (0: none), for a conflict.
    pub(super) fn delay_left(&self, k: KeyIdx) -> Millis {
        self.delays_on(k).iter().map(|d| d.delay_left_ms).max().unwrap_or(0)
    }

    /// The running delays on key `k`, as `key_info` shows them.
    pub(super) fn delays_on(&self, k: KeyIdx) -> Vec<DelayInfo> {
        let Some(ds) = self.delays.by_key.get(&k) else { return Vec::new() };
        ds.iter()
            .filter(|d| d.until > self.now)
            .map(|d| DelayInfo {
                owner: self.owner_name(d.owner),
                mode: d.mode,
                delay_left_ms: d.until - self.now,
            })
            .collect()
    }

    fn delay_snapshot(&self, k: KeyIdx, d: &KeyDelay) -> DelaySnapshot {
        let ks = self.key_state(k);
        DelaySnapshot {
            key: ks.name[..].to_owned(),
            scope: ks.scope,
            owner: self.owner_name(d.owner),
            mode: d.mode,
            delay_left_ms: d.until.saturating_sub(self.now),
        }
    }

    /// Every running delay with time left, for a snapshot.
    pub(super) fn export_delays(&self) -> Vec<DelaySnapshot> {
        let mut out: Vec<DelaySnapshot> = self
            .delays
            .by_key
            .iter()
            .flat_map(|(k, ds)| ds.iter().map(move |d| (*k, *d)))
            .filter(|(_, d)| d.until > self.now)
            .map(|(k, d)| self.delay_snapshot(k, &d))
            .collect();
        out.sort_by(|a, b| (a.scope, &a.key, &a.owner).cmp(&(b.scope, &b.key, &b.owner)));
        out
    }

    /// Imports one running delay: the key's name checked as a request's; never on a semaphore.
    pub(super) fn import_delay(&mut self, d: &DelaySnapshot) -> Result<(), LockError> {
        crate::validate::name(&d.key, d.scope, &self.config.limits)?;
        crate::validate::validate_owner(&d.owner)?;
        if matches!(d.scope, Scope::Semaphore | Scope::Group) || d.delay_left_ms > MAX_LOCK_DELAY_MS
        {
            return Err(LockError::invalid("snapshot", format!("bad lock-delay on [{}]", d.key)));
        }
        if d.delay_left_ms == 0 {
            return Ok(());
        }
        let owner = self.intern_owner(&d.owner);
        let k = self.intern_key(d.scope, &d.key);
        let until = self.now.saturating_add(d.delay_left_ms);
        self.start_delay(k, KeyDelay { owner, mode: d.mode, until });
        self.owner_unref(owner);
        Ok(())
    }

    /// The delays running of `owner`: each holds a reference to it.
    pub(super) fn delays_of(&self, owner: OwnerIdx) -> usize {
        self.delays.by_key.values().flatten().filter(|d| d.owner == owner).count()
    }

    /// The invariants of the delays: each running one on a live key flagged `delayed`, of a
    /// live owner; every flagged key has one; every delay asked for is a live lock's.
    pub(super) fn check_delays(&self) -> Result<(), String> {
        for (k, ds) in &self.delays.by_key {
            if ds.is_empty() || !self.keys.contains(*k) || !self.key_state(*k).delayed {
                return Err(format!("delays on key {k} not flagged"));
            }
            if ds.iter().any(|d| !self.owners.contains(d.owner)) {
                return Err(format!("a delay on key {k} names a freed owner"));
            }
        }
        for (k, ks) in self.keys.iter() {
            if ks.delayed && !self.delays.by_key.contains_key(&k) {
                return Err(format!("key {} flagged delayed without a delay", ks.name));
            }
        }
        for (l, ms) in &self.delays.by_lock {
            if *ms == 0 || !self.locks.get(*l as usize).is_some_and(|lk| lk.live) {
                return Err(format!("lock-delay kept for dead lock {l}"));
            }
        }
        Ok(())
    }
}
