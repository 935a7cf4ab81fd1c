//! The lock table of one partition: holders, wait queues, leases, sessions and the fencing
//! counter.
//!
//! Single-threaded by design (`&mut self`); [`crate::Partition`] puts it behind a mutex.
//!
//! This file is the table's public API and nothing else: each call names what it does and
//! hands the work to the file of its concern. `table/README.md` maps concerns to files,
//! draws the data structures and follows one request through them; the rules themselves are
//! written up in docs/LOCK_CORE.md.
//!
//! Every mutating call has the same frame: [`LockTable::advance`] to `now` first (so no lock
//! outlives its lease as seen by any call), do the work, then prune stale deadlines from the
//! top of the heap (so [`LockTable::next_deadline`] is exact).

mod acquire;
mod audit;
mod changes;
mod deadline;
mod deadlock;
mod delay;
mod election;
mod grant;
mod group;
mod ids;
mod interner;
mod introspect;
mod invariants;
mod listing;
mod memory;
mod preempt;
mod queue;
mod records;
mod release;
mod semaphore;
mod session;
mod snapshot;
mod tree;
mod watch;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hashbrown::HashMap;

use crate::answer::{
    AcquireOutcome, Grant, GroupInfo, GroupMember, KeyInfo, LimitChanged, MultiOutcome, Released,
    Renewed, SessionEnded, SessionInfo, WaiterInfo, WatchOutcome,
};
use crate::config::Config;
use crate::error::LockError;
use crate::event::{CancelReason, Event};
use crate::histogram::Histogram;
use crate::request::{
    AcquireRequest, DowngradeRequest, ForceReleaseRequest, KeyInfoRequest, MultiAcquireRequest,
    MultiReleaseRequest, ReleaseRequest, RenewRequest, WatchRequest,
};
use crate::stats::{Counters, HotKeys, PartitionStats, SampleDrain, Telemetry};
use crate::types::{Millis, Scope, SessionId, WaiterId};
use crate::validate;

use acquire::{AcquireSpec, Acquired, Spec};
use changes::Changes;
use deadline::Deadline;
use ids::{LockIdx, SessIdx};
use interner::{Interner, Slab};
use listing::ListingIndex;
use records::{KeyState, Lock, OwnerState, Session, Waiter};
use watch::Watches;

pub use audit::{AuditEvent, AuditRecord};
pub use changes::{FullState, PartitionDelta, ReleasedLock};
pub use deadline::MAX_TIME;
pub use delay::DelaySnapshot;
pub use introspect::ListFilter;
pub use listing::{ListCursor, ListPage, SCAN_BUDGET};
pub use memory::MemoryUsage;
pub use snapshot::{LockSnapshot, PartitionSnapshot, SessionSnapshot};

/// The locks of one partition. See the module docs and `table/README.md`.
#[derive(Debug)]
pub struct LockTable {
    config: Config,
    epoch: u64,
    /// Grants issued in this epoch; the low bits of the next token.
    counter: u64,
    /// The latest time seen; every call's `now` is clamped to at least this (monotonic).
    now: Millis,
    grace_until: Millis,
    keys: Interner<KeyState>,
    held_keys: usize,
    /// Holder entries on all keys (a tree lock has one per key it touches); for the memory
    /// estimate (`memory.rs`).
    holder_entries: usize,
    /// The keys targeted by a live lock, in listing order (`listing.rs`).
    listing: ListingIndex,
    owners: Interner<OwnerState>,
    /// Not a slab of `Option`s: a lock is `Copy` and small, and a dead one keeps its place
    /// (`live == false`) until reused, so a stale deadline can still be checked against it.
    locks: Vec<Lock>,
    free_locks: Vec<LockIdx>,
    live_locks: usize,
    /// Live semaphore grants and the permits they hold (`semaphore.rs`), for the stats.
    semaphore_grants: usize,
    held_permits: u64,
    /// Live election grants: elections that have a leader (`election.rs`), for the stats.
    election_leaders: usize,
    waiters: HashMap<WaiterId, Waiter>,
    /// Watches on locks (`watch.rs`); not replicated, not exported.
    watches: Watches,
    /// The values kept with election grants and waiting campaigns (`election.rs`).
    election_values: election::ElectionValues,
    /// The partition's groups (their members are locks of scope group).
    groups: group::Groups,
    /// Lock-delays asked for by live locks and running on keys (`delay.rs`).
    delays: delay::LockDelays,
    /// Grant priorities and pending revokes (`preempt.rs`).
    preemption: preempt::Preemption,
    /// Queue entries of all waiters (one per key each queues on); for the memory estimate.
    queue_entries: usize,
    /// Keys with a wait queue; for the memory estimate.
    queues: usize,
    next_waiter: WaiterId,
    next_seq: u64,
    sessions: Slab<Session>,
    /// Sessions by their full id (never by a part of it).
    session_index: HashMap<SessionId, SessIdx>,
    live_sessions: usize,
    deadlines: BinaryHeap<Reverse<Deadline>>,
    events: Vec<Event>,
    counters: Counters,
    wait_hist: Histogram,
    hold_hist: Histogram,
    hot: HotKeys,
    /// What changed since the last take, for replicas; `None` while tracking is off.
    changes: Option<Box<Changes>>,
    /// Number of the latest take of changes (see [`PartitionDelta::seq`]).
    change_seq: u64,
    /// The lock history's buffer (`audit.rs`); empty and off unless configured.
    audit: audit::AuditLog,
}

impl LockTable {
    /// An empty table with the default [`Config`] whose tokens carry `epoch` in their high bits.
    ///
    /// # Errors
    /// `epoch` must fit [`FencingToken::MAX_EPOCH`](crate::FencingToken::MAX_EPOCH).
    pub fn new(epoch: u64) -> Result<Self, LockError> {
        Self::with_config(epoch, Config::default())
    }

    /// An empty table with the given settings.
    pub fn with_config(epoch: u64, config: Config) -> Result<Self, LockError> {
        validate::epoch(epoch)?;
        config.validate()?;
        Ok(LockTable {
            config,
            epoch,
            counter: 0,
            now: 0,
            grace_until: 0,
            keys: Interner::default(),
            held_keys: 0,
            holder_entries: 0,
            listing: ListingIndex::default(),
            owners: Interner::default(),
            locks: Vec::new(),
            free_locks: Vec::new(),
            live_locks: 0,
            semaphore_grants: 0,
            election_leaders: 0,
            held_permits: 0,
            waiters: HashMap::new(),
            watches: Watches::default(),
            election_values: election::ElectionValues::default(),
            groups: group::Groups::default(),
            delays: delay::LockDelays::default(),
            preemption: preempt::Preemption::default(),
            queue_entries: 0,
            queues: 0,
            next_waiter: 1,
            next_seq: 0,
            sessions: Slab::default(),
            session_index: HashMap::new(),
            live_sessions: 0,
            deadlines: BinaryHeap::new(),
            events: Vec::new(),
            counters: Counters::default(),
            wait_hist: Histogram::default(),
            hold_hist: Histogram::default(),
            hot: HotKeys::new(config.hot_keys),
            changes: None,
            change_seq: 0,
            audit: audit::AuditLog::default(),
        }
        .audited())
    }

    /// The table with its lock history configured (`audit.rs`).
    fn audited(mut self) -> Self {
        self.configure_audit();
        self
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
        self.configure_audit();
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
    /// The epoch may not go down, and must fit [`FencingToken::MAX_EPOCH`](crate::FencingToken::MAX_EPOCH).
    pub fn set_epoch(&mut self, epoch: u64) -> Result<(), LockError> {
        validate::epoch(epoch)?;
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

    /// Number of registered watches.
    pub fn watching(&self) -> usize {
        self.watches.len()
    }

    /// Refuses new grants until `until` (recovery grace after an owner died, docs/ARCHITECTURE.md
    /// "Partitions, owners, epochs").
    pub fn begin_grace(&mut self, until: Millis) {
        self.grace_until = self.grace_until.max(until);
    }

    // ---- acquire (acquire.rs: validate -> plan -> grant or queue) ----

    /// Acquires one key (or tree node): granted at once, queued (the outcome then arrives as an
    /// [`Event`] with the returned waiter id), or refused. With no `wait_ms` it is a try-lock,
    /// granted at once or refused.
    ///
    /// An owner that already holds the key under the same `acquisition` gets its existing grant
    /// back (same token), so a client may retry an acquire whose answer it lost; under another
    /// acquisition (or none) it gets a new grant under a newer token (docs/API.md "Acquisitions").
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
        let out = self.acquire_one(
            req,
            now,
            |t, c| AcquireOutcome::Granted(t.captured_record(c)),
            AcquireOutcome::Queued,
        );
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
        if req.locks.iter().any(|l| l.scope == Scope::Semaphore) {
            return Err(LockError::invalid(
                "scope",
                "a semaphore is acquired on its own, not in a multi-lock",
            ));
        }
        let targets: Vec<Spec<'_>> =
            req.locks.iter().map(|l| Spec { name: &l.key, scope: l.scope, mode: l.mode }).collect();
        let spec = AcquireSpec {
            owner: &req.owner,
            targets: &targets,
            priority: req.priority.as_ref(),
            wait_ms: req.wait_ms,
            lease_ms: req.lease_ms,
            session: req.session.as_deref(),
            request_id: req.request_id,
            permits: 0,
            multi: true,
            lock_delay_ms: req.lock_delay_ms,
            preempt_ms: None,
            acquisition: req.acquisition.as_deref(),
        };
        let out = self.acquire_spec(&spec, now).map(|done| match done {
            Acquired::Granted(gs) => {
                MultiOutcome::Granted(gs.iter().map(|c| self.captured_record(c)).collect())
            }
            Acquired::Queued(q) => MultiOutcome::Queued(q),
        });
        self.prune_deadlines();
        out
    }

    /// Cancels a queued request; its final event is [`Event::Cancelled`]. A watch's id cancels
    /// the watch, with no event (its caller is gone).
    ///
    /// # Errors
    /// [`LockError::WaiterNotFound`] when the waiter is not queued (any more).
    pub fn cancel(&mut self, waiter_id: WaiterId, now: Millis) -> Result<(), LockError> {
        self.advance_to(now);
        if self.forget_watch(waiter_id).is_some() {
            self.prune_deadlines();
            return Ok(());
        }
        if !self.waiters.contains_key(&waiter_id) {
            return Err(LockError::WaiterNotFound { waiter_id });
        }
        self.drop_waiter(waiter_id, CancelReason::Cancelled, None);
        self.prune_deadlines();
        Ok(())
    }

    /// Watches the lock of `req.key` with `req.fencing_token`: answers at once that it is not
    /// held ([`crate::WatchReason::NotHeld`]), or that it is held when the watch does not
    /// wait; otherwise registers a watch whose end arrives as [`Event::WatchFired`] (with why
    /// the lock ended) or [`Event::WatchTimedOut`] (still held when the wait ran out).
    ///
    /// # Errors
    /// [`LockError::InvalidArgument`] for a bad key; [`LockError::LimitExceeded`] past
    /// `max_watches` or the memory cap.
    pub fn watch(&mut self, req: &WatchRequest, now: Millis) -> Result<WatchOutcome, LockError> {
        self.advance_to(now);
        let out = self.register_watch(req);
        self.prune_deadlines();
        out
    }

    // ---- release, renew, downgrade (release.rs) ----

    /// Releases `req.owner`'s lock on `req.key`. Only the holder may release; a token or an
    /// acquisition, when given, must be the holder's current one, so a stale client never frees
    /// a newer grant. Waiters that fit are granted (see [`LockTable::drain_events`]).
    pub fn release(&mut self, req: &ReleaseRequest, now: Millis) -> Result<Released, LockError> {
        self.advance_to(now);
        let out = self.release_one(&req.key, req.scope, &req.owner, release::Named::of(req));
        self.prune_deadlines();
        out
    }

    /// Releases several locks, or with `all` every lock of the owner. Keys not held are
    /// skipped; the answer lists what was released.
    pub fn release_many(
        &mut self,
        req: &MultiReleaseRequest,
        now: Millis,
    ) -> Result<Vec<Released>, LockError> {
        self.advance_to(now);
        let out = self.release_listed(req)?;
        self.prune_deadlines();
        Ok(out)
    }

    /// Admin: takes every lock on `req.key` from its holders, and answers them (none when
    /// nothing was held). Their tokens are dead; waiters that fit are granted with higher tokens.
    /// The lock history records the administrator's `req.reason` with each lock taken
    /// (docs/LOCK_CORE.md "Lock history").
    pub fn force_release(
        &mut self,
        req: &ForceReleaseRequest,
        now: Millis,
    ) -> Result<Vec<Released>, LockError> {
        self.with_force_reason(req.reason.as_deref(), |t| {
            t.advance_to(now);
            let out = t.take_key(&req.key, req.scope)?;
            t.prune_deadlines();
            Ok(out)
        })
    }

    /// Changes the limit of semaphore `name` while it is in use (docs/LOCK_CORE.md,
    /// "Semaphores"): grants follow the new limit, nothing held is revoked, and waiters a raised
    /// limit lets in are granted at once (see [`LockTable::drain_events`]). A limit below the
    /// permits held is taken only with `below_held`: held permits over the limit are state that
    /// a replica of state format 2 refuses to import, so the caller allows it only when every
    /// node reads format 3 ([`crate::STATE_FORMAT`]).
    ///
    /// # Errors
    /// [`LockError::NotHeld`] when nobody holds or waits for the semaphore;
    /// [`LockError::InvalidArgument`] on `limit` when it is out of range, below a waiter's
    /// permits, or below the permits held without `below_held`.
    pub fn change_semaphore_limit(
        &mut self,
        name: &str,
        limit: u32,
        below_held: bool,
        now: Millis,
    ) -> Result<LimitChanged, LockError> {
        self.advance_to(now);
        let out = self.change_limit(name, limit, below_held);
        self.prune_deadlines();
        out
    }

    /// Extends a held lock's lease to `now + lease` (a session lock renews its session).
    pub fn renew(&mut self, req: &RenewRequest, now: Millis) -> Result<Renewed, LockError> {
        self.advance_to(now);
        let out = self.renew_held(req).inspect_err(|e| self.audit_renew_refused(req, e))?;
        self.prune_deadlines();
        Ok(out)
    }

    /// Weakens a held lock (e.g. exclusive → shared, or for a tree lock X → S, which also turns
    /// the ancestors' IX into IS). The token stays; waiters that now fit are granted.
    pub fn downgrade(&mut self, req: &DowngradeRequest, now: Millis) -> Result<Grant, LockError> {
        self.advance_to(now);
        let out = self.downgrade_held(req)?;
        self.prune_deadlines();
        Ok(out)
    }

    // ---- sessions (session.rs) ----

    /// Opens a session for `owner` under the id `id`: locks acquired with it share its lease,
    /// renewed by [`LockTable::keepalive`]. `ttl_ms` absent = the default lease; capped by the
    /// max lease.
    ///
    /// `id` is the session's credential and must come from a secure random source: the table
    /// takes it from its caller instead of drawing it, so that it stays free of OS randomness
    /// and replays deterministically (see [`SessionId`]; the bridge draws it from the OS).
    ///
    /// # Errors
    /// [`LockError::InvalidArgument`] for a bad owner or TTL, or an `id` already in use;
    /// [`LockError::LimitExceeded`] past `max_sessions`.
    pub fn create_session(
        &mut self,
        owner: &str,
        ttl_ms: Option<Millis>,
        id: SessionId,
        now: Millis,
    ) -> Result<SessionInfo, LockError> {
        self.advance_to(now);
        let id = self.open_session(owner, ttl_ms, id)?;
        self.prune_deadlines();
        self.session_info(id)
    }

    /// Extends `owner`'s session to `now + ttl`.
    ///
    /// # Errors
    /// [`LockError::InvalidArgument`] for a bad owner; [`LockError::SessionNotFound`] for an
    /// unknown, ended or expired session, and for a session of another owner.
    pub fn keepalive(
        &mut self,
        session: &str,
        owner: &str,
        now: Millis,
    ) -> Result<SessionInfo, LockError> {
        self.advance_to(now);
        validate::validate_owner(owner)?;
        let id = self.extend_session(session, owner)?;
        self.prune_deadlines();
        self.session_info(id)
    }

    /// Ends `owner`'s session: releases all its locks and drops its waiters at once (each
    /// dropped waiter gets [`Event::Cancelled`]).
    ///
    /// # Errors
    /// As [`LockTable::keepalive`].
    pub fn end_session(
        &mut self,
        session: &str,
        owner: &str,
        now: Millis,
    ) -> Result<SessionEnded, LockError> {
        self.advance_to(now);
        validate::validate_owner(owner)?;
        let idx = self.owned_session(session, owner)?;
        let (released, dropped) = self.close_session(idx, CancelReason::SessionEnded);
        self.prune_deadlines();
        Ok(SessionEnded { session: session.to_owned(), released, dropped_waiters: dropped })
    }

    // ---- groups (group.rs) ----

    /// Creates group `name` (docs/LOCK_CORE.md "Groups"): it exists, with no member, until
    /// [`LockTable::delete_group`]. A member joins with a shared [`LockTable::acquire`] of the
    /// group's key in [`Scope::Group`] and leaves with a release or at the end of its lease or
    /// session.
    ///
    /// # Errors
    /// [`LockError::InvalidArgument`] for a bad name; [`LockError::GroupExists`] when it exists;
    /// [`LockError::LimitExceeded`] past the memory cap.
    pub fn create_group(&mut self, name: &str, now: Millis) -> Result<(), LockError> {
        self.advance(now);
        let out = self.add_group(name);
        self.prune_deadlines();
        out
    }

    /// Deletes group `name`, which must have no member; its watches answer that it is gone.
    ///
    /// # Errors
    /// [`LockError::GroupNotFound`], or [`LockError::GroupNotEmpty`] while it has members.
    pub fn delete_group(&mut self, name: &str, now: Millis) -> Result<(), LockError> {
        self.advance(now);
        let out = self.remove_group(name);
        self.prune_deadlines();
        out
    }

    /// Replaces member `owner`'s capabilities in group `name` (same token); the group's version
    /// changes and its watches fire.
    ///
    /// # Errors
    /// [`LockError::GroupNotFound`]; [`LockError::NotHeld`] when `owner` is not a member;
    /// [`LockError::InvalidArgument`] for a bad owner or capabilities over the bound.
    pub fn update_member(
        &mut self,
        name: &str,
        owner: &str,
        capabilities: Option<&str>,
        now: Millis,
    ) -> Result<GroupMember, LockError> {
        self.advance(now);
        let out = self.change_capabilities(name, owner, capabilities);
        self.prune_deadlines();
        out
    }

    /// The names of the partition's groups, in order.
    pub fn group_names(&self) -> Vec<String> {
        self.listed_groups()
    }

    /// Group `name`'s members, in name order, and its version (a digest of its members), as the
    /// table holds them: a read moves no time on.
    ///
    /// # Errors
    /// [`LockError::GroupNotFound`].
    pub fn group_info(&self, name: &str) -> Result<GroupInfo, LockError> {
        self.describe_group(name)
    }

    // ---- time and events (deadline.rs) ----

    /// Processes every deadline up to `now` in deadline order: lease expiries pass locks on,
    /// waits time out, sessions expire. Every other mutating call does this first, so no lock
    /// outlives its lease as seen by any call. A `now` earlier than the latest seen is treated
    /// as the latest (the clock is monotonic).
    pub fn advance(&mut self, now: Millis) {
        self.advance_to(now);
        self.prune_deadlines();
    }

    /// The earliest time at which [`LockTable::advance`] has something to do, if any.
    pub fn next_deadline(&self) -> Option<Millis> {
        self.deadlines.peek().map(|Reverse(d)| d.at)
    }

    /// Takes the events that happened since the last drain, oldest first.
    pub fn drain_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// Takes up to `max` of the lock history's records, oldest first (docs/LOCK_CORE.md "Lock
    /// history"); the rest stay buffered. Nothing is recorded unless
    /// [`Config::audit_capacity`] is set.
    pub fn drain_audit(&mut self, max: usize) -> Vec<AuditRecord> {
        self.take_audit(max)
    }

    // ---- introspection (introspect.rs) ----

    /// The holders (with intention entries of tree locks below) and waiters of `req.key` in
    /// `req.scope` (none when free), their lease and wait left at `now`. A read: time does not
    /// move on, so nothing expires.
    pub fn key_info(&self, req: &KeyInfoRequest, now: Millis) -> Result<KeyInfo, LockError> {
        validate::validate_key(&req.key)?;
        Ok(self.describe_key(&req.key, req.scope, now.max(self.now)))
    }

    /// One page of held locks filtered by owner and/or key prefix, in (key, scope, owner)
    /// order, starting after `filter.after`, at most `filter.size` (default
    /// [`ListFilter::DEFAULT_SIZE`], at most [`ListFilter::MAX_SIZE`]). Examines at most
    /// [`SCAN_BUDGET`] entries from an ordered index (`listing.rs`), so it is cheap enough to
    /// run under the partition's lock whatever the number of held locks; follow
    /// [`ListPage::next`] for the rest.
    pub fn list_page(&self, filter: &ListFilter) -> ListPage {
        self.locks_matching(filter, SCAN_BUDGET).0
    }

    /// [`LockTable::list_page`] examining at most `budget` entries (at least one key, so a
    /// page always moves on); answers the page and how many entries it examined. A
    /// [`Partition`](crate::Partition) builds a page from several of these, releasing its mutex
    /// between them.
    pub fn list_page_within(&self, filter: &ListFilter, budget: usize) -> (ListPage, usize) {
        self.locks_matching(filter, budget)
    }

    /// Counters, histograms, hottest keys and the memory estimate.
    pub fn stats(&self) -> PartitionStats {
        self.current_stats()
    }

    /// Counters and gauges for Elasticsearch's telemetry, and the wait and hold times recorded
    /// since the previous drain when `samples` takes them (see [`Telemetry`]); no percentiles.
    pub fn telemetry(&mut self, samples: SampleDrain) -> Telemetry {
        self.telemetry_figures(samples)
    }

    /// The estimated heap bytes the table holds, by part (see [`MemoryUsage`]); O(1).
    pub fn memory(&self) -> MemoryUsage {
        self.memory_usage()
    }

    /// The queued requests that have waited longest, oldest first (for diagnostics).
    pub fn oldest_waiters(&self, n: usize) -> Vec<WaiterInfo> {
        self.longest_waiting(n)
    }

    // ---- hand-over between nodes (snapshot.rs) ----

    /// The partition's held state (see [`PartitionSnapshot`]).
    pub fn export(&self) -> PartitionSnapshot {
        self.snapshot()
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
        LockTable::from_snapshot(snapshot, epoch, config, now)
    }

    // ---- replication (changes.rs) ----

    /// Turns recording of changes for replicas on or off (off in a new or imported table, so
    /// a table without replicas pays nothing). Turning it off drops what was recorded and
    /// skips a `seq`, so a replica synced before sees a gap at the next take and needs a full
    /// state again. Turn it on before [`LockTable::export_full`] for a new replica.
    pub fn set_change_tracking(&mut self, on: bool) {
        self.track_changes(on);
    }

    /// Whether changes are recorded for replicas.
    pub fn change_tracking(&self) -> bool {
        self.changes.is_some()
    }

    /// What changed since the previous take, for the replicas (see [`PartitionDelta`]), after
    /// advancing to `now` (so expiries up to `now` are in it; their events are drained as
    /// usual). Leases and session expiries are the time left at `now`.
    ///
    /// # Errors
    /// [`LockError::InvalidArgument`] naming `change_tracking` when tracking is off (then
    /// nothing happens, time included).
    pub fn take_changes(&mut self, now: Millis) -> Result<PartitionDelta, LockError> {
        if !self.change_tracking() {
            return Err(LockError::invalid("change_tracking", "is off: turn it on first"));
        }
        self.advance_to(now);
        self.prune_deadlines();
        self.collect_changes()
    }

    /// The held state with the `seq` of the latest take: what a new replica starts from. The
    /// next delta (`seq + 1`) holds every change made after this call.
    pub fn export_full(&self) -> FullState {
        FullState { seq: self.change_seq, snapshot: self.snapshot() }
    }

    // ---- invariants (invariants.rs) ----

    /// Checks every structural invariant; `Err` describes the first one broken. Used by the
    /// tests, the stress test and the fuzz target.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.check_structure()
    }
}
