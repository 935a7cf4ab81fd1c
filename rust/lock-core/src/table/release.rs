//! Giving locks up and changing them: release (one, many, all of an owner), the admin's
//! force-release, renew and downgrade. Every path ends in [`LockTable::remove_lock`] or a
//! mode change, and then pumps the keys it touched so waiters that now fit are granted.

use super::deadline::DeadlineKind;
use super::ids::{LockIdx, NO_SESSION};
use super::records::Dirty;
use super::LockTable;
use crate::answer::WatchReason;
use crate::answer::{Grant, Released, Renewed};
use crate::error::LockError;
use crate::request::{DowngradeRequest, MultiReleaseRequest, RenewRequest};
use crate::types::{FencingToken, Scope};
use crate::validate::{self, validate_key, validate_owner};

/// What a release, renew or downgrade names of the grant it acts on, beside key and owner:
/// its token, its acquisition id, or both (docs/API.md, "Acquisitions").
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Named<'a> {
    pub(super) token: Option<FencingToken>,
    pub(super) acquisition: Option<&'a str>,
}

impl<'a> Named<'a> {
    /// What a release request names.
    pub(super) fn of(req: &'a crate::request::ReleaseRequest) -> Self {
        Named { token: req.fencing_token, acquisition: req.acquisition.as_deref() }
    }
}

impl LockTable {
    /// Releases one lock, answering the record.
    pub(super) fn release_one(
        &mut self,
        key: &str,
        scope: Scope,
        owner: &str,
        named: Named<'_>,
    ) -> Result<Released, LockError> {
        let fencing_token = self.release_lock(key, scope, owner, named)?;
        Ok(Released { key: key.to_owned(), owner: owner.to_owned(), fencing_token })
    }

    /// Releases one lock of a holder (checked by name, token and acquisition) and passes its
    /// keys on.
    pub(super) fn release_lock(
        &mut self,
        key: &str,
        scope: Scope,
        owner: &str,
        named: Named<'_>,
    ) -> Result<FencingToken, LockError> {
        validate_key(key)?;
        validate_owner(owner)?;
        let l = self.find_held(key, scope, owner, named)?;
        let lk = *self.lock(l);
        let mut dirty = Dirty::new();
        self.remove_lock(l, &mut dirty, WatchReason::Released);
        self.counters.releases += 1;
        self.pump(&mut dirty);
        Ok(lk.token)
    }

    /// The lock `owner` holds on the key, when it is the grant `named` names: the token, if
    /// given, is its current one; the acquisition, if given, is the one that holds it. A lock
    /// acquired without an id (or whose id an older copy did not keep) is named by an
    /// acquisition only together with its token, so a late request of an earlier acquisition
    /// never ends it.
    pub(super) fn find_held(
        &self,
        key: &str,
        scope: Scope,
        owner: &str,
        named: Named<'_>,
    ) -> Result<LockIdx, LockError> {
        let asked = validate::acquisition(named.acquisition)?;
        let not_held = || self.not_held(key, scope, owner);
        let o = self.find_owner(owner).ok_or_else(not_held)?;
        let k = self.find_key(scope, key).ok_or_else(not_held)?;
        let l = self.find_target_lock(o, k).ok_or_else(not_held)?;
        let lk = self.lock(l);
        let token_differs = named.token.is_some_and(|t| t != lk.token);
        let acquisition_differs = match (asked, lk.acquisition) {
            (0, _) => false,
            (_, 0) => named.token.is_none(),
            (asked, held) => asked != held,
        };
        if token_differs || acquisition_differs {
            return Err(not_held());
        }
        Ok(l)
    }

    /// The work of [`LockTable::release_many`].
    pub(super) fn release_listed(
        &mut self,
        req: &MultiReleaseRequest,
    ) -> Result<Vec<Released>, LockError> {
        validate_owner(&req.owner)?;
        validate::acquisition(req.acquisition.as_deref())?;
        for item in &req.locks {
            validate_key(&item.key)?;
        }
        if req.all {
            let Some(o) = self.find_owner(&req.owner) else { return Ok(Vec::new()) };
            let mine: Vec<LockIdx> = (0..self.locks.len() as LockIdx)
                .filter(|&l| self.locks[l as usize].live && self.locks[l as usize].owner == o)
                .collect();
            return Ok(self.take_locks(mine, WatchReason::Released));
        }
        let mut out = Vec::new();
        for item in &req.locks {
            let named =
                Named { token: item.fencing_token, acquisition: req.acquisition.as_deref() };
            if let Ok(r) = self.release_one(&item.key, item.scope, &req.owner, named) {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// The work of [`LockTable::force_release`]: every lock whose target is the key.
    pub(super) fn take_key(&mut self, key: &str, scope: Scope) -> Result<Vec<Released>, LockError> {
        validate_key(key)?;
        let Some(k) = self.find_key(scope, key) else { return Ok(Vec::new()) };
        let targets: Vec<LockIdx> = self
            .key_state(k)
            .holders
            .iter()
            .filter(|h| self.lock(h.lock).key == k)
            .map(|h| h.lock)
            .collect();
        Ok(self.take_locks(targets, WatchReason::ForceReleased))
    }

    /// Removes the given locks (answering each) for `reason`, then passes their keys on.
    fn take_locks(&mut self, locks: Vec<LockIdx>, reason: WatchReason) -> Vec<Released> {
        let mut out = Vec::with_capacity(locks.len());
        let mut dirty = Dirty::new();
        for l in locks {
            let lk = *self.lock(l);
            out.push(Released {
                key: self.key_name(lk.key),
                owner: self.owner_name(lk.owner),
                fencing_token: lk.token,
            });
            self.remove_lock(l, &mut dirty, reason);
            self.counters.releases += 1;
            if reason == WatchReason::ForceReleased {
                self.counters.force_releases += 1;
            }
        }
        self.pump(&mut dirty);
        out
    }

    /// The work of [`LockTable::renew`].
    pub(super) fn renew_held(&mut self, req: &RenewRequest) -> Result<Renewed, LockError> {
        let now = self.now;
        validate_key(&req.key)?;
        validate_owner(&req.owner)?;
        let lease = validate::lease(&self.config, req.lease_ms)?;
        let named = Named { token: req.fencing_token, acquisition: req.acquisition.as_deref() };
        let l = self.find_held(&req.key, req.scope, &req.owner, named)?;
        let lk = *self.lock(l);
        if lk.session == NO_SESSION {
            let until = now.saturating_add(lease);
            self.lock_mut(l).lease_until = until;
            self.note_lock(l);
            self.push_deadline(until, DeadlineKind::Lease { lock: l, token: lk.token.0 });
        } else {
            self.touch_session(lk.session);
        }
        self.counters.renewals += 1;
        Ok(Renewed {
            key: req.key.clone(),
            owner: req.owner.clone(),
            fencing_token: lk.token,
            lease_ms: self.lease_left(l),
        })
    }

    /// The work of [`LockTable::downgrade`].
    pub(super) fn downgrade_held(&mut self, req: &DowngradeRequest) -> Result<Grant, LockError> {
        validate_key(&req.key)?;
        validate_owner(&req.owner)?;
        if req.scope == Scope::Semaphore {
            return Err(LockError::invalid("scope", "a semaphore has no mode to downgrade"));
        }
        let named = Named { token: req.fencing_token, acquisition: req.acquisition.as_deref() };
        let l = self.find_held(&req.key, req.scope, &req.owner, named)?;
        let held = self.lock(l).mode;
        if !held.covers(req.mode) {
            return Err(LockError::invalid(
                "mode",
                format!("[{}] is not weaker than the held [{}]", req.mode.short(), held.short()),
            ));
        }
        self.set_lock_mode(l, req.mode);
        self.counters.downgrades += 1;
        let k = self.lock(l).key;
        let mut dirty: Dirty = smallvec::smallvec![k];
        dirty.extend(self.ancestor_keys_if_tree(k));
        self.pump(&mut dirty);
        Ok(self.grant_record(l, 0, false))
    }

    /// Removes a lock and its holder entries; its keys go to `dirty`. Every path that ends a
    /// lock comes here and says why (`reason`), which is what the lock's watches are told.
    pub(super) fn remove_lock(&mut self, l: LockIdx, dirty: &mut Dirty, reason: WatchReason) {
        self.audit_removed(l, reason);
        self.fire_watches(l, reason);
        self.election_values.unhold(l);
        self.note_removed(l);
        let lk = *self.lock(l);
        let mut keys = self.ancestor_keys_if_tree(lk.key);
        keys.push(lk.key);
        for k in keys {
            let ks = self.keys.live_mut(k);
            let before = ks.holders.len();
            ks.holders.retain(|h| h.lock != l);
            self.holder_entries -= before - ks.holders.len();
            if before > 0 && ks.holders.is_empty() {
                self.held_keys -= 1;
            }
            dirty.push(k);
        }
        self.list_lock_removed(lk.key);
        self.hold_hist.record(self.now.saturating_sub(lk.granted_at), self.now);
        if lk.session != NO_SESSION {
            if let Some(s) = self.sessions.get_mut(lk.session) {
                s.locks.remove(&l);
            }
        }
        if let Some(slot) = self.locks.get_mut(l as usize) {
            slot.live = false;
        }
        self.free_locks.push(l);
        self.live_locks -= 1;
        if lk.permits > 0 {
            self.semaphore_grants -= 1;
            self.held_permits -= u64::from(lk.permits);
        }
        match self.key_state(lk.key).scope {
            Scope::Election => self.election_leaders -= 1,
            Scope::Group => {
                let name = self.key_state(lk.key).name[..].to_owned();
                self.fire_group_watches(&name);
            }
            _ => {}
        }
        self.owners.live_mut(lk.owner).locks -= 1;
        self.forget_preemption(l);
        self.end_lock_with_delay(l, &lk, reason);
        self.owner_unref(lk.owner);
    }
}
