//! Watches on locks: "tell me when the lock of this key with this fencing token ends"
//! (`GET /_locks/{key}/_watch`, docs/API.md; docs/LOCK_CORE.md, "Watches").
//!
//! A watch is registered like a waiter (an id from the waiter sequence, a wait deadline, the
//! caller's request id) but queues on nothing: it hangs on one live lock. It ends with exactly
//! one event: [`Event::WatchFired`] when the lock goes (`remove_lock` and an upgrade call
//! [`LockTable::fire_watches`] with the reason), or [`Event::WatchTimedOut`] when its wait runs
//! out first. A cancelled watch (its caller went away) ends without an event.
//!
//! Watches are neither replicated nor exported, like waiters: after an owner move the
//! coordinator sends the watch again, and the new owner either finds the lock (same token, it
//! was replicated) or answers at once that it is gone.

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::deadline::DeadlineKind;
use super::ids::LockIdx;
use super::LockTable;
use crate::answer::{Queued, WatchOutcome, WatchReason, Watched};
use crate::error::LockError;
use crate::event::Event;
use crate::request::WatchRequest;
use crate::types::{FencingToken, Millis, Scope, WaiterId};
use crate::validate::validate_key;

/// One registered watch.
#[derive(Debug, Clone, Copy)]
pub(super) struct Watch {
    /// The watched lock; live, with `token`, for as long as the watch exists.
    pub(super) lock: LockIdx,
    pub(super) token: FencingToken,
    pub(super) request_id: u64,
    pub(super) since: Millis,
    pub(super) deadline: Millis,
    /// Also ends when the holder is asked to yield (`preempt.rs`).
    pub(super) revoke: bool,
}

/// The watches of the table: by id, and the ids on each watched lock (so removing a lock finds
/// its watches without a scan).
#[derive(Debug, Default)]
pub(super) struct Watches {
    pub(super) by_id: HashMap<WaiterId, Watch>,
    pub(super) by_lock: HashMap<LockIdx, SmallVec<[WaiterId; 2]>>,
    /// Watches by name (`lock` is [`NO_LOCK`]): for the next holder of an election that has
    /// none, and for the next change of a group (`group.rs`); by scope and name, and the scope
    /// and name of each.
    pub(super) by_name: HashMap<(Scope, Box<str>), SmallVec<[WaiterId; 2]>>,
    pub(super) name_of: HashMap<WaiterId, (Scope, Box<str>)>,
}

/// The `lock` of a watch for the next holder: none yet.
const NO_LOCK: LockIdx = LockIdx::MAX;

impl Watches {
    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }
}

impl LockTable {
    /// The work of [`LockTable::watch`].
    pub(super) fn register_watch(&mut self, req: &WatchRequest) -> Result<WatchOutcome, LockError> {
        validate_key(&req.key)?;
        let answer = |reason| {
            WatchOutcome::Answered(Watched {
                key: req.key.clone(),
                scope: req.scope,
                fencing_token: req.fencing_token,
                reason,
                grace_ms: None,
            })
        };
        if req.scope == Scope::Group {
            if let Some(changed) = self.group_changed(req)? {
                return Ok(WatchOutcome::Answered(changed));
            }
        }
        let next_holder = req.fencing_token.0 == 0 && req.scope == Scope::Election;
        let l = match self.lock_with_token(req) {
            _ if req.scope == Scope::Group => NO_LOCK,
            Some(l) => l,
            None if next_holder => NO_LOCK,
            None => return Ok(answer(Some(WatchReason::NotHeld))),
        };
        if let Some(token) = self.holder_token(req).filter(|_| next_holder) {
            return Ok(WatchOutcome::Answered(Watched {
                key: req.key.clone(),
                scope: req.scope,
                fencing_token: token,
                reason: Some(WatchReason::Held),
                grace_ms: None,
            }));
        }
        if let Some(grace_ms) = self.revoke_left(l).filter(|_| req.revoke && l != NO_LOCK) {
            return Ok(WatchOutcome::Answered(Watched {
                grace_ms: Some(grace_ms),
                ..self.revoke_answer(req)
            }));
        }
        let wait = req.wait_ms.unwrap_or(0).min(self.config.max_wait_ms);
        if wait == 0 {
            return Ok(answer(None));
        }
        let max = self.config.limits.max_watches;
        if self.watches.len() >= max {
            return Err(self.limit_exceeded("max_watches", max as u64));
        }
        if self.at_memory_cap() {
            let max = self.config.limits.max_memory_bytes;
            return Err(self.limit_exceeded("max_memory", max));
        }
        let id = self.next_waiter;
        self.next_waiter += 1;
        let deadline = self.now.saturating_add(wait);
        let watch = Watch {
            lock: l,
            token: req.fencing_token,
            request_id: req.request_id,
            since: self.now,
            deadline,
            revoke: req.revoke,
        };
        self.watches.by_id.insert(id, watch);
        if l == NO_LOCK {
            let name = (req.scope, Box::<str>::from(req.key.as_str()));
            self.watches.by_name.entry(name.clone()).or_default().push(id);
            self.watches.name_of.insert(id, name);
        } else {
            self.watches.by_lock.entry(l).or_default().push(id);
        }
        self.push_deadline(deadline, DeadlineKind::Watch { watch: id });
        Ok(WatchOutcome::Watching(Queued { waiter_id: id, request_id: req.request_id, deadline }))
    }

    /// The token of the election's holder, if it has one.
    fn holder_token(&self, req: &WatchRequest) -> Option<FencingToken> {
        let k = self.find_key(req.scope, &req.key)?;
        self.key_state(k).holders.first().map(|h| self.lock(h.lock).token)
    }

    /// A group watch's answer at once, when the group is not at the version it names (the
    /// version answered is the group's, 0 when it does not exist).
    fn group_changed(&self, req: &WatchRequest) -> Result<Option<Watched>, LockError> {
        crate::validate::name(&req.key, Scope::Group, &self.config.limits)?;
        let version = self.group_version(&req.key);
        Ok((version != req.fencing_token.0).then(|| Watched {
            key: req.key.clone(),
            scope: Scope::Group,
            fencing_token: FencingToken(version),
            reason: Some(if version == 0 { WatchReason::NotHeld } else { WatchReason::Held }),
            grace_ms: None,
        }))
    }

    /// Lock `l` was just granted: if it is an election's, the watches for its next holder fire
    /// with its token; if it is a group's, the group's watches fire.
    pub(super) fn fire_holder_watches(&mut self, l: LockIdx) {
        let lk = *self.lock(l);
        let ks = self.key_state(lk.key);
        let (scope, key) = (ks.scope, ks.name[..].to_owned());
        match scope {
            Scope::Election => self.fire_named(Scope::Election, &key, lk.token),
            Scope::Group => self.fire_group_watches(&key),
            _ => {}
        }
    }

    /// Group `name` changed (a member joined, left or changed its capabilities, or the group
    /// was deleted): its watches fire with its version.
    pub(super) fn fire_group_watches(&mut self, name: &str) {
        if self.watches.by_name.is_empty() {
            return;
        }
        let version = FencingToken(self.group_version(name));
        self.fire_named(Scope::Group, name, version);
    }

    /// The watches by name of `(scope, key)` fire with `token`.
    fn fire_named(&mut self, scope: Scope, key: &str, token: FencingToken) {
        let Some(ids) = self.watches.by_name.remove(&(scope, Box::<str>::from(key))) else {
            return;
        };
        let reason = if token.0 == 0 { WatchReason::NotHeld } else { WatchReason::Held };
        for id in ids {
            self.watches.name_of.remove(&id);
            if let Some(w) = self.watches.by_id.remove(&id) {
                self.events.push(Event::WatchFired {
                    watch_id: id,
                    request_id: w.request_id,
                    key: key.to_owned(),
                    scope,
                    fencing_token: token,
                    reason,
                    waited_ms: self.now.saturating_sub(w.since),
                    grace_ms: None,
                });
            }
        }
    }

    /// The live lock targeting the request's key with its token.
    fn lock_with_token(&self, req: &WatchRequest) -> Option<LockIdx> {
        let k = self.find_key(req.scope, &req.key)?;
        self.key_state(k)
            .holders
            .iter()
            .map(|h| h.lock)
            .find(|&l| self.lock(l).key == k && self.lock(l).token == req.fencing_token)
    }

    /// The lock `l` ends under its current token: each of its watches fires with `reason`.
    pub(super) fn fire_watches(&mut self, l: LockIdx, reason: WatchReason) {
        let Some(ids) = self.watches.by_lock.remove(&l) else { return };
        for id in ids {
            self.end_watch(id, reason, None);
        }
    }

    /// Removes watch `id` (if registered) and emits its [`Event::WatchFired`].
    fn end_watch(&mut self, id: WaiterId, reason: WatchReason, grace_ms: Option<Millis>) {
        if let Some(w) = self.watches.by_id.remove(&id) {
            let (key, scope, fencing_token) = self.watched(&w);
            self.events.push(Event::WatchFired {
                watch_id: id,
                request_id: w.request_id,
                key,
                scope,
                fencing_token,
                reason,
                waited_ms: self.now.saturating_sub(w.since),
                grace_ms,
            });
        }
    }

    /// The holder of lock `l` was asked to yield within `grace_ms`: its watches that asked for
    /// notices end with [`WatchReason::RevokeRequested`]; the others keep waiting for its end.
    pub(super) fn fire_revoke_watches(&mut self, l: LockIdx, grace_ms: Millis) {
        let Some(ids) = self.watches.by_lock.get_mut(&l) else { return };
        let by_id = &self.watches.by_id;
        let notified: SmallVec<[WaiterId; 2]> =
            ids.iter().copied().filter(|id| by_id.get(id).is_some_and(|w| w.revoke)).collect();
        ids.retain(|id| !notified.contains(id));
        if ids.is_empty() {
            self.watches.by_lock.remove(&l);
        }
        for id in notified {
            self.end_watch(id, WatchReason::RevokeRequested, Some(grace_ms));
        }
    }

    /// A watch's answer that its lock's holder is asked to yield (grace filled in by the caller).
    fn revoke_answer(&self, req: &WatchRequest) -> Watched {
        Watched {
            key: req.key.clone(),
            scope: req.scope,
            fencing_token: req.fencing_token,
            reason: Some(WatchReason::RevokeRequested),
            grace_ms: None,
        }
    }

    /// A watch's wait ran out with its lock still held: [`Event::WatchTimedOut`].
    pub(super) fn expire_watch(&mut self, id: WaiterId) {
        let name = self.watches.name_of.get(&id).cloned();
        let Some(w) = self.forget_watch(id) else { return };
        let (key, scope, fencing_token) = match name {
            Some((scope, n)) => (n.into_string(), scope, w.token),
            None => self.watched(&w),
        };
        self.events.push(Event::WatchTimedOut {
            watch_id: id,
            request_id: w.request_id,
            key,
            scope,
            fencing_token,
            waited_ms: self.now.saturating_sub(w.since),
        });
    }

    /// Removes a watch from both maps, answering it if it was registered.
    pub(super) fn forget_watch(&mut self, id: WaiterId) -> Option<Watch> {
        let w = self.watches.by_id.remove(&id)?;
        if let Some(name) = self.watches.name_of.remove(&id) {
            if let Some(ids) = self.watches.by_name.get_mut(&name) {
                ids.retain(|i| *i != id);
                if ids.is_empty() {
                    self.watches.by_name.remove(&name);
                }
            }
            return Some(w);
        }
        if let Some(ids) = self.watches.by_lock.get_mut(&w.lock) {
            ids.retain(|i| *i != id);
            if ids.is_empty() {
                self.watches.by_lock.remove(&w.lock);
            }
        }
        Some(w)
    }

    /// The watched lock's key name, scope and token (the lock is live while its watch is).
    fn watched(&self, w: &Watch) -> (String, Scope, FencingToken) {
        let ks = self.key_state(self.lock(w.lock).key);
        (ks.name[..].to_owned(), ks.scope, w.token)
    }

    /// Whether a watch's deadline entry is its current one.
    pub(super) fn watch_deadline_live(&self, id: WaiterId, at: Millis) -> bool {
        self.watches.by_id.get(&id).is_some_and(|w| w.deadline == at)
    }

    /// Every watch hangs on a live lock with its token, and both maps agree.
    pub(super) fn check_watches(&self) -> Result<(), String> {
        let mut indexed = 0;
        for (l, ids) in &self.watches.by_lock {
            for id in ids {
                let w = self.watches.by_id.get(id).ok_or(format!("watch {id} indexed, absent"))?;
                let lk = self.locks.get(*l as usize).ok_or(format!("watch {id}: no lock {l}"))?;
                if w.lock != *l || !lk.live || lk.token != w.token {
                    return Err(format!("watch {id} hangs on a lock that no longer has its token"));
                }
                indexed += 1;
            }
        }
        for (name, ids) in &self.watches.by_name {
            for id in ids {
                if self.watches.name_of.get(id) != Some(name)
                    || !self.watches.by_id.contains_key(id)
                {
                    return Err(format!("watch {id} by name [{}] not indexed", name.1));
                }
                indexed += 1;
            }
        }
        if indexed != self.watches.len() {
            return Err(format!("{} watches, {indexed} indexed", self.watches.len()));
        }
        Ok(())
    }
}
