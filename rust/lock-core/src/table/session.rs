//! Sessions: one lease and keep-alive for many locks and waiters of one owner. A lock held
//! under a session has no lease of its own ([`super::records::SESSION_LEASE`]); the session's
//! expiry releases all of them at once and drops its waiters (docs/LOCK_CORE.md, "Leases,
//! sessions, epochs").
//!
//! A session's id is its credential: 128 random bits ([`SessionId`]) that the caller draws and
//! hands in, since the table itself never touches OS randomness (it replays deterministically
//! like everything else in the core). Every call that names a session also names its owner, and
//! a session of another owner is answered exactly as an unknown one
//! ([`LockError::SessionNotFound`]): an id tells a stranger nothing, not even that it exists.
//! Ids are looked up by all their bits in a map, never compared by a prefix.

use hashbrown::HashSet;

use super::deadline::DeadlineKind;
use super::ids::{LockIdx, OwnerIdx, SessIdx, NO_SESSION};
use super::records::{Dirty, Session};
use super::LockTable;
use crate::answer::SessionInfo;
use crate::error::LockError;
use crate::event::CancelReason;
use crate::types::{Millis, SessionId, WaiterId};
use crate::validate::{self, validate_owner};

impl LockTable {
    /// The work of [`LockTable::create_session`]; answers the new session's id.
    pub(super) fn open_session(
        &mut self,
        owner: &str,
        ttl_ms: Option<Millis>,
        id: SessionId,
    ) -> Result<SessionId, LockError> {
        let now = self.now;
        validate_owner(owner)?;
        let ttl = validate::ttl(&self.config, ttl_ms)?;
        self.check_session_room(owner)?;
        if self.session_index.contains_key(&id) {
            // Only a broken random source repeats 128 bits; refuse rather than merge two sessions.
            return Err(LockError::invalid("session", "session id already in use"));
        }
        let o = self.intern_owner(owner);
        self.insert_session(id, o, ttl, now.saturating_add(ttl));
        self.owner_unref(o);
        self.counters.sessions_created += 1;
        Ok(id)
    }

    /// The session limits: partition-wide, per owner and the memory cap.
    fn check_session_room(&mut self, owner: &str) -> Result<(), LockError> {
        let limits = self.config.limits;
        if self.live_sessions >= limits.max_sessions {
            return Err(self.limit_exceeded("max_sessions", limits.max_sessions as u64));
        }
        let open = self.find_owner(owner).map_or(0, |o| self.owners.live(o).sessions as usize);
        if open >= limits.max_sessions_per_owner {
            let max = limits.max_sessions_per_owner as u64;
            return Err(self.limit_exceeded("max_sessions_per_owner", max));
        }
        // No slab number is held here, so idle entries may be freed first.
        self.at_memory_cap();
        self.check_memory_room()
    }

    /// Stores a session (taking a reference on its owner) with its expiry deadline.
    pub(super) fn insert_session(
        &mut self,
        id: SessionId,
        owner: OwnerIdx,
        ttl_ms: Millis,
        expires_at: Millis,
    ) {
        let o = self.owners.live_mut(owner);
        o.refs += 1;
        o.sessions += 1;
        let s = Session {
            id,
            owner,
            ttl_ms,
            expires_at,
            locks: HashSet::new(),
            waiters: HashSet::new(),
        };
        let idx = self.sessions.insert(s);
        self.session_index.insert(id, idx);
        self.live_sessions += 1;
        self.note_session(id);
        self.push_deadline(expires_at, DeadlineKind::Session { idx });
    }

    /// The work of [`LockTable::keepalive`]; answers the session's id.
    pub(super) fn extend_session(
        &mut self,
        session: &str,
        owner: &str,
    ) -> Result<SessionId, LockError> {
        let idx = self.owned_session(session, owner)?;
        Ok(self.touch_session(idx))
    }

    /// Moves a session's expiry to `now + ttl` (keep-alive, or renewing one of its locks),
    /// bounded by the `max_lease_ms` in force now: a renewal, like a new grant, never outlasts
    /// it (an imported session may carry a longer ttl, granted under a higher maximum);
    /// answers its id.
    pub(super) fn touch_session(&mut self, idx: SessIdx) -> SessionId {
        let now = self.now;
        let max_lease = self.config.max_lease_ms;
        let s = self.sessions.live_mut(idx);
        s.expires_at = now.saturating_add(s.ttl_ms.min(max_lease));
        let (at, id) = (s.expires_at, s.id);
        self.note_session(id);
        self.push_deadline(at, DeadlineKind::Session { idx });
        id
    }

    /// The answer record of a live session.
    pub(super) fn session_info(&self, id: SessionId) -> Result<SessionInfo, LockError> {
        let idx = self
            .session_index
            .get(&id)
            .copied()
            .ok_or_else(|| LockError::SessionNotFound { session: id.to_string() })?;
        let s = self.sessions.live(idx);
        Ok(SessionInfo {
            session: id.to_string(),
            owner: self.owner_name(s.owner),
            ttl_ms: s.ttl_ms,
            expires_in_ms: s.expires_at.saturating_sub(self.now),
            locks: s.locks.len(),
        })
    }

    /// Ends a session (ended by its owner or expired): drops its waiters with `reason`, then
    /// releases its locks. Answers the released keys and the number of dropped waiters.
    pub(super) fn close_session(
        &mut self,
        idx: SessIdx,
        reason: CancelReason,
    ) -> (Vec<String>, usize) {
        let Some(s) = self.sessions.remove(idx) else {
            return (Vec::new(), 0);
        };
        self.session_index.remove(&s.id);
        self.live_sessions -= 1;
        self.note_session_end(s.id);
        let mut waiters: Vec<WaiterId> = s.waiters.iter().copied().collect();
        waiters.sort_unstable();
        let dropped = waiters.len();
        let mut dirty = Dirty::new();
        for w in waiters {
            // The session slot is gone; `remove_waiter` tolerates that. Nobody is granted until
            // every waiter of the session is gone: a grant to one of them would need the
            // session it no longer has.
            self.drop_waiter_unpumped(w, reason, Some(s.id), &mut dirty);
        }
        let mut locks: Vec<LockIdx> = s.locks.iter().copied().collect();
        locks.sort_unstable();
        let mut released = Vec::new();
        for l in locks {
            if self.locks.get(l as usize).is_some_and(|lk| lk.live && lk.session == idx) {
                released.push(self.key_name(self.lock(l).key));
                self.remove_lock(l, &mut dirty, reason.into());
                self.counters.releases += 1;
            }
        }
        self.pump(&mut dirty);
        if let Some(o) = self.owners.get_mut(s.owner) {
            o.sessions = o.sessions.saturating_sub(1);
        }
        self.owner_unref(s.owner);
        (released, dropped)
    }

    /// The session an acquire names, which must belong to the acquiring owner.
    pub(super) fn session_for(
        &self,
        session: Option<&str>,
        owner: &str,
    ) -> Result<SessIdx, LockError> {
        match session {
            None => Ok(NO_SESSION),
            Some(s) => self.owned_session(s, owner),
        }
    }

    /// A live session of `owner` by its id as the caller spells it (32 lowercase hex digits,
    /// all of them). Unknown, malformed and another owner's ids all answer
    /// [`LockError::SessionNotFound`], as a release of another owner's lock answers "not held".
    pub(super) fn owned_session(&self, s: &str, owner: &str) -> Result<SessIdx, LockError> {
        SessionId::parse(s)
            .and_then(|id| self.session_index.get(&id).copied())
            .filter(|&idx| &*self.owners.live(self.sessions.live(idx).owner).name == owner)
            .ok_or_else(|| LockError::SessionNotFound { session: s.to_owned() })
    }
}
