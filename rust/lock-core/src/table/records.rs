//! The records the table keeps: keys, owners, locks, waiters and sessions, the queue position,
//! and the accessors every other file of the table uses to reach them by slab number.
//!
//! Every cross-reference is a `u32` slab number, never a pointer or a name: holder entries and
//! queue records stay small (docs/LOCK_CORE.md gives the memory budget), and a record can be
//! moved or freed without chasing references. `table/README.md` draws how they refer to each
//! other.

use std::collections::BTreeMap;
use std::sync::Arc;

use hashbrown::HashSet;
use smallvec::SmallVec;

use super::ids::{KeyIdx, LockIdx, OwnerIdx, SessIdx, NO_SESSION};
use super::interner::Interned;
use super::LockTable;
use crate::answer::TokenGrant;
use crate::mode::Mode;
use crate::types::{FencingToken, Millis, Priority, Scope, SessionId, WaiterId};

/// Keys to re-examine after a change; inline for the common few.
pub(super) type Dirty = SmallVec<[KeyIdx; 8]>;
/// The locks one request was granted, with "was already held" (reentrant); inline for one key.
pub(super) type Granted = SmallVec<[(LockIdx, bool); 1]>;
/// A key's queue: the map order is the queue order (see `queue.rs`).
pub(super) type WaitQueue = BTreeMap<QueueKey, WaiterId>;

/// Lease end of a lock held under a session: the session's expiry governs it.
pub(super) const SESSION_LEASE: Millis = Millis::MAX;

/// A grant as it was at the moment it was made (later steps of the same call, e.g. granting
/// the owner's own waiters, may upgrade the same lock again): the lock and the values
/// [`LockTable::acquire_token`] answers, which [`LockTable::acquire`] puts into its record.
#[derive(Debug, Clone, Copy)]
pub(super) struct Captured {
    pub(super) lock: LockIdx,
    pub(super) grant: TokenGrant,
}

/// One holder entry on a key: the lock's target mode, or an intention mode of a tree lock below.
#[derive(Debug, Clone, Copy)]
pub(super) struct HolderEntry {
    pub(super) lock: LockIdx,
    pub(super) owner: OwnerIdx,
    pub(super) mode: Mode,
}

/// Position in a key's queue; smaller is served first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct QueueKey {
    /// `arrival − priority·aging_ms`, or `9 − priority` with aging off, or `i128::MIN` for
    /// upgrades (see `queue.rs`).
    pub(super) rank: i128,
    /// Arrival order, partition-wide; breaks ties (FIFO).
    pub(super) seq: u64,
}

/// A key with a holder or a waiter (or idle, waiting to be swept).
#[derive(Debug)]
pub(super) struct KeyState {
    /// Shared with the listing index (`listing.rs`), which orders held keys by it.
    pub(super) name: Arc<str>,
    pub(super) scope: Scope,
    /// Listed as idle by the interner (so it is listed once).
    pub(super) idle: bool,
    pub(super) holders: SmallVec<[HolderEntry; 1]>,
    /// Boxed and absent while nobody waits: most keys never have a queue.
    pub(super) queue: Option<Box<WaitQueue>>,
    /// A semaphore's limit, set by the acquire that finds it unused (`semaphore.rs`); 0 for
    /// other scopes. Meaningless while the key is unused.
    pub(super) limit: u16,
    /// A lock-delay runs on the key (`delay.rs`): it stays interned until the delay ends.
    pub(super) delayed: bool,
}

impl Interned for KeyState {
    type Name<'a> = (Scope, &'a str);

    fn name(&self) -> (Scope, &str) {
        (self.scope, &self.name)
    }

    #[inline]
    fn is_named(&self, (scope, name): (Scope, &str)) -> bool {
        self.scope == scope && &*self.name == name
    }

    fn create((scope, name): (Scope, &str)) -> Self {
        KeyState {
            name: name.into(),
            scope,
            idle: false,
            holders: SmallVec::new(),
            queue: None,
            limit: 0,
            delayed: false,
        }
    }

    fn in_use(&self) -> bool {
        !self.holders.is_empty() || self.queue.is_some() || self.delayed
    }

    fn idle_flag(&mut self) -> &mut bool {
        &mut self.idle
    }

    fn name_bytes(&self) -> usize {
        // An `Arc<str>` (shared with the listing index): the name and the two reference counts.
        self.name.len() + 2 * std::mem::size_of::<usize>()
    }
}

/// One granted target.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lock {
    pub(super) owner: OwnerIdx,
    pub(super) key: KeyIdx,
    pub(super) session: SessIdx,
    pub(super) mode: Mode,
    pub(super) live: bool,
    /// A semaphore grant's permits (1..=limit), 0 for other scopes; a `u16` so that it fits
    /// in the padding after `live` and the record stays 48 bytes (docs/LOCK_CORE.md).
    pub(super) permits: u16,
    pub(super) token: FencingToken,
    pub(super) granted_at: Millis,
    /// [`SESSION_LEASE`] when held under a session.
    pub(super) lease_until: Millis,
    /// The digest of the acquisition that holds it ([`crate::types::acquisition_digest`]), 0
    /// when acquired without an id; inline because clients give one with every acquire.
    pub(super) acquisition: u64,
}

/// An owner with a lock, a waiter or a session (or idle, waiting to be swept).
#[derive(Debug)]
pub(super) struct OwnerState {
    pub(super) name: Box<str>,
    /// Listed as idle by the interner (so it is listed once).
    pub(super) idle: bool,
    /// Locks + waiters + sessions referring to this owner; unused at 0.
    pub(super) refs: u32,
    pub(super) locks: u32,
    /// Open sessions of this owner (`max_sessions_per_owner`).
    pub(super) sessions: u32,
    pub(super) waiters: Vec<WaiterId>,
}

impl Interned for OwnerState {
    type Name<'a> = &'a str;

    fn name(&self) -> &str {
        &self.name
    }

    #[inline]
    fn is_named(&self, name: &str) -> bool {
        &*self.name == name
    }

    fn create(name: &str) -> Self {
        OwnerState {
            name: name.into(),
            idle: false,
            refs: 0,
            locks: 0,
            sessions: 0,
            waiters: Vec::new(),
        }
    }

    fn in_use(&self) -> bool {
        self.refs > 0
    }

    fn idle_flag(&mut self) -> &mut bool {
        &mut self.idle
    }

    fn name_bytes(&self) -> usize {
        self.name.len()
    }
}

/// What a waiter will get on one target when granted.
#[derive(Debug, Clone, Copy)]
pub(super) struct Target {
    pub(super) key: KeyIdx,
    pub(super) mode: Mode,
}

/// A queued request: one waiter for all its keys (all-or-nothing).
#[derive(Debug)]
pub(super) struct Waiter {
    pub(super) request_id: u64,
    /// The acquisition digest its grant will carry (0: none).
    pub(super) acquisition: u64,
    pub(super) owner: OwnerIdx,
    /// In request order.
    pub(super) targets: SmallVec<[Target; 1]>,
    /// Every key queued on (targets and tree ancestors), with the mode needed there.
    pub(super) keys: SmallVec<[(KeyIdx, Mode); 1]>,
    pub(super) qkey: QueueKey,
    pub(super) priority: Priority,
    pub(super) enqueued_at: Millis,
    pub(super) deadline: Millis,
    pub(super) lease_ms: Millis,
    pub(super) session: SessIdx,
    /// A semaphore waiter's permits, 0 for other scopes.
    pub(super) permits: u16,
    /// Queued by a multi-lock (see `AcquireSpec::multi`).
    pub(super) multi: bool,
    /// The lock-delay its grant will have (`delay.rs`), 0 for none.
    pub(super) lock_delay_ms: Millis,
    /// The grace it gives the holders in its way (`preempt.rs`), 0: it does not preempt.
    pub(super) preempt_ms: Millis,
}

impl Waiter {
    /// The mode this waiter needs on key `k`.
    pub(super) fn mode_on(&self, k: KeyIdx) -> Mode {
        self.keys.iter().find(|(kk, _)| *kk == k).map_or(Mode::Exclusive, |(_, m)| *m)
    }
}

/// A session: one lease for many locks and waiters.
#[derive(Debug)]
pub(super) struct Session {
    pub(super) id: SessionId,
    pub(super) owner: OwnerIdx,
    pub(super) ttl_ms: Millis,
    pub(super) expires_at: Millis,
    pub(super) locks: HashSet<LockIdx>,
    pub(super) waiters: HashSet<WaiterId>,
}

impl LockTable {
    /// The lock `owner` holds with `k` as its target (not an intention entry), if any.
    pub(super) fn find_target_lock(&self, owner: OwnerIdx, k: KeyIdx) -> Option<LockIdx> {
        self.key_state(k)
            .holders
            .iter()
            .find(|h| h.owner == owner && self.lock(h.lock).key == k)
            .map(|h| h.lock)
    }

    #[inline]
    pub(super) fn key_state(&self, k: KeyIdx) -> &KeyState {
        self.keys.live(k)
    }

    pub(super) fn key_name(&self, k: KeyIdx) -> String {
        self.key_state(k).name[..].to_owned()
    }

    pub(super) fn owner_name(&self, o: OwnerIdx) -> String {
        self.owners.live(o).name[..].to_owned()
    }

    #[inline]
    pub(super) fn lock(&self, l: LockIdx) -> &Lock {
        self.locks.get(l as usize).filter(|l| l.live).expect("lock index refers to a live lock")
    }

    #[inline]
    pub(super) fn lock_mut(&mut self, l: LockIdx) -> &mut Lock {
        self.locks.get_mut(l as usize).filter(|l| l.live).expect("lock index refers to a live lock")
    }

    #[inline]
    pub(super) fn waiter(&self, w: WaiterId) -> &Waiter {
        self.waiters.get(&w).expect("queued waiter id refers to a live waiter")
    }

    /// The session id of a lock held under a session, as the answers show it.
    pub(super) fn session_name(&self, session: SessIdx) -> Option<String> {
        (session != NO_SESSION).then(|| self.sessions.live(session).id.to_string())
    }
}
