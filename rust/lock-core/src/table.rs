//! The lock table of one partition: holders, wait queues, leases, sessions and the fencing
//! counter.
//!
//! Single-threaded by design (`&mut self`); [`crate::Partition`] puts it behind a mutex.
//!
//! # Layout
//!
//! | structure | holds | why |
//! |---|---|---|
//! | `keys` slab + `key_index` | one [`KeyState`] per key with a holder or waiter | the name lives once; the index stores only slab numbers |
//! | `locks` slab | one `Lock` per granted target (a tree lock is one lock with intention entries on its ancestors) | tokens, leases, sessions |
//! | `owners` slab + `owner_index` | interned owner ids with a reference count | cheap compares, deadlock search by owner |
//! | per-key queue | `BTreeMap<QueueKey, WaiterId>` | queue order is the map order; O(log n) insert and hand-off |
//! | `deadlines` | a min-heap of lease, wait and session deadlines, stale entries skipped lazily | [`LockTable::next_deadline`] in O(1) |
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
//! that wait can deadlock, and those cycles are found on the owner wait-for graph.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::ops::Bound;

use hashbrown::hash_table::{Entry, HashTable};
use hashbrown::{DefaultHashBuilder, HashMap, HashSet};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::answer::{
    AcquireOutcome, Grant, HolderInfo, KeyInfo, LockInfo, MultiOutcome, Queued, Released, Renewed,
    SessionEnded, SessionInfo, TokenGrant, TokenOutcome, WaiterInfo,
};
use crate::config::Config;
use crate::error::LockError;
use crate::event::{CancelReason, Event};
use crate::mode::Mode;
use crate::request::{
    AcquireRequest, DowngradeRequest, MultiAcquireRequest, MultiReleaseRequest, ReleaseRequest,
    RenewRequest,
};
use crate::stats::{Counters, Histogram, HotKeys, PartitionStats};
use crate::types::{FencingToken, Millis, Priority, PriorityValue, Scope, WaiterId};
use crate::validate::{tree_ancestors, validate_key, validate_owner, validate_tree_path};

type KeyIdx = u32;
type OwnerIdx = u32;
type LockIdx = u32;
type SessIdx = u32;
/// Keys to re-examine after a change; inline for the common few.
type Dirty = SmallVec<[KeyIdx; 8]>;
/// The locks one request was granted, with "was already held" (reentrant); inline for one key.
type Granted = SmallVec<[(LockIdx, bool); 1]>;

/// A grant as it was at the moment it was made (later steps of the same call, e.g. granting
/// the owner's own waiters, may upgrade the same lock again).
#[derive(Debug, Clone, Copy)]
struct Captured {
    lock: LockIdx,
    reentrant: bool,
    token: FencingToken,
    mode: Mode,
    lease_ms: Millis,
}

/// "No session" in a `u32` session slot.
const NO_SESSION: SessIdx = u32::MAX;
/// Lease end of a lock held under a session: the session's expiry governs it.
const SESSION_LEASE: Millis = Millis::MAX;
/// Latest time the table works with (about 146 million years of milliseconds); later clock
/// values count as this, so `now + lease` never reaches the internal "held under a session"
/// lease marker (`u64::MAX`).
pub const MAX_TIME: Millis = 1 << 62;
/// Every mode compatible: the neutral element of the queue-scan mask.
const ALL_MASK: u8 = 0b11111;

/// One holder entry on a key: the lock's target mode, or an intention mode of a tree lock below.
#[derive(Debug, Clone, Copy)]
struct HolderEntry {
    lock: LockIdx,
    owner: OwnerIdx,
    mode: Mode,
}

/// Position in a key's queue; smaller is served first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct QueueKey {
    /// `arrival − priority·aging_ms`, or `9 − priority` with aging off, or `i128::MIN` for
    /// upgrades (see the module docs).
    rank: i128,
    /// Arrival order, partition-wide; breaks ties (FIFO).
    seq: u64,
}

type WaitQueue = BTreeMap<QueueKey, WaiterId>;

#[derive(Debug)]
struct KeyState {
    name: Box<str>,
    scope: Scope,
    /// Listed in `idle_keys` (so it is listed once).
    idle: bool,
    holders: SmallVec<[HolderEntry; 1]>,
    queue: Option<Box<WaitQueue>>,
}

/// One granted target.
#[derive(Debug, Clone, Copy)]
struct Lock {
    owner: OwnerIdx,
    key: KeyIdx,
    session: SessIdx,
    mode: Mode,
    live: bool,
    token: FencingToken,
    granted_at: Millis,
    /// [`SESSION_LEASE`] when held under a session.
    lease_until: Millis,
}

#[derive(Debug)]
struct OwnerState {
    name: Box<str>,
    /// Listed in `idle_owners` (so it is listed once).
    idle: bool,
    /// Locks + waiters + sessions referring to this owner; freed at 0.
    refs: u32,
    locks: u32,
    waiters: Vec<WaiterId>,
}

/// What a waiter will get on one target when granted.
#[derive(Debug, Clone, Copy)]
struct Target {
    key: KeyIdx,
    mode: Mode,
}

#[derive(Debug)]
struct Waiter {
    request_id: u64,
    owner: OwnerIdx,
    /// In request order.
    targets: SmallVec<[Target; 1]>,
    /// Every key queued on (targets and tree ancestors), with the mode needed there.
    keys: SmallVec<[(KeyIdx, Mode); 1]>,
    qkey: QueueKey,
    priority: Priority,
    enqueued_at: Millis,
    deadline: Millis,
    lease_ms: Millis,
    session: SessIdx,
}

impl Waiter {
    fn mode_on(&self, k: KeyIdx) -> Mode {
        self.keys.iter().find(|(kk, _)| *kk == k).map_or(Mode::Exclusive, |(_, m)| *m)
    }
}

#[derive(Debug)]
struct Session {
    id: u64,
    owner: OwnerIdx,
    ttl_ms: Millis,
    expires_at: Millis,
    locks: HashSet<LockIdx>,
    waiters: HashSet<WaiterId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum DeadlineKind {
    Lease { lock: LockIdx, token: u64 },
    Wait { waiter: WaiterId },
    Session { id: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Deadline {
    at: Millis,
    kind: DeadlineKind,
}

/// One target of an acquire, before interning.
struct Spec<'a> {
    name: &'a str,
    scope: Scope,
    mode: Mode,
}

/// Validated options of an acquire.
struct Opts {
    wait_ms: Millis,
    lease_ms: Millis,
    session: SessIdx,
    request_id: u64,
}

/// What an acquire did, before it is shaped for the single- or multi-key API.
enum Acquired {
    Granted(SmallVec<[Captured; 1]>),
    Queued(Queued),
}

/// A filter for [`LockTable::list_locks`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ListFilter {
    pub owner: Option<String>,
    pub prefix: Option<String>,
    /// Most entries answered; 0 = 100.
    pub size: usize,
}

/// A partition's state for handing it to another node: held locks with their leases and
/// tokens, sessions, the epoch and the fencing counter. Times are relative ("ms left") because
/// the two nodes' clocks differ. Waiters are not included: they stay with the old owner, which
/// answers them as unavailable, and their clients retry (docs/ARCHITECTURE.md, "Partitions,
/// owners, epochs").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionSnapshot {
    pub epoch: u64,
    pub counter: u64,
    pub locks: Vec<LockSnapshot>,
    pub sessions: Vec<SessionSnapshot>,
}

/// One held lock in a [`PartitionSnapshot`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockSnapshot {
    pub key: String,
    pub scope: Scope,
    pub owner: String,
    pub mode: Mode,
    pub fencing_token: FencingToken,
    pub held_ms: Millis,
    /// Lease left; ignored for a session lock.
    pub lease_ms: Millis,
    pub session: Option<String>,
}

/// One session in a [`PartitionSnapshot`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSnapshot {
    pub session: String,
    pub owner: String,
    pub ttl_ms: Millis,
    pub expires_in_ms: Millis,
}

/// The locks of one partition. See the module docs for layout and queue order.
#[derive(Debug)]
pub struct LockTable {
    config: Config,
    epoch: u64,
    /// Grants issued in this epoch; the low bits of the next token.
    counter: u64,
    /// The latest time seen; every call's `now` is clamped to at least this (monotonic).
    now: Millis,
    grace_until: Millis,
    hasher: DefaultHashBuilder,
    key_index: HashTable<KeyIdx>,
    keys: Vec<Option<KeyState>>,
    free_keys: Vec<KeyIdx>,
    idle_keys: Vec<KeyIdx>,
    held_keys: usize,
    owner_index: HashTable<OwnerIdx>,
    owners: Vec<Option<OwnerState>>,
    free_owners: Vec<OwnerIdx>,
    idle_owners: Vec<OwnerIdx>,
    locks: Vec<Lock>,
    free_locks: Vec<LockIdx>,
    live_locks: usize,
    waiters: HashMap<WaiterId, Waiter>,
    next_waiter: WaiterId,
    next_seq: u64,
    sessions: Vec<Option<Session>>,
    free_sessions: Vec<SessIdx>,
    session_index: HashMap<u64, SessIdx>,
    next_session: u64,
    live_sessions: usize,
    deadlines: BinaryHeap<Reverse<Deadline>>,
    events: Vec<Event>,
    counters: Counters,
    wait_hist: Histogram,
    hold_hist: Histogram,
    hot: HotKeys,
}

fn hash_key(h: &DefaultHashBuilder, scope: Scope, name: &str) -> u64 {
    use std::hash::BuildHasher;
    h.hash_one((scope as u8, name))
}

fn hash_owner(h: &DefaultHashBuilder, name: &str) -> u64 {
    use std::hash::BuildHasher;
    h.hash_one(name)
}

fn slot<T>(v: &[Option<T>], i: u32) -> &T {
    v.get(i as usize).and_then(Option::as_ref).expect("slab index refers to a live entry")
}

fn slot_mut<T>(v: &mut [Option<T>], i: u32) -> &mut T {
    v.get_mut(i as usize).and_then(Option::as_mut).expect("slab index refers to a live entry")
}

impl LockTable {
    /// An empty table with the default [`Config`] whose tokens carry `epoch` in their high bits.
    ///
    /// # Errors
    /// `epoch` must fit [`FencingToken::MAX_EPOCH`].
    pub fn new(epoch: u64) -> Result<Self, LockError> {
        Self::with_config(epoch, Config::default())
    }

    /// An empty table with the given settings.
    pub fn with_config(epoch: u64, config: Config) -> Result<Self, LockError> {
        check_epoch(epoch)?;
        config.validate()?;
        Ok(LockTable {
            config,
            epoch,
            counter: 0,
            now: 0,
            grace_until: 0,
            hasher: DefaultHashBuilder::default(),
            key_index: HashTable::new(),
            keys: Vec::new(),
            free_keys: Vec::new(),
            idle_keys: Vec::new(),
            held_keys: 0,
            owner_index: HashTable::new(),
            owners: Vec::new(),
            free_owners: Vec::new(),
            idle_owners: Vec::new(),
            locks: Vec::new(),
            free_locks: Vec::new(),
            live_locks: 0,
            waiters: HashMap::new(),
            next_waiter: 1,
            next_seq: 0,
            sessions: Vec::new(),
            free_sessions: Vec::new(),
            session_index: HashMap::new(),
            next_session: 1,
            live_sessions: 0,
            deadlines: BinaryHeap::new(),
            events: Vec::new(),
            counters: Counters::default(),
            wait_hist: Histogram::default(),
            hold_hist: Histogram::default(),
            hot: HotKeys::new(config.hot_keys),
        })
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Replaces the settings (dynamic cluster settings changed). Applies to requests from now
    /// on; locks already granted keep their leases and waiters their deadlines and queue ranks
    /// (a new `aging_ms` ranks only requests queued after the change; the order stays one
    /// total order on every key, so waiters still cannot wait for each other in a cycle).
    ///
    /// # Errors
    /// [`LockError::InvalidArgument`] naming the bad setting; the old settings stay.
    pub fn set_config(&mut self, config: Config) -> Result<(), LockError> {
        config.validate()?;
        self.config = config;
        Ok(())
    }

    /// The epoch tokens are issued in.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Moves to a new epoch (a new primary term). Tokens issued afterwards outrank every earlier
    /// one; held locks keep their tokens.
    ///
    /// # Errors
    /// The epoch may not go down, and must fit [`FencingToken::MAX_EPOCH`].
    pub fn set_epoch(&mut self, epoch: u64) -> Result<(), LockError> {
        check_epoch(epoch)?;
        if epoch < self.epoch {
            return Err(LockError::invalid(
                "epoch",
                format!("must not go down: {} -> {epoch}", self.epoch),
            ));
        }
        if epoch > self.epoch {
            self.epoch = epoch;
            self.counter = 0;
        }
        Ok(())
    }

    /// The latest time this table has seen.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// Number of keys with at least one holder (tree ancestors with intention holders count).
    pub fn held_keys(&self) -> usize {
        self.held_keys
    }

    /// Number of held locks (a tree lock counts once).
    pub fn held_locks(&self) -> usize {
        self.live_locks
    }

    /// Number of queued requests.
    pub fn waiting(&self) -> usize {
        self.waiters.len()
    }

    /// Refuses new grants until `until` (recovery grace after an owner died, docs/ARCHITECTURE.md
    /// "Partitions, owners, epochs").
    pub fn begin_grace(&mut self, until: Millis) {
        self.grace_until = self.grace_until.max(until);
    }

    // ---------------------------------------------------------------------------------------
    // Acquire
    // ---------------------------------------------------------------------------------------

    /// Try-lock: grants at once or fails with [`LockError::Conflict`], whatever `req.wait_ms`
    /// says.
    ///
    /// An owner that already holds the key gets its existing grant back (same token), so a
    /// client may retry an acquire whose answer it lost.
    pub fn try_acquire(&mut self, req: &AcquireRequest, now: Millis) -> Result<Grant, LockError> {
        let req = AcquireRequest { wait_ms: Some(0), ..req.clone() };
        match self.acquire(&req, now)? {
            AcquireOutcome::Granted(g) => Ok(g),
            AcquireOutcome::Queued(_) => {
                Err(LockError::invalid("wait_ms", "a try-lock never queues (internal)"))
            }
        }
    }

    /// The one-key acquire shared by [`LockTable::acquire`] and [`LockTable::acquire_token`],
    /// which differ only in how they answer a grant.
    fn acquire_one(&mut self, req: &AcquireRequest, now: Millis) -> Result<Acquired, LockError> {
        let spec = [Spec { name: &req.key, scope: req.scope, mode: req.mode }];
        self.acquire_common(
            &req.owner,
            &spec,
            req.priority.as_ref(),
            req.wait_ms,
            req.lease_ms,
            req.session.as_deref(),
            req.request_id,
            now,
        )
    }

    /// Acquires one key (or tree node): granted at once, queued (the outcome then arrives as an
    /// [`Event`] with the returned waiter id), or refused.
    ///
    /// # Errors
    /// [`LockError::Conflict`] for a busy try-lock, [`LockError::Deadlock`] when queueing would
    /// close a cycle and this request is the victim, [`LockError::InvalidArgument`],
    /// [`LockError::LimitExceeded`], [`LockError::SessionNotFound`],
    /// [`LockError::PartitionUnavailable`].
    pub fn acquire(
        &mut self,
        req: &AcquireRequest,
        now: Millis,
    ) -> Result<AcquireOutcome, LockError> {
        let out = self.acquire_one(req, now);
        let out = match out {
            Ok(Acquired::Granted(gs)) => match gs.first() {
                Some(c) => Ok(AcquireOutcome::Granted(self.captured_record(c))),
                None => Err(LockError::invalid("key", "no grant (internal)")),
            },
            Ok(Acquired::Queued(q)) => Ok(AcquireOutcome::Queued(q)),
            Err(e) => Err(e),
        };
        self.prune_deadlines();
        out
    }

    /// [`LockTable::acquire`] without the answer record: the caller already knows the key and
    /// owner it asked for, so a grant answers only what is new (token, mode, lease, reentrant)
    /// and nothing is allocated on the uncontended path. For bridges' fast paths.
    pub fn acquire_token(
        &mut self,
        req: &AcquireRequest,
        now: Millis,
    ) -> Result<TokenOutcome, LockError> {
        let out = self.acquire_one(req, now);
        let out = match out {
            Ok(Acquired::Granted(gs)) => match gs.first() {
                Some(c) => Ok(TokenOutcome::Granted(TokenGrant {
                    fencing_token: c.token,
                    mode: c.mode,
                    lease_ms: c.lease_ms,
                    reentrant: c.reentrant,
                })),
                None => Err(LockError::invalid("key", "no grant (internal)")),
            },
            Ok(Acquired::Queued(q)) => Ok(TokenOutcome::Queued(q)),
            Err(e) => Err(e),
        };
        self.prune_deadlines();
        out
    }

    /// Acquires many keys (any modes and scopes) all together or not at all. Grants come back
    /// in request order; a key named twice is granted once in the stronger mode.
    pub fn acquire_many(
        &mut self,
        req: &MultiAcquireRequest,
        now: Millis,
    ) -> Result<MultiOutcome, LockError> {
        let specs: Vec<Spec<'_>> =
            req.locks.iter().map(|l| Spec { name: &l.key, scope: l.scope, mode: l.mode }).collect();
        let out = self.acquire_common(
            &req.owner,
            &specs,
            req.priority.as_ref(),
            req.wait_ms,
            req.lease_ms,
            req.session.as_deref(),
            req.request_id,
            now,
        );
        let out = match out {
            Ok(Acquired::Granted(gs)) => {
                Ok(MultiOutcome::Granted(gs.iter().map(|c| self.captured_record(c)).collect()))
            }
            Ok(Acquired::Queued(q)) => Ok(MultiOutcome::Queued(q)),
            Err(e) => Err(e),
        };
        self.prune_deadlines();
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn acquire_common(
        &mut self,
        owner_name: &str,
        raw_specs: &[Spec<'_>],
        priority: Option<&PriorityValue>,
        wait_ms: Option<Millis>,
        lease_ms: Option<Millis>,
        session: Option<&str>,
        request_id: u64,
        now: Millis,
    ) -> Result<Acquired, LockError> {
        self.advance_to(now);
        let now = self.now;
        self.counters.acquires += 1;

        // ---- validate everything before touching anything ----
        validate_owner(owner_name)?;
        if raw_specs.is_empty() {
            return Err(LockError::invalid("locks", "must name at least one key"));
        }
        if raw_specs.len() > self.config.limits.max_keys_per_request {
            self.counters.limit_rejections += 1;
            return Err(LockError::LimitExceeded {
                limit: "max_keys_per_request",
                max: self.config.limits.max_keys_per_request as u64,
            });
        }
        // Merge duplicates (stronger mode wins), keep first-seen order.
        let mut specs: SmallVec<[Spec<'_>; 1]> = SmallVec::new();
        for s in raw_specs {
            self.validate_name(s.name, s.scope)?;
            if let Some(e) = specs.iter_mut().find(|e| e.scope == s.scope && e.name == s.name) {
                e.mode = e.mode.join(s.mode);
            } else {
                specs.push(Spec { name: s.name, scope: s.scope, mode: s.mode });
            }
        }
        let priority = Priority::parse(priority)?;
        let opts = Opts {
            wait_ms: wait_ms.unwrap_or(0).min(self.config.max_wait_ms),
            lease_ms: self.lease_of(lease_ms)?,
            session: self.session_for(session, owner_name)?,
            request_id,
        };
        if now < self.grace_until {
            return Err(LockError::PartitionUnavailable { retry_after_ms: self.grace_until - now });
        }

        // ---- what does the owner already hold? ----
        let owner = self.find_owner(owner_name);
        // Per spec: Some(lock) when the owner holds this target already.
        let mut existing: SmallVec<[Option<LockIdx>; 1]> = SmallVec::new();
        // Per spec: its key's slab number when interned (looked up once).
        let mut spec_keys: SmallVec<[Option<KeyIdx>; 1]> = SmallVec::new();
        let mut all_reentrant = true;
        let mut all_upgrades = true;
        for s in &specs {
            let k = self.find_key(s.scope, s.name);
            spec_keys.push(k);
            let lock = owner.zip(k).and_then(|(o, k)| self.find_target_lock(o, k));
            match lock {
                Some(l) if self.lock(l).mode.covers(s.mode) => {}
                Some(_) => all_reentrant = false,
                None => {
                    all_reentrant = false;
                    all_upgrades = false;
                }
            }
            existing.push(lock);
        }
        if all_reentrant {
            self.counters.reentrant_grants += 1;
            let grants = existing.iter().flatten().map(|&l| self.capture(l, true)).collect();
            return Ok(Acquired::Granted(grants));
        }

        // ---- the holdings needed: targets (joined with what is held) and tree ancestors ----
        let mut needed: SmallVec<[Needed<'_>; 4]> = SmallVec::new();
        for ((s, ex), k) in specs.iter().zip(&existing).zip(&spec_keys) {
            // Targets already held stay in: a waiter queues on them too, so that it still
            // gets them if the owner lets them go while it waits. Keys the owner holds in a
            // covering mode never block it (see `blocked_at`).
            let mode = match ex {
                Some(l) => self.lock(*l).mode.join(s.mode),
                None => s.mode,
            };
            push_needed(&mut needed, s.scope, s.name, mode, *k);
            if s.scope == Scope::Tree {
                for anc in tree_ancestors(s.name) {
                    let ak = self.find_key(Scope::Tree, anc);
                    push_needed(&mut needed, Scope::Tree, anc, mode.intention(), ak);
                }
            }
        }

        let seq = self.next_seq;
        self.next_seq += 1;
        let qkey = if all_upgrades {
            QueueKey { rank: i128::MIN, seq }
        } else {
            QueueKey { rank: self.rank(priority, now), seq }
        };

        // ---- grantable now? ----
        let blocked = needed.iter().find_map(|&(_, _, mode, k)| {
            let k = k?;
            self.blocked_at(k, owner.unwrap_or(u32::MAX), mode, qkey).then_some(k)
        });

        let Some(blocked_key) = blocked else {
            let new_locks = existing.iter().filter(|e| e.is_none()).count();
            if self.live_locks + new_locks > self.config.limits.max_locks {
                self.counters.limit_rejections += 1;
                return Err(LockError::LimitExceeded {
                    limit: "max_locks",
                    max: self.config.limits.max_locks as u64,
                });
            }
            let owner = match owner {
                Some(o) => {
                    slot_mut(&mut self.owners, o).refs += 1;
                    o
                }
                None => self.intern_owner(owner_name),
            };
            for &(scope, name, _, k) in &needed {
                if k.is_none() {
                    self.intern_key(scope, name);
                }
            }
            let mut targets: SmallVec<[Target; 1]> = SmallVec::new();
            for (s, k) in specs.iter().zip(&spec_keys) {
                let key = match k {
                    Some(k) => *k,
                    None => self.intern_key(s.scope, s.name),
                };
                targets.push(Target { key, mode: s.mode });
            }
            let token = self.next_token()?;
            let granted =
                self.apply_grant(owner, &targets, token, now, opts.lease_ms, opts.session);
            let mut grants: SmallVec<[Captured; 1]> = SmallVec::new();
            for &(l, reentrant) in &granted {
                grants.push(self.capture(l, reentrant));
            }
            self.counters.immediate_grants += 1;
            // An immediate grant ranked ahead of existing waiters (priority) can make them wait
            // for this owner: look for a cycle through it.
            if !slot(&self.owners, owner).waiters.is_empty() {
                self.resolve_deadlocks(owner, None);
                // A key the owner now holds no longer blocks its own waiters there.
                let mut dirty: Dirty =
                    targets.iter().flat_map(|t| self.key_and_ancestors(t.key)).collect();
                self.pump(&mut dirty);
            }
            self.release_owner_ref_if_unused(owner);
            return Ok(Acquired::Granted(grants));
        };

        // ---- conflict or queue ----
        let blocked_name = self.key_state(blocked_key).name[..].to_owned();
        self.hot.hit(&blocked_name);
        if opts.wait_ms == 0 {
            self.counters.conflicts += 1;
            let holders = self.holder_infos(blocked_key, now);
            return Err(LockError::Conflict { key: blocked_name, holders });
        }
        if self.waiters.len() >= self.config.limits.max_waiters {
            self.counters.limit_rejections += 1;
            return Err(LockError::LimitExceeded {
                limit: "max_waiters",
                max: self.config.limits.max_waiters as u64,
            });
        }
        for &(_, _, _, k) in &needed {
            if let Some(k) = k {
                let len = self.key_state(k).queue.as_ref().map_or(0, |q| q.len());
                if len >= self.config.limits.max_waiters_per_key {
                    self.counters.limit_rejections += 1;
                    return Err(LockError::LimitExceeded {
                        limit: "max_waiters_per_key",
                        max: self.config.limits.max_waiters_per_key as u64,
                    });
                }
            }
        }
        let owner = self.intern_owner(owner_name);
        let mut keys: SmallVec<[(KeyIdx, Mode); 1]> = SmallVec::new();
        for &(scope, name, mode, k) in &needed {
            keys.push((k.unwrap_or_else(|| self.intern_key(scope, name)), mode));
        }
        let mut targets: SmallVec<[Target; 1]> = SmallVec::new();
        for s in &specs {
            targets.push(Target { key: self.intern_key(s.scope, s.name), mode: s.mode });
        }
        let id = self.next_waiter;
        self.next_waiter += 1;
        let deadline = now.saturating_add(opts.wait_ms);
        let waiter = Waiter {
            request_id: opts.request_id,
            owner,
            targets,
            keys,
            qkey,
            priority,
            enqueued_at: now,
            deadline,
            lease_ms: opts.lease_ms,
            session: opts.session,
        };
        self.insert_waiter(id, waiter);
        self.owner_unref(owner);
        self.counters.queued += 1;
        if let Some(victim_cycle) = self.resolve_deadlocks(owner, Some(id)) {
            // This request was the victim: it is already removed; answer it directly.
            self.counters.deadlocks += 1;
            let key = self.key_state(blocked_key).name[..].to_owned();
            let mut dirty = Dirty::new();
            dirty.push(blocked_key);
            self.pump(&mut dirty);
            return Err(LockError::Deadlock {
                key,
                owner: owner_name.to_owned(),
                cycle: victim_cycle,
            });
        }
        // Queueing may have made a later-ranked waiter wait for nothing new, but it can also be
        // immediately grantable in a corner (its blockers vanished during `advance`): pump.
        let mut dirty = Dirty::new();
        if let Some(w) = self.waiters.get(&id) {
            dirty.extend(w.keys.iter().map(|(k, _)| *k));
        }
        self.pump(&mut dirty);
        Ok(Acquired::Queued(Queued { waiter_id: id, request_id: opts.request_id, deadline }))
    }

    fn validate_name(&self, name: &str, scope: Scope) -> Result<(), LockError> {
        validate_key(name)?;
        if name.len() > self.config.limits.max_key_bytes {
            return Err(LockError::invalid(
                "key",
                format!(
                    "must be at most {} bytes, got {}",
                    self.config.limits.max_key_bytes,
                    name.len()
                ),
            ));
        }
        if scope == Scope::Tree {
            validate_tree_path(name, self.config.limits.max_tree_depth)?;
        }
        Ok(())
    }

    fn lease_of(&self, lease_ms: Option<Millis>) -> Result<Millis, LockError> {
        match lease_ms {
            None => Ok(self.config.default_lease_ms),
            Some(0) => Err(LockError::invalid("lease_ms", "must be positive")),
            Some(l) => Ok(l.min(self.config.max_lease_ms)),
        }
    }

    fn session_for(&self, session: Option<&str>, owner: &str) -> Result<SessIdx, LockError> {
        let Some(s) = session else { return Ok(NO_SESSION) };
        let idx = self.find_session(s)?;
        if &*slot(&self.owners, slot(&self.sessions, idx).owner).name != owner {
            return Err(LockError::invalid(
                "session",
                format!("session [{s}] belongs to another owner"),
            ));
        }
        Ok(idx)
    }

    fn find_session(&self, s: &str) -> Result<SessIdx, LockError> {
        s.parse::<u64>()
            .ok()
            .and_then(|id| self.session_index.get(&id).copied())
            .ok_or_else(|| LockError::SessionNotFound { session: s.to_owned() })
    }

    fn rank(&self, p: Priority, now: Millis) -> i128 {
        if self.config.aging_ms == 0 {
            i128::from(Priority::MAX.0 - p.0.min(Priority::MAX.0))
        } else {
            i128::from(now) - i128::from(p.0) * i128::from(self.config.aging_ms)
        }
    }

    /// Whether `mode` on key `k` for `owner` is blocked by a holder of another owner or by a
    /// waiter ranked before `qkey`.
    ///
    /// A key on which the owner already holds a covering mode never blocks: every other holder
    /// is compatible with that holding, and every waiter it would pass waits for it already.
    fn blocked_at(&self, k: KeyIdx, owner: OwnerIdx, mode: Mode, qkey: QueueKey) -> bool {
        let ks = self.key_state(k);
        if ks.holders.iter().any(|h| h.owner == owner && h.mode.covers(mode)) {
            return false;
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

    /// Grants `targets` to `owner` with one fresh `token`: new locks, in-place upgrades, or
    /// the existing lock when it already covers the target.
    #[allow(clippy::too_many_arguments)]
    fn apply_grant(
        &mut self,
        owner: OwnerIdx,
        targets: &[Target],
        token: FencingToken,
        now: Millis,
        lease_ms: Millis,
        session: SessIdx,
    ) -> Granted {
        let lease_until =
            if session == NO_SESSION { now.saturating_add(lease_ms) } else { SESSION_LEASE };
        let mut grants = Granted::new();
        for t in targets {
            match self.find_target_lock(owner, t.key) {
                Some(l) if self.lock(l).mode.covers(t.mode) => {
                    grants.push((l, true));
                }
                Some(l) => {
                    let mode = self.lock(l).mode.join(t.mode);
                    self.set_lock_mode(l, mode);
                    // An upgrade keeps the lock's lease regime: a lock held under a session
                    // stays under it; a lock with its own lease gets a fresh one (never the
                    // session marker — see `regression_upgrade_with_session_made_lease_endless`).
                    let lk = self.lock_mut(l);
                    lk.token = token;
                    if lk.session == NO_SESSION {
                        let until = now.saturating_add(lease_ms);
                        lk.lease_until = until;
                        self.push_deadline(until, DeadlineKind::Lease { lock: l, token: token.0 });
                    }
                    self.counters.upgrades += 1;
                    grants.push((l, false));
                }
                None => {
                    let l = self.add_lock(owner, t.key, t.mode, token, now, lease_until, session);
                    grants.push((l, false));
                }
            }
        }
        grants
    }

    #[allow(clippy::too_many_arguments)]
    fn add_lock(
        &mut self,
        owner: OwnerIdx,
        key: KeyIdx,
        mode: Mode,
        token: FencingToken,
        now: Millis,
        lease_until: Millis,
        session: SessIdx,
    ) -> LockIdx {
        let lock =
            Lock { owner, key, session, mode, live: true, token, granted_at: now, lease_until };
        let l = match self.free_locks.pop() {
            Some(l) => {
                if let Some(slot) = self.locks.get_mut(l as usize) {
                    *slot = lock;
                }
                l
            }
            None => {
                self.locks.push(lock);
                (self.locks.len() - 1) as LockIdx
            }
        };
        self.live_locks += 1;
        let o = slot_mut(&mut self.owners, owner);
        o.refs += 1;
        o.locks += 1;
        self.add_holder(key, HolderEntry { lock: l, owner, mode });
        if self.key_state(key).scope == Scope::Tree {
            for anc in self.ancestor_keys(key) {
                self.add_holder(anc, HolderEntry { lock: l, owner, mode: mode.intention() });
            }
        }
        if session == NO_SESSION {
            self.push_deadline(lease_until, DeadlineKind::Lease { lock: l, token: token.0 });
        } else {
            slot_mut(&mut self.sessions, session).locks.insert(l);
        }
        l
    }

    fn add_holder(&mut self, k: KeyIdx, h: HolderEntry) {
        let ks = slot_mut(&mut self.keys, k);
        if ks.holders.is_empty() {
            self.held_keys += 1;
        }
        ks.holders.push(h);
    }

    /// Changes a lock's mode, with the intention modes on its tree ancestors.
    fn set_lock_mode(&mut self, l: LockIdx, mode: Mode) {
        let k = self.lock(l).key;
        self.lock_mut(l).mode = mode;
        for h in slot_mut(&mut self.keys, k).holders.iter_mut().filter(|h| h.lock == l) {
            h.mode = mode;
        }
        if self.key_state(k).scope == Scope::Tree {
            for anc in self.ancestor_keys(k) {
                for h in slot_mut(&mut self.keys, anc).holders.iter_mut().filter(|h| h.lock == l) {
                    h.mode = mode.intention();
                }
            }
        }
    }

    /// The interned ancestors of a tree key (they exist while a lock or waiter below uses them).
    fn ancestor_keys(&self, k: KeyIdx) -> SmallVec<[KeyIdx; 8]> {
        let name = &self.key_state(k).name;
        let mut out = SmallVec::new();
        for a in tree_ancestors(name) {
            if let Some(k) = self.find_key(Scope::Tree, a) {
                out.push(k);
            }
        }
        out
    }

    fn capture(&self, l: LockIdx, reentrant: bool) -> Captured {
        let lk = self.lock(l);
        Captured {
            lock: l,
            reentrant,
            token: lk.token,
            mode: lk.mode,
            lease_ms: self.lease_left(l),
        }
    }

    /// The answer record of an immediate grant, with the values captured when it was made.
    fn captured_record(&self, c: &Captured) -> Grant {
        let mut g = self.grant_record(c.lock, 0, c.reentrant);
        g.fencing_token = c.token;
        g.mode = c.mode;
        g.lease_ms = c.lease_ms;
        g
    }

    fn grant_record(&self, l: LockIdx, waited_ms: Millis, reentrant: bool) -> Grant {
        let lk = self.lock(l);
        let ks = self.key_state(lk.key);
        Grant {
            key: ks.name[..].to_owned(),
            owner: slot(&self.owners, lk.owner).name[..].to_owned(),
            mode: lk.mode,
            fencing_token: lk.token,
            waited_ms,
            reentrant,
            scope: ks.scope,
            lease_ms: self.lease_left(l),
            session: (lk.session != NO_SESSION)
                .then(|| slot(&self.sessions, lk.session).id.to_string()),
        }
    }

    fn lease_left(&self, l: LockIdx) -> Millis {
        let lk = self.lock(l);
        let until = if lk.session == NO_SESSION {
            lk.lease_until
        } else {
            slot(&self.sessions, lk.session).expires_at
        };
        until.saturating_sub(self.now)
    }

    fn next_token(&mut self) -> Result<FencingToken, LockError> {
        if self.counter >= FencingToken::MAX_COUNTER {
            // Not reachable in practice (10^12 grants in one epoch); refusing beats wrapping,
            // which would break the strictly-increasing promise.
            return Err(LockError::invalid("epoch", "fencing counter exhausted in this epoch"));
        }
        self.counter += 1;
        Ok(FencingToken::new(self.epoch, self.counter))
    }

    // ---------------------------------------------------------------------------------------
    // Waiters and hand-off
    // ---------------------------------------------------------------------------------------

    fn insert_waiter(&mut self, id: WaiterId, w: Waiter) {
        for &(k, _) in &w.keys {
            slot_mut(&mut self.keys, k)
                .queue
                .get_or_insert_with(Default::default)
                .insert(w.qkey, id);
        }
        let o = slot_mut(&mut self.owners, w.owner);
        o.refs += 1;
        o.waiters.push(id);
        if w.session != NO_SESSION {
            slot_mut(&mut self.sessions, w.session).waiters.insert(id);
        }
        self.push_deadline(w.deadline, DeadlineKind::Wait { waiter: id });
        self.waiters.insert(id, w);
    }

    /// Takes a waiter out of every structure; its keys go to `dirty`.
    fn remove_waiter(&mut self, id: WaiterId, dirty: &mut Dirty) -> Option<Waiter> {
        let w = self.waiters.remove(&id)?;
        for &(k, _) in &w.keys {
            let ks = slot_mut(&mut self.keys, k);
            if let Some(q) = ks.queue.as_mut() {
                q.remove(&w.qkey);
                if q.is_empty() {
                    ks.queue = None;
                }
            }
            dirty.push(k);
        }
        let o = slot_mut(&mut self.owners, w.owner);
        o.waiters.retain(|x| *x != id);
        if w.session != NO_SESSION {
            if let Some(s) = self.sessions.get_mut(w.session as usize).and_then(Option::as_mut) {
                s.waiters.remove(&id);
            }
        }
        self.owner_unref(w.owner);
        Some(w)
    }

    /// Grants whatever became grantable on the `dirty` keys, in queue order, until nothing
    /// changes; then frees keys nobody holds or waits for.
    fn pump(&mut self, dirty: &mut Dirty) {
        let mut touched: Dirty = Dirty::new();
        while let Some(k) = dirty.pop() {
            if self.keys.get(k as usize).is_none_or(Option::is_none) {
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

    fn pump_key(&mut self, k: KeyIdx, dirty: &mut Dirty) {
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

    fn holder_owners_wait_on(&self, k: KeyIdx) -> bool {
        self.key_state(k).holders.iter().any(|h| {
            slot(&self.owners, h.owner)
                .waiters
                .iter()
                .any(|w| self.waiter(*w).keys.iter().any(|(kk, _)| *kk == k))
        })
    }

    fn waiter_grantable(&self, wid: WaiterId) -> bool {
        let w = self.waiter(wid);
        w.keys.iter().all(|&(k, m)| !self.blocked_at(k, w.owner, m, w.qkey))
    }

    fn grant_waiter(&mut self, wid: WaiterId, dirty: &mut Dirty) {
        let now = self.now;
        // The owner stays referenced through the grant: pin it across the waiter's removal.
        let Some(owner) = self.waiters.get(&wid).map(|w| w.owner) else { return };
        slot_mut(&mut self.owners, owner).refs += 1;
        let Some(w) = self.remove_waiter(wid, dirty) else { return };
        let Ok(token) = self.next_token() else {
            // Counter exhausted: time the waiter out rather than break tokens.
            self.unpin_owner(owner);
            self.emit_timeout(wid, &w, now);
            return;
        };
        let waited = now.saturating_sub(w.enqueued_at);
        let session = if w.session != NO_SESSION
            && self.sessions.get(w.session as usize).is_some_and(Option::is_some)
        {
            w.session
        } else {
            NO_SESSION
        };
        let granted = self.apply_grant(owner, &w.targets, token, now, w.lease_ms, session);
        let grants: Vec<Grant> =
            granted.iter().map(|&(l, reentrant)| self.grant_record(l, waited, reentrant)).collect();
        self.unpin_owner(owner);
        self.counters.grants_after_wait += 1;
        self.wait_hist.record(waited);
        let owner_name = slot(&self.owners, owner).name[..].to_owned();
        self.events.push(Event::Granted {
            waiter_id: wid,
            request_id: w.request_id,
            owner: owner_name,
            grants,
        });
    }

    fn unpin_owner(&mut self, owner: OwnerIdx) {
        self.owner_unref(owner);
    }

    fn emit_timeout(&mut self, wid: WaiterId, w: &Waiter, now: Millis) {
        self.counters.wait_timeouts += 1;
        let key = w.targets.first().map(|t| self.key_name(t.key)).unwrap_or_default();
        self.events.push(Event::WaitTimedOut {
            waiter_id: wid,
            request_id: w.request_id,
            owner: slot(&self.owners, w.owner).name[..].to_owned(),
            key,
            waited_ms: now.saturating_sub(w.enqueued_at),
        });
    }

    /// Cancels a queued request; its final event is [`Event::Cancelled`].
    ///
    /// # Errors
    /// [`LockError::WaiterNotFound`] when the waiter is not queued (any more).
    pub fn cancel(&mut self, waiter_id: WaiterId, now: Millis) -> Result<(), LockError> {
        self.advance_to(now);
        if !self.waiters.contains_key(&waiter_id) {
            return Err(LockError::WaiterNotFound { waiter_id });
        }
        self.drop_waiter(waiter_id, CancelReason::Cancelled);
        self.prune_deadlines();
        Ok(())
    }

    fn drop_waiter(&mut self, wid: WaiterId, reason: CancelReason) {
        let mut dirty = Dirty::new();
        if let Some(owner) = self.waiters.get(&wid).map(|w| w.owner) {
            slot_mut(&mut self.owners, owner).refs += 1;
            if let Some(w) = self.remove_waiter(wid, &mut dirty) {
                self.counters.cancelled += 1;
                let key = w.targets.first().map(|t| self.key_name(t.key)).unwrap_or_default();
                self.events.push(Event::Cancelled {
                    waiter_id: wid,
                    request_id: w.request_id,
                    owner: slot(&self.owners, owner).name[..].to_owned(),
                    key,
                    reason,
                });
            }
            self.owner_unref(owner);
        }
        self.pump(&mut dirty);
    }

    // ---------------------------------------------------------------------------------------
    // Deadlocks
    // ---------------------------------------------------------------------------------------

    /// Breaks every wait-for cycle through `owner`, choosing victims by (lowest priority,
    /// youngest). When `current` is the victim it is removed without an event and the cycle is
    /// returned (the caller answers it directly); other victims get [`Event::DeadlockVictim`].
    fn resolve_deadlocks(
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
                None => slot(&self.owners, owner).waiters.clone(),
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
                .map(|w| slot(&self.owners, self.waiter(*w).owner).name[..].to_owned())
                .collect();
            let vpos = cycle.iter().position(|w| *w == victim).unwrap_or(0);
            names.rotate_left(vpos);
            let mut dirty = Dirty::new();
            let vowner = self.waiter(victim).owner;
            slot_mut(&mut self.owners, vowner).refs += 1;
            let Some(w) = self.remove_waiter(victim, &mut dirty) else {
                self.owner_unref(vowner);
                return None;
            };
            if Some(victim) == current {
                self.owner_unref(vowner);
                self.pump(&mut dirty);
                return Some(names);
            }
            self.counters.deadlocks += 1;
            let key = w.targets.first().map(|t| self.key_name(t.key)).unwrap_or_default();
            self.events.push(Event::DeadlockVictim {
                waiter_id: victim,
                request_id: w.request_id,
                owner: slot(&self.owners, vowner).name[..].to_owned(),
                key,
                cycle: names,
            });
            self.owner_unref(vowner);
            self.pump(&mut dirty);
        }
    }

    /// Cheap pre-test for a cycle through `owner`: somebody must wait for it, i.e. it holds a
    /// lock, or a later incompatible waiter of another owner queues behind one of its waiters —
    /// and that owner must itself be waited for (checked one level deep, within a budget;
    /// beyond it the full search runs).
    fn may_be_waited_for(&self, owner: OwnerIdx) -> bool {
        let Some(o) = self.owners.get(owner as usize).and_then(Option::as_ref) else {
            return false;
        };
        if o.waiters.is_empty() {
            return false;
        }
        if o.locks > 0 {
            return true;
        }
        let mut budget = 64usize;
        for wid in &o.waiters {
            let w = self.waiter(*wid);
            for &(k, m) in &w.keys {
                let Some(q) = self.key_state(k).queue.as_ref() else { continue };
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
    fn has_incoming_edges(&self, owner: OwnerIdx) -> bool {
        let Some(o) = self.owners.get(owner as usize).and_then(Option::as_ref) else {
            return false;
        };
        o.locks > 0
            || o.waiters.iter().any(|wid| {
                let w = self.waiter(*wid);
                w.keys.iter().any(|(k, _)| {
                    self.key_state(*k).queue.as_ref().is_some_and(|q| {
                        q.range((Bound::Excluded(w.qkey), Bound::Unbounded)).next().is_some()
                    })
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
    fn blockers_of(
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
    fn find_cycle(&self, owner: OwnerIdx, start: &[WaiterId]) -> Option<Vec<WaiterId>> {
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
            if let Some(o) = self.owners.get(x as usize).and_then(Option::as_ref) {
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

    // ---------------------------------------------------------------------------------------
    // Release, renew, downgrade
    // ---------------------------------------------------------------------------------------

    /// Releases `req.owner`'s lock on `req.key` at the latest time seen. Only the holder may
    /// release; a token, when given, must be the holder's current one, so a stale client never
    /// frees a newer grant. Waiters that fit are granted (see [`LockTable::drain_events`]).
    pub fn release(&mut self, req: &ReleaseRequest) -> Result<Released, LockError> {
        let now = self.now;
        self.release_at(req, now)
    }

    /// [`LockTable::release`] at time `now`.
    pub fn release_at(&mut self, req: &ReleaseRequest, now: Millis) -> Result<Released, LockError> {
        self.advance_to(now);
        let out = self.release_one(&req.key, req.scope, &req.owner, req.fencing_token);
        self.prune_deadlines();
        out
    }

    fn release_one(
        &mut self,
        key: &str,
        scope: Scope,
        owner: &str,
        token: Option<FencingToken>,
    ) -> Result<Released, LockError> {
        let fencing_token = self.release_lock(key, scope, owner, token)?;
        Ok(Released { key: key.to_owned(), owner: owner.to_owned(), fencing_token })
    }

    fn release_lock(
        &mut self,
        key: &str,
        scope: Scope,
        owner: &str,
        token: Option<FencingToken>,
    ) -> Result<FencingToken, LockError> {
        validate_key(key)?;
        validate_owner(owner)?;
        let l = self.find_held(key, scope, owner, token)?;
        let lk = *self.lock(l);
        let mut dirty = Dirty::new();
        self.remove_lock(l, &mut dirty);
        self.counters.releases += 1;
        self.pump(&mut dirty);
        Ok(lk.token)
    }

    /// [`LockTable::release_at`] answering only the released token (no record is allocated).
    pub fn release_token(
        &mut self,
        req: &ReleaseRequest,
        now: Millis,
    ) -> Result<FencingToken, LockError> {
        self.advance_to(now);
        let out = self.release_lock(&req.key, req.scope, &req.owner, req.fencing_token);
        self.prune_deadlines();
        out
    }

    fn find_held(
        &self,
        key: &str,
        scope: Scope,
        owner: &str,
        token: Option<FencingToken>,
    ) -> Result<LockIdx, LockError> {
        let not_held = || LockError::NotHeld { key: key.to_owned(), owner: owner.to_owned() };
        let o = self.find_owner(owner).ok_or_else(not_held)?;
        let k = self.find_key(scope, key).ok_or_else(not_held)?;
        let l = self.find_target_lock(o, k).ok_or_else(not_held)?;
        if token.is_some_and(|t| t != self.lock(l).token) {
            return Err(not_held());
        }
        Ok(l)
    }

    /// Releases several locks, or with `all` every lock of the owner. Keys not held are
    /// skipped; the answer lists what was released.
    pub fn release_many(
        &mut self,
        req: &MultiReleaseRequest,
        now: Millis,
    ) -> Result<Vec<Released>, LockError> {
        self.advance_to(now);
        validate_owner(&req.owner)?;
        for item in &req.locks {
            validate_key(&item.key)?;
        }
        let mut out = Vec::new();
        if req.all {
            if let Some(o) = self.find_owner(&req.owner) {
                let mine: Vec<LockIdx> = (0..self.locks.len() as LockIdx)
                    .filter(|&l| self.locks[l as usize].live && self.locks[l as usize].owner == o)
                    .collect();
                let mut dirty = Dirty::new();
                for l in mine {
                    let lk = *self.lock(l);
                    out.push(Released {
                        key: self.key_name(lk.key),
                        owner: req.owner.clone(),
                        fencing_token: lk.token,
                    });
                    self.remove_lock(l, &mut dirty);
                    self.counters.releases += 1;
                }
                self.pump(&mut dirty);
            }
        } else {
            for item in &req.locks {
                if let Ok(r) = self.release_one(&item.key, item.scope, &req.owner, None) {
                    out.push(r);
                }
            }
        }
        self.prune_deadlines();
        Ok(out)
    }

    /// Admin: takes every lock on a key from its holders. Their tokens are dead; waiters that
    /// fit are granted with higher tokens.
    pub fn force_release(
        &mut self,
        key: &str,
        scope: Scope,
        now: Millis,
    ) -> Result<Vec<Released>, LockError> {
        self.advance_to(now);
        validate_key(key)?;
        let mut out = Vec::new();
        if let Some(k) = self.find_key(scope, key) {
            let targets: Vec<LockIdx> = self
                .key_state(k)
                .holders
                .iter()
                .filter(|h| self.lock(h.lock).key == k)
                .map(|h| h.lock)
                .collect();
            let mut dirty = Dirty::new();
            for l in targets {
                let lk = *self.lock(l);
                out.push(Released {
                    key: key.to_owned(),
                    owner: slot(&self.owners, lk.owner).name[..].to_owned(),
                    fencing_token: lk.token,
                });
                self.remove_lock(l, &mut dirty);
                self.counters.releases += 1;
            }
            self.pump(&mut dirty);
        }
        self.prune_deadlines();
        Ok(out)
    }

    /// Extends a held lock's lease to `now + lease` (a session lock renews its session).
    pub fn renew(&mut self, req: &RenewRequest, now: Millis) -> Result<Renewed, LockError> {
        self.advance_to(now);
        let now = self.now;
        validate_key(&req.key)?;
        validate_owner(&req.owner)?;
        let lease = self.lease_of(req.lease_ms)?;
        let l = self.find_held(&req.key, req.scope, &req.owner, req.fencing_token)?;
        let lk = *self.lock(l);
        if lk.session == NO_SESSION {
            let until = now.saturating_add(lease);
            self.lock_mut(l).lease_until = until;
            self.push_deadline(until, DeadlineKind::Lease { lock: l, token: lk.token.0 });
        } else {
            let s = slot_mut(&mut self.sessions, lk.session);
            s.expires_at = now.saturating_add(s.ttl_ms);
            let (at, id) = (s.expires_at, s.id);
            self.push_deadline(at, DeadlineKind::Session { id });
        }
        self.counters.renewals += 1;
        let lease_ms = self.lease_left(l);
        self.prune_deadlines();
        Ok(Renewed {
            key: req.key.clone(),
            owner: req.owner.clone(),
            fencing_token: lk.token,
            lease_ms,
        })
    }

    /// Weakens a held lock (e.g. exclusive → shared, or for a tree lock X → S, which also turns
    /// the ancestors' IX into IS). The token stays; waiters that now fit are granted.
    pub fn downgrade(&mut self, req: &DowngradeRequest, now: Millis) -> Result<Grant, LockError> {
        self.advance_to(now);
        validate_key(&req.key)?;
        validate_owner(&req.owner)?;
        let l = self.find_held(&req.key, req.scope, &req.owner, req.fencing_token)?;
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
        let g = self.grant_record(l, 0, false);
        self.prune_deadlines();
        Ok(g)
    }

    fn key_and_ancestors(&self, k: KeyIdx) -> SmallVec<[KeyIdx; 8]> {
        let mut v = self.ancestor_keys_if_tree(k);
        v.push(k);
        v
    }

    fn ancestor_keys_if_tree(&self, k: KeyIdx) -> SmallVec<[KeyIdx; 8]> {
        if self.key_state(k).scope == Scope::Tree {
            self.ancestor_keys(k)
        } else {
            SmallVec::new()
        }
    }

    /// Removes a lock and its holder entries; its keys go to `dirty`.
    fn remove_lock(&mut self, l: LockIdx, dirty: &mut Dirty) {
        let lk = *self.lock(l);
        let mut keys = self.ancestor_keys_if_tree(lk.key);
        keys.push(lk.key);
        for k in keys {
            let ks = slot_mut(&mut self.keys, k);
            let before = ks.holders.len();
            ks.holders.retain(|h| h.lock != l);
            if before > 0 && ks.holders.is_empty() {
                self.held_keys -= 1;
            }
            dirty.push(k);
        }
        self.hold_hist.record(self.now.saturating_sub(lk.granted_at));
        if lk.session != NO_SESSION {
            if let Some(s) = self.sessions.get_mut(lk.session as usize).and_then(Option::as_mut) {
                s.locks.remove(&l);
            }
        }
        if let Some(slot) = self.locks.get_mut(l as usize) {
            slot.live = false;
        }
        self.free_locks.push(l);
        self.live_locks -= 1;
        slot_mut(&mut self.owners, lk.owner).locks -= 1;
        self.owner_unref(lk.owner);
    }

    // ---------------------------------------------------------------------------------------
    // Sessions
    // ---------------------------------------------------------------------------------------

    /// Opens a session for `owner`: locks acquired with it share its lease, renewed by
    /// [`LockTable::keepalive`]. `ttl_ms` absent = the default lease; capped by the max lease.
    pub fn create_session(
        &mut self,
        owner: &str,
        ttl_ms: Option<Millis>,
        now: Millis,
    ) -> Result<SessionInfo, LockError> {
        self.advance_to(now);
        let now = self.now;
        validate_owner(owner)?;
        let ttl = match ttl_ms {
            None => self.config.default_lease_ms,
            Some(0) => return Err(LockError::invalid("ttl_ms", "must be positive")),
            Some(t) => t.min(self.config.max_lease_ms),
        };
        if self.live_sessions >= self.config.limits.max_sessions {
            self.counters.limit_rejections += 1;
            return Err(LockError::LimitExceeded {
                limit: "max_sessions",
                max: self.config.limits.max_sessions as u64,
            });
        }
        if self.next_session > FencingToken::MAX_COUNTER {
            return Err(LockError::LimitExceeded {
                limit: "session_ids",
                max: FencingToken::MAX_COUNTER,
            });
        }
        let id = FencingToken::new(self.epoch, self.next_session).0;
        self.next_session += 1;
        let o = self.intern_owner(owner);
        self.insert_session(id, o, ttl, now.saturating_add(ttl));
        self.owner_unref(o);
        self.counters.sessions_created += 1;
        self.prune_deadlines();
        self.session_info(id)
    }

    fn insert_session(&mut self, id: u64, owner: OwnerIdx, ttl_ms: Millis, expires_at: Millis) {
        slot_mut(&mut self.owners, owner).refs += 1;
        let s = Session {
            id,
            owner,
            ttl_ms,
            expires_at,
            locks: HashSet::new(),
            waiters: HashSet::new(),
        };
        let idx = match self.free_sessions.pop() {
            Some(i) => {
                if let Some(slot) = self.sessions.get_mut(i as usize) {
                    *slot = Some(s);
                }
                i
            }
            None => {
                self.sessions.push(Some(s));
                (self.sessions.len() - 1) as SessIdx
            }
        };
        self.session_index.insert(id, idx);
        self.live_sessions += 1;
        self.push_deadline(expires_at, DeadlineKind::Session { id });
    }

    fn session_info(&self, id: u64) -> Result<SessionInfo, LockError> {
        let idx = self
            .session_index
            .get(&id)
            .copied()
            .ok_or_else(|| LockError::SessionNotFound { session: id.to_string() })?;
        let s = slot(&self.sessions, idx);
        Ok(SessionInfo {
            session: id.to_string(),
            owner: slot(&self.owners, s.owner).name[..].to_owned(),
            ttl_ms: s.ttl_ms,
            expires_in_ms: s.expires_at.saturating_sub(self.now),
            locks: s.locks.len(),
        })
    }

    /// Extends a session to `now + ttl`.
    pub fn keepalive(&mut self, session: &str, now: Millis) -> Result<SessionInfo, LockError> {
        self.advance_to(now);
        let now = self.now;
        let idx = self.find_session(session)?;
        let s = slot_mut(&mut self.sessions, idx);
        s.expires_at = now.saturating_add(s.ttl_ms);
        let (at, id) = (s.expires_at, s.id);
        self.push_deadline(at, DeadlineKind::Session { id });
        self.prune_deadlines();
        self.session_info(id)
    }

    /// Ends a session: releases all its locks and drops its waiters at once (each dropped
    /// waiter gets [`Event::Cancelled`]).
    pub fn end_session(&mut self, session: &str, now: Millis) -> Result<SessionEnded, LockError> {
        self.advance_to(now);
        let idx = self.find_session(session)?;
        let (released, dropped) = self.close_session(idx, CancelReason::SessionEnded);
        self.prune_deadlines();
        Ok(SessionEnded { session: session.to_owned(), released, dropped_waiters: dropped })
    }

    fn close_session(&mut self, idx: SessIdx, reason: CancelReason) -> (Vec<String>, usize) {
        let Some(s) = self.sessions.get_mut(idx as usize).and_then(Option::take) else {
            return (Vec::new(), 0);
        };
        self.session_index.remove(&s.id);
        self.free_sessions.push(idx);
        self.live_sessions -= 1;
        let mut waiters: Vec<WaiterId> = s.waiters.iter().copied().collect();
        waiters.sort_unstable();
        let dropped = waiters.len();
        for w in waiters {
            // The session slot is gone; `remove_waiter` tolerates that.
            self.drop_waiter(w, reason);
        }
        let mut locks: Vec<LockIdx> = s.locks.iter().copied().collect();
        locks.sort_unstable();
        let mut dirty = Dirty::new();
        let mut released = Vec::new();
        for l in locks {
            if self.locks.get(l as usize).is_some_and(|lk| lk.live && lk.session == idx) {
                released.push(self.key_name(self.lock(l).key));
                self.remove_lock(l, &mut dirty);
                self.counters.releases += 1;
            }
        }
        self.pump(&mut dirty);
        self.owner_unref(s.owner);
        (released, dropped)
    }

    // ---------------------------------------------------------------------------------------
    // Time
    // ---------------------------------------------------------------------------------------

    /// Processes every deadline up to `now` in deadline order: lease expiries pass locks on,
    /// waits time out, sessions expire. Every other mutating call does this first, so no lock
    /// outlives its lease as seen by any call. A `now` earlier than the latest seen is treated
    /// as the latest (the clock is monotonic).
    pub fn advance(&mut self, now: Millis) {
        self.advance_to(now);
        self.prune_deadlines();
    }

    /// [`LockTable::advance`] without the final heap pruning (the public calls prune once at
    /// their end).
    fn advance_to(&mut self, now: Millis) {
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
                DeadlineKind::Lease { lock, .. } => {
                    let lk = *self.lock(lock);
                    let ks = self.key_state(lk.key);
                    self.events.push(Event::LeaseExpired {
                        key: ks.name[..].to_owned(),
                        scope: ks.scope,
                        owner: slot(&self.owners, lk.owner).name[..].to_owned(),
                        fencing_token: lk.token,
                        held_ms: now.saturating_sub(lk.granted_at),
                    });
                    self.counters.lease_expiries += 1;
                    self.remove_lock(lock, &mut dirty);
                }
                DeadlineKind::Wait { waiter } => {
                    if let Some(owner) = self.waiters.get(&waiter).map(|w| w.owner) {
                        slot_mut(&mut self.owners, owner).refs += 1;
                        if let Some(w) = self.remove_waiter(waiter, &mut dirty) {
                            self.emit_timeout(waiter, &w, now);
                        }
                        self.owner_unref(owner);
                    }
                }
                DeadlineKind::Session { id } => {
                    if let Some(&idx) = self.session_index.get(&id) {
                        let s = slot(&self.sessions, idx);
                        let owner = s.owner;
                        let owner_name = slot(&self.owners, owner).name[..].to_owned();
                        slot_mut(&mut self.owners, owner).refs += 1;
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
            }
            self.pump(&mut dirty);
        }
    }

    /// The earliest time at which [`LockTable::advance`] has something to do, if any.
    pub fn next_deadline(&self) -> Option<Millis> {
        self.deadlines.peek().map(|Reverse(d)| d.at)
    }

    fn deadline_live(&self, d: &Deadline) -> bool {
        match d.kind {
            DeadlineKind::Lease { lock, token } => self.locks.get(lock as usize).is_some_and(|l| {
                l.live && l.token.0 == token && l.session == NO_SESSION && l.lease_until == d.at
            }),
            DeadlineKind::Wait { waiter } => {
                self.waiters.get(&waiter).is_some_and(|w| w.deadline == d.at)
            }
            DeadlineKind::Session { id } => self
                .session_index
                .get(&id)
                .is_some_and(|&i| slot(&self.sessions, i).expires_at == d.at),
        }
    }

    fn push_deadline(&mut self, at: Millis, kind: DeadlineKind) {
        if at == Millis::MAX {
            return;
        }
        self.deadlines.push(Reverse(Deadline { at, kind }));
    }

    /// Drops stale deadlines from the top of the heap (so `next_deadline` is exact) and
    /// compacts the heap when stale entries dominate.
    fn prune_deadlines(&mut self) {
        while let Some(Reverse(d)) = self.deadlines.peek().copied() {
            if self.deadline_live(&d) {
                break;
            }
            self.deadlines.pop();
        }
        let live = self.live_locks + self.waiters.len() + self.live_sessions;
        if self.deadlines.len() > 1024 + 2 * live {
            let heap = std::mem::take(&mut self.deadlines);
            self.deadlines = heap.into_iter().filter(|Reverse(d)| self.deadline_live(d)).collect();
        }
    }

    /// Takes the events that happened since the last drain, oldest first.
    pub fn drain_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// Moves up to `max` events into `out` (oldest first) without giving up the buffer.
    pub fn drain_events_into(&mut self, out: &mut Vec<Event>, max: usize) -> usize {
        let n = max.min(self.events.len());
        out.extend(self.events.drain(..n));
        n
    }

    /// Number of events waiting to be drained.
    pub fn pending_events(&self) -> usize {
        self.events.len()
    }

    // ---------------------------------------------------------------------------------------
    // Introspection
    // ---------------------------------------------------------------------------------------

    /// The holders and waiters of a plain key (none when free).
    pub fn key_info(&self, key: &str, now: Millis) -> Result<KeyInfo, LockError> {
        self.key_info_scoped(key, Scope::Key, now)
    }

    /// The holders (with intention entries of tree locks below) and waiters of a key.
    pub fn key_info_scoped(
        &self,
        key: &str,
        scope: Scope,
        now: Millis,
    ) -> Result<KeyInfo, LockError> {
        validate_key(key)?;
        let now = now.max(self.now);
        let Some(k) = self.find_key(scope, key) else {
            return Ok(KeyInfo {
                key: key.to_owned(),
                scope,
                holders: Vec::new(),
                waiters: Vec::new(),
            });
        };
        let waiters = self
            .key_state(k)
            .queue
            .iter()
            .flat_map(|q| q.values())
            .map(|wid| {
                let w = self.waiter(*wid);
                WaiterInfo {
                    waiter_id: *wid,
                    owner: slot(&self.owners, w.owner).name[..].to_owned(),
                    mode: w.mode_on(k),
                    priority: w.priority,
                    waited_ms: now.saturating_sub(w.enqueued_at),
                    wait_left_ms: w.deadline.saturating_sub(now),
                    key: None,
                }
            })
            .collect();
        Ok(KeyInfo { key: key.to_owned(), scope, holders: self.holder_infos(k, now), waiters })
    }

    fn holder_infos(&self, k: KeyIdx, now: Millis) -> Vec<HolderInfo> {
        self.key_state(k)
            .holders
            .iter()
            .map(|h| {
                let lk = self.lock(h.lock);
                HolderInfo {
                    owner: slot(&self.owners, h.owner).name[..].to_owned(),
                    mode: h.mode,
                    fencing_token: lk.token,
                    held_ms: now.saturating_sub(lk.granted_at),
                    lease_ms: self.lease_left(h.lock),
                    intention: lk.key != k,
                }
            })
            .collect()
    }

    /// Held locks filtered by owner and/or key prefix, sorted by key then owner, at most
    /// `filter.size` (default 100). A scan of the partition: meant for admin calls.
    pub fn list_locks(&self, filter: &ListFilter) -> Vec<LockInfo> {
        let size = if filter.size == 0 { 100 } else { filter.size };
        let owner = filter.owner.as_deref().and_then(|o| self.find_owner(o));
        if filter.owner.is_some() && owner.is_none() {
            return Vec::new();
        }
        let mut out: Vec<LockInfo> = self
            .locks
            .iter()
            .enumerate()
            .filter(|(_, l)| l.live && owner.is_none_or(|o| l.owner == o))
            .filter(|(_, l)| {
                filter.prefix.as_deref().is_none_or(|p| self.key_state(l.key).name.starts_with(p))
            })
            .map(|(i, l)| {
                let ks = self.key_state(l.key);
                LockInfo {
                    key: ks.name[..].to_owned(),
                    scope: ks.scope,
                    owner: slot(&self.owners, l.owner).name[..].to_owned(),
                    mode: l.mode,
                    fencing_token: l.token,
                    held_ms: self.now.saturating_sub(l.granted_at),
                    lease_ms: self.lease_left(i as LockIdx),
                    session: (l.session != NO_SESSION)
                        .then(|| slot(&self.sessions, l.session).id.to_string()),
                }
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key).then_with(|| a.owner.cmp(&b.owner)));
        out.truncate(size);
        out
    }

    /// Counters, histograms and hottest keys.
    pub fn stats(&self) -> PartitionStats {
        PartitionStats {
            epoch: self.epoch,
            counters: self.counters.clone(),
            held_locks: self.live_locks,
            held_keys: self.held_keys,
            waiting: self.waiters.len(),
            sessions: self.live_sessions,
            wait_time: self.wait_hist.summary(),
            hold_time: self.hold_hist.summary(),
            hottest_keys: self.hot.top(),
        }
    }

    /// The queued requests that have waited longest, oldest first (for diagnostics).
    pub fn oldest_waiters(&self, n: usize) -> Vec<WaiterInfo> {
        let mut ws: Vec<(&WaiterId, &Waiter)> = self.waiters.iter().collect();
        ws.sort_by_key(|(id, w)| (w.enqueued_at, **id));
        ws.into_iter()
            .take(n)
            .map(|(id, w)| {
                let t = w.targets.first().copied();
                WaiterInfo {
                    waiter_id: *id,
                    owner: slot(&self.owners, w.owner).name[..].to_owned(),
                    mode: t.map_or(Mode::Exclusive, |t| t.mode),
                    priority: w.priority,
                    waited_ms: self.now.saturating_sub(w.enqueued_at),
                    wait_left_ms: w.deadline.saturating_sub(self.now),
                    key: t.map(|t| self.key_name(t.key)),
                }
            })
            .collect()
    }

    // ---------------------------------------------------------------------------------------
    // Export / import
    // ---------------------------------------------------------------------------------------

    /// The partition's held state (see [`PartitionSnapshot`]).
    pub fn export(&self) -> PartitionSnapshot {
        let mut locks: Vec<LockSnapshot> = self
            .locks
            .iter()
            .enumerate()
            .filter(|(_, l)| l.live)
            .map(|(i, l)| {
                let ks = self.key_state(l.key);
                LockSnapshot {
                    key: ks.name[..].to_owned(),
                    scope: ks.scope,
                    owner: slot(&self.owners, l.owner).name[..].to_owned(),
                    mode: l.mode,
                    fencing_token: l.token,
                    held_ms: self.now.saturating_sub(l.granted_at),
                    lease_ms: self.lease_left(i as LockIdx),
                    session: (l.session != NO_SESSION)
                        .then(|| slot(&self.sessions, l.session).id.to_string()),
                }
            })
            .collect();
        locks.sort_by_key(|l| l.fencing_token);
        let mut sessions: Vec<SessionSnapshot> = self
            .sessions
            .iter()
            .flatten()
            .map(|s| SessionSnapshot {
                session: s.id.to_string(),
                owner: slot(&self.owners, s.owner).name[..].to_owned(),
                ttl_ms: s.ttl_ms,
                expires_in_ms: s.expires_at.saturating_sub(self.now),
            })
            .collect();
        sessions.sort_by(|a, b| a.session.cmp(&b.session));
        PartitionSnapshot { epoch: self.epoch, counter: self.counter, locks, sessions }
    }

    /// A table rebuilt from a snapshot, issuing tokens in `epoch` (at least the snapshot's; a
    /// higher epoch restarts the counter, and its tokens still outrank every imported one).
    ///
    /// # Errors
    /// [`LockError::InvalidArgument`] naming `epoch` or `snapshot` when the snapshot is
    /// inconsistent (bad names, tokens from the future, incompatible holders, unknown session).
    pub fn import(
        snapshot: &PartitionSnapshot,
        epoch: u64,
        config: Config,
        now: Millis,
    ) -> Result<LockTable, LockError> {
        check_epoch(snapshot.epoch)?;
        if epoch < snapshot.epoch {
            return Err(LockError::invalid("epoch", "must be at least the snapshot's epoch"));
        }
        if snapshot.counter > FencingToken::MAX_COUNTER {
            return Err(LockError::invalid("snapshot", "counter out of range"));
        }
        let mut t = LockTable::with_config(snapshot.epoch, config)?;
        t.now = now.min(MAX_TIME);
        let now = t.now;
        t.counter = snapshot.counter;
        let newest = FencingToken::new(snapshot.epoch, snapshot.counter);
        let mut max_session = 0u64;
        for s in &snapshot.sessions {
            validate_owner(&s.owner)?;
            let id: u64 = s.session.parse().map_err(|_| {
                LockError::invalid("snapshot", format!("bad session id [{}]", s.session))
            })?;
            if t.session_index.contains_key(&id) || s.ttl_ms == 0 {
                return Err(LockError::invalid("snapshot", format!("bad session [{}]", s.session)));
            }
            if FencingToken(id).epoch() == snapshot.epoch {
                max_session = max_session.max(FencingToken(id).counter());
            }
            let o = t.intern_owner(&s.owner);
            t.insert_session(
                id,
                o,
                s.ttl_ms.min(config.max_lease_ms),
                now.saturating_add(s.expires_in_ms.min(config.max_lease_ms)),
            );
            t.owner_unref_keep(o);
        }
        t.next_session = max_session + 1;
        for l in &snapshot.locks {
            t.validate_name(&l.key, l.scope)?;
            validate_owner(&l.owner)?;
            if l.fencing_token > newest {
                return Err(LockError::invalid(
                    "snapshot",
                    format!("token of [{}] is newer than the counter", l.key),
                ));
            }
            let session = match &l.session {
                None => NO_SESSION,
                Some(s) => t.session_for(Some(s), &l.owner).map_err(|_| {
                    LockError::invalid("snapshot", format!("lock [{}] names a bad session", l.key))
                })?,
            };
            let o = t.intern_owner(&l.owner);
            let k = t.intern_key(l.scope, &l.key);
            let mut needed: SmallVec<[(KeyIdx, Mode); 8]> = SmallVec::new();
            needed.push((k, l.mode));
            if l.scope == Scope::Tree {
                for anc in tree_ancestors(&l.key).map(str::to_owned).collect::<Vec<_>>() {
                    needed.push((t.intern_key(Scope::Tree, &anc), l.mode.intention()));
                }
            }
            let conflict = t.find_target_lock(o, k).is_some()
                || needed
                    .iter()
                    .any(|&(kk, m)| t.blocked_at(kk, o, m, QueueKey { rank: i128::MIN, seq: 0 }));
            if conflict {
                let mut dirty: Dirty = needed.iter().map(|(k, _)| *k).collect();
                t.owner_unref_keep(o);
                t.pump(&mut dirty);
                return Err(LockError::invalid(
                    "snapshot",
                    format!("conflicting holders of [{}]", l.key),
                ));
            }
            let lease_until = if session == NO_SESSION {
                now.saturating_add(l.lease_ms.clamp(1, config.max_lease_ms))
            } else {
                SESSION_LEASE
            };
            t.add_lock(
                o,
                k,
                l.mode,
                l.fencing_token,
                now.saturating_sub(l.held_ms),
                lease_until,
                session,
            );
            t.owner_unref_keep(o);
        }
        t.set_epoch(epoch)?;
        t.prune_deadlines();
        Ok(t)
    }

    // ---------------------------------------------------------------------------------------
    // Interning and slab helpers
    // ---------------------------------------------------------------------------------------

    fn find_key(&self, scope: Scope, name: &str) -> Option<KeyIdx> {
        let h = hash_key(&self.hasher, scope, name);
        let keys = &self.keys;
        self.key_index
            .find(h, |&i| {
                keys.get(i as usize)
                    .and_then(Option::as_ref)
                    .is_some_and(|k| k.scope == scope && &*k.name == name)
            })
            .copied()
    }

    fn intern_key(&mut self, scope: Scope, name: &str) -> KeyIdx {
        let h = hash_key(&self.hasher, scope, name);
        let keys = &mut self.keys;
        let hasher = &self.hasher;
        let entry = self.key_index.entry(
            h,
            |&i| {
                keys.get(i as usize)
                    .and_then(Option::as_ref)
                    .is_some_and(|k| k.scope == scope && &*k.name == name)
            },
            |&i| {
                let k = keys.get(i as usize).and_then(Option::as_ref).expect("indexed key is live");
                hash_key(hasher, k.scope, &k.name)
            },
        );
        match entry {
            Entry::Occupied(o) => *o.get(),
            Entry::Vacant(v) => {
                let state = KeyState {
                    name: name.into(),
                    scope,
                    idle: false,
                    holders: SmallVec::new(),
                    queue: None,
                };
                let idx = match self.free_keys.pop() {
                    Some(i) => {
                        if let Some(slot) = keys.get_mut(i as usize) {
                            *slot = Some(state);
                        }
                        i
                    }
                    None => {
                        keys.push(Some(state));
                        (keys.len() - 1) as KeyIdx
                    }
                };
                v.insert(idx);
                idx
            }
        }
    }

    fn free_key_if_unused(&mut self, k: KeyIdx) {
        let Some(ks) = self.keys.get_mut(k as usize).and_then(Option::as_mut) else { return };
        if ks.holders.is_empty() && ks.queue.is_none() && !ks.idle {
            ks.idle = true;
            self.idle_keys.push(k);
            if self.idle_keys.len() > self.config.idle_cache {
                self.sweep_idle();
            }
        }
    }

    /// Frees every idle key and owner that is still unused.
    fn sweep_idle(&mut self) {
        let mut idle = std::mem::take(&mut self.idle_keys);
        for k in idle.drain(..) {
            let Some(ks) = self.keys.get_mut(k as usize).and_then(Option::as_mut) else {
                continue;
            };
            ks.idle = false;
            if !ks.holders.is_empty() || ks.queue.is_some() {
                continue;
            }
            let h = hash_key(&self.hasher, ks.scope, &ks.name);
            if let Ok(e) = self.key_index.find_entry(h, |&i| i == k) {
                e.remove();
            }
            if let Some(slot) = self.keys.get_mut(k as usize) {
                *slot = None;
            }
            self.free_keys.push(k);
        }
        self.idle_keys = idle;
        let mut idle = std::mem::take(&mut self.idle_owners);
        for o in idle.drain(..) {
            let Some(os) = self.owners.get_mut(o as usize).and_then(Option::as_mut) else {
                continue;
            };
            os.idle = false;
            if os.refs > 0 {
                continue;
            }
            let h = hash_owner(&self.hasher, &os.name);
            if let Ok(e) = self.owner_index.find_entry(h, |&i| i == o) {
                e.remove();
            }
            if let Some(slot) = self.owners.get_mut(o as usize) {
                *slot = None;
            }
            self.free_owners.push(o);
        }
        self.idle_owners = idle;
    }

    fn find_owner(&self, name: &str) -> Option<OwnerIdx> {
        let h = hash_owner(&self.hasher, name);
        let owners = &self.owners;
        self.owner_index
            .find(h, |&i| {
                owners.get(i as usize).and_then(Option::as_ref).is_some_and(|o| &*o.name == name)
            })
            .copied()
    }

    /// Interns an owner with one extra reference that the caller must hand over to a lock,
    /// waiter or session, or give back with [`Self::release_owner_ref_if_unused`] /
    /// [`Self::owner_unref_keep`].
    fn intern_owner(&mut self, name: &str) -> OwnerIdx {
        let h = hash_owner(&self.hasher, name);
        let owners = &mut self.owners;
        let hasher = &self.hasher;
        let entry = self.owner_index.entry(
            h,
            |&i| owners.get(i as usize).and_then(Option::as_ref).is_some_and(|o| &*o.name == name),
            |&i| {
                let o =
                    owners.get(i as usize).and_then(Option::as_ref).expect("indexed owner is live");
                hash_owner(hasher, &o.name)
            },
        );
        let idx = match entry {
            Entry::Occupied(o) => *o.get(),
            Entry::Vacant(v) => {
                let state = OwnerState {
                    name: name.into(),
                    idle: false,
                    refs: 0,
                    locks: 0,
                    waiters: Vec::new(),
                };
                let idx = match self.free_owners.pop() {
                    Some(i) => {
                        if let Some(slot) = owners.get_mut(i as usize) {
                            *slot = Some(state);
                        }
                        i
                    }
                    None => {
                        owners.push(Some(state));
                        (owners.len() - 1) as OwnerIdx
                    }
                };
                v.insert(idx);
                idx
            }
        };
        slot_mut(&mut self.owners, idx).refs += 1;
        idx
    }

    /// Gives back the reference taken by [`Self::intern_owner`].
    fn release_owner_ref_if_unused(&mut self, owner: OwnerIdx) {
        self.owner_unref(owner);
    }

    fn owner_unref_keep(&mut self, owner: OwnerIdx) {
        self.owner_unref(owner);
    }

    fn owner_unref(&mut self, owner: OwnerIdx) {
        let Some(o) = self.owners.get_mut(owner as usize).and_then(Option::as_mut) else { return };
        o.refs = o.refs.saturating_sub(1);
        if o.refs == 0 && !o.idle {
            o.idle = true;
            self.idle_owners.push(owner);
            if self.idle_owners.len() > self.config.idle_cache {
                self.sweep_idle();
            }
        }
    }

    fn find_target_lock(&self, owner: OwnerIdx, k: KeyIdx) -> Option<LockIdx> {
        self.key_state(k)
            .holders
            .iter()
            .find(|h| h.owner == owner && self.lock(h.lock).key == k)
            .map(|h| h.lock)
    }

    fn key_state(&self, k: KeyIdx) -> &KeyState {
        slot(&self.keys, k)
    }

    fn key_name(&self, k: KeyIdx) -> String {
        self.key_state(k).name[..].to_owned()
    }

    fn lock(&self, l: LockIdx) -> &Lock {
        self.locks.get(l as usize).filter(|l| l.live).expect("lock index refers to a live lock")
    }

    fn lock_mut(&mut self, l: LockIdx) -> &mut Lock {
        self.locks.get_mut(l as usize).filter(|l| l.live).expect("lock index refers to a live lock")
    }

    fn waiter(&self, w: WaiterId) -> &Waiter {
        self.waiters.get(&w).expect("queued waiter id refers to a live waiter")
    }

    // ---------------------------------------------------------------------------------------
    // Invariants (tests, fuzzing, debug checks)
    // ---------------------------------------------------------------------------------------

    /// Checks every structural invariant; `Err` describes the first one broken. Used by the
    /// tests, the stress test and the fuzz target.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut held_keys = 0usize;
        let mut live_locks = 0usize;
        for (k, ks) in self.keys.iter().enumerate() {
            let Some(ks) = ks else { continue };
            let k = k as KeyIdx;
            if self.find_key(ks.scope, &ks.name) != Some(k) {
                return Err(format!("key {} not indexed", ks.name));
            }
            if ks.holders.is_empty() && ks.queue.is_none() && !ks.idle {
                return Err(format!("key {} is empty but neither freed nor idle", ks.name));
            }
            if !ks.holders.is_empty() {
                held_keys += 1;
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
                        return Err(format!(
                            "queue entry on {} disagrees with its waiter",
                            ks.name
                        ));
                    }
                }
            }
        }
        for (i, l) in self.locks.iter().enumerate() {
            if !l.live {
                continue;
            }
            live_locks += 1;
            let ks = self
                .keys
                .get(l.key as usize)
                .and_then(Option::as_ref)
                .ok_or("lock on freed key")?;
            if !ks.holders.iter().any(|h| h.lock == i as LockIdx) {
                return Err(format!("lock on {} has no holder entry", ks.name));
            }
            if l.session != NO_SESSION {
                let s = self
                    .sessions
                    .get(l.session as usize)
                    .and_then(Option::as_ref)
                    .ok_or("lock of a dead session")?;
                if !s.locks.contains(&(i as LockIdx)) || s.expires_at <= self.now {
                    return Err("session lock not in its live session".into());
                }
            }
        }
        if held_keys != self.held_keys || live_locks != self.live_locks {
            return Err(format!(
                "counts drifted: held_keys {held_keys} vs {}, locks {live_locks} vs {}",
                self.held_keys, self.live_locks
            ));
        }
        for (id, w) in &self.waiters {
            if w.deadline <= self.now {
                return Err(format!("waiter {id} outlived its deadline"));
            }
            for &(k, _) in &w.keys {
                let ks = self
                    .keys
                    .get(k as usize)
                    .and_then(Option::as_ref)
                    .ok_or("waiter on freed key")?;
                if ks.queue.as_ref().and_then(|q| q.get(&w.qkey)) != Some(id) {
                    return Err(format!("waiter {id} missing from queue of {}", ks.name));
                }
            }
            if self.waiter_grantable(*id) {
                return Err(format!("waiter {id} is grantable but still waits"));
            }
            let o = self
                .owners
                .get(w.owner as usize)
                .and_then(Option::as_ref)
                .ok_or("waiter of dead owner")?;
            if !o.waiters.contains(id) {
                return Err(format!("waiter {id} not listed by its owner"));
            }
        }
        for (i, o) in self.owners.iter().enumerate() {
            let Some(o) = o else { continue };
            let locks = self.locks.iter().filter(|l| l.live && l.owner == i as OwnerIdx).count();
            let sessions =
                self.sessions.iter().flatten().filter(|s| s.owner == i as OwnerIdx).count();
            if o.locks as usize != locks || o.refs as usize != locks + o.waiters.len() + sessions {
                return Err(format!("owner {} refcount drifted", o.name));
            }
        }
        for s in self.sessions.iter().flatten() {
            if s.expires_at <= self.now {
                return Err(format!("session {} outlived its ttl", s.id));
            }
        }
        if let Some(Reverse(d)) = self.deadlines.peek() {
            if d.at <= self.now {
                return Err("an overdue deadline was not processed".into());
            }
        }
        Ok(())
    }
}

/// One holding an acquire needs: scope, name, mode, and the key's slab number if interned.
type Needed<'a> = (Scope, &'a str, Mode, Option<KeyIdx>);

fn push_needed<'a>(
    needed: &mut SmallVec<[Needed<'a>; 4]>,
    scope: Scope,
    name: &'a str,
    mode: Mode,
    k: Option<KeyIdx>,
) {
    if let Some(e) = needed.iter_mut().find(|e| e.0 == scope && e.1 == name) {
        e.2 = e.2.join(mode);
    } else {
        needed.push((scope, name, mode, k));
    }
}

fn check_epoch(epoch: u64) -> Result<(), LockError> {
    if epoch > FencingToken::MAX_EPOCH {
        return Err(LockError::invalid(
            "epoch",
            format!("must be at most {}, got {epoch}", FencingToken::MAX_EPOCH),
        ));
    }
    Ok(())
}
