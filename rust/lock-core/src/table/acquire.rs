//! Acquire, in three steps: **validate** the request (nothing is touched before it passes),
//! **plan** the holdings it needs (what the owner already holds, the targets joined with it,
//! the intention modes on tree ancestors, the queue position), then **grant** at once when no
//! needed key is blocked, or else answer a conflict (try-lock) or **queue** one waiter for all
//! keys. The rules are in docs/LOCK_CORE.md ("Acquire, reentrancy, upgrade, downgrade").
//!
//! A single-key acquire builds its one-target [`AcquireSpec`] on the stack: the uncontended
//! path allocates nothing but what a new key or owner needs.

use smallvec::SmallVec;

use super::grant::{same_acquisition, GrantTerms};
use super::ids::{KeyIdx, LockIdx, OwnerIdx, SessIdx, NO_OWNER, NO_SESSION};
use super::records::{Captured, Dirty, QueueKey, Target, Waiter};
use super::LockTable;
use crate::answer::Queued;
use crate::error::LockError;
use crate::mode::Mode;
use crate::request::AcquireRequest;
use crate::types::{Millis, Priority, PriorityValue, Scope};
use crate::validate;

/// One target of an acquire, before interning.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spec<'a> {
    pub(super) name: &'a str,
    pub(super) scope: Scope,
    pub(super) mode: Mode,
}

/// An acquire of one or many keys, as the caller gave it (not validated yet). The single- and
/// multi-key requests both become one of these, so there is one acquire path.
#[derive(Debug)]
pub(super) struct AcquireSpec<'a> {
    pub(super) owner: &'a str,
    pub(super) targets: &'a [Spec<'a>],
    pub(super) priority: Option<&'a PriorityValue>,
    pub(super) wait_ms: Option<Millis>,
    pub(super) lease_ms: Option<Millis>,
    pub(super) session: Option<&'a str>,
    pub(super) request_id: u64,
    /// A semaphore acquire's permits (`semaphore.rs`), 0 otherwise.
    pub(super) permits: u16,
    /// Asked for as a multi-lock: its grant event says so, for the bridge answers a multi-lock's
    /// grant in the multi-lock's shape even when it names one key (docs/API.md "Many keys").
    pub(super) multi: bool,
    /// The lock-delay asked for (`delay.rs`); absent: the setting's.
    pub(super) lock_delay_ms: Option<Millis>,
    /// The grace a preempting acquire gives the holders in its way (`preempt.rs`).
    pub(super) preempt_ms: Option<Millis>,
    /// The acquisition id (docs/API.md, "Acquisitions").
    pub(super) acquisition: Option<&'a str>,
}

/// What an acquire did, before it is shaped for the single- or multi-key API.
pub(super) enum Acquired {
    Granted(SmallVec<[Captured; 1]>),
    Queued(Queued),
}

/// One holding an acquire needs: scope, name, mode, and the key's slab number if interned.
type Needed<'a> = (Scope, &'a str, Mode, Option<KeyIdx>);

/// One acquire's working state, filled in place by the steps: validate (`specs`, the
/// options), plan (`owner` .. `qkey`). Built once on the caller's stack and passed by
/// reference, so the inline vectors are never moved on the uncontended path.
struct Plan<'a> {
    /// First-seen order; a key named twice appears once, in the join of its modes.
    specs: SmallVec<[Spec<'a>; 1]>,
    priority: Priority,
    wait_ms: Millis,
    lease_ms: Millis,
    session: SessIdx,
    owner: Option<OwnerIdx>,
    /// Per spec: `Some(lock)` when the owner holds this target already.
    existing: SmallVec<[Option<LockIdx>; 1]>,
    /// Per spec: its key's slab number when interned (looked up once).
    spec_keys: SmallVec<[Option<KeyIdx>; 1]>,
    /// Every target held in a covering mode: the acquire is a reentrant no-op.
    all_reentrant: bool,
    /// Every target held already: the acquire upgrades and is ranked ahead of everything.
    all_upgrades: bool,
    /// Targets (joined with what is held) and tree ancestors, each key once.
    needed: SmallVec<[Needed<'a>; 4]>,
    qkey: QueueKey,
    /// A semaphore acquire's permits, 0 otherwise.
    permits: u16,
    /// The grant's lock-delay (`delay.rs`), 0 for none.
    lock_delay_ms: Millis,
    /// The grace given to holders in the way (`preempt.rs`), 0: no preemption.
    preempt_ms: Millis,
    /// The acquisition's digest, 0: none.
    acquisition: u64,
}

impl Plan<'_> {
    /// An empty plan; every field is set by the step that owns it before it is read.
    fn new() -> Self {
        Plan {
            specs: SmallVec::new(),
            priority: Priority::FOREGROUND,
            wait_ms: 0,
            lease_ms: 0,
            session: NO_SESSION,
            owner: None,
            existing: SmallVec::new(),
            spec_keys: SmallVec::new(),
            all_reentrant: true,
            all_upgrades: true,
            needed: SmallVec::new(),
            qkey: QueueKey { rank: 0, seq: 0 },
            permits: 0,
            lock_delay_ms: 0,
            preempt_ms: 0,
            acquisition: 0,
        }
    }
}

/// The error for a grant that produced no record (a broken invariant, never expected).
fn no_grant() -> LockError {
    LockError::invalid("key", "no grant (internal)")
}

impl LockTable {
    /// The one-key acquire shared by [`LockTable::acquire`] and [`LockTable::acquire_token`],
    /// which differ only in how they answer: `granted` shapes the grant of the key, `queued`
    /// the ticket. Generic, so each caller's answer is built in place (nothing is boxed on
    /// the uncontended path).
    pub(super) fn acquire_one<T>(
        &mut self,
        req: &AcquireRequest,
        now: Millis,
        granted: impl FnOnce(&Self, &Captured) -> T,
        queued: impl FnOnce(Queued) -> T,
    ) -> Result<T, LockError> {
        let semaphore = self.semaphore_terms(req, now)?;
        self.check_election(req)?;
        // A semaphore's holders share the key; their permits decide (`semaphore.rs`).
        let mode = if semaphore.is_some() { Mode::Shared } else { req.mode };
        let targets = [Spec { name: &req.key, scope: req.scope, mode }];
        let spec = AcquireSpec {
            owner: &req.owner,
            targets: &targets,
            priority: req.priority.as_ref(),
            wait_ms: req.wait_ms,
            lease_ms: req.lease_ms,
            session: req.session.as_deref(),
            request_id: req.request_id,
            permits: semaphore.map_or(0, |s| s.permits),
            multi: false,
            lock_delay_ms: req.lock_delay_ms,
            preempt_ms: req.preempt_ms,
            acquisition: req.acquisition.as_deref(),
        };
        let acquired = self.acquire_spec(&spec, now)?;
        if let Some(s) = semaphore {
            self.set_semaphore_limit(&req.key, s.limit);
        }
        self.keep_election_value(req, &acquired);
        match acquired {
            Acquired::Granted(gs) => gs.first().map(|c| granted(self, c)).ok_or_else(no_grant),
            Acquired::Queued(q) => Ok(queued(q)),
        }
    }

    /// Validate -> plan -> grant or queue.
    pub(super) fn acquire_spec(
        &mut self,
        req: &AcquireSpec<'_>,
        now: Millis,
    ) -> Result<Acquired, LockError> {
        self.advance_to(now);
        let now = self.now;
        self.counters.acquires += 1;
        #[cfg(feature = "fault-injection")]
        for target in req.targets {
            crate::fault::on_acquire(target.name);
        }
        let mut plan = Plan::new();
        plan.permits = req.permits;
        self.check_acquire(req, &mut plan, now)?;
        self.find_holdings(req.owner, &mut plan);
        if plan.all_reentrant {
            self.counters.reentrant_grants += 1;
            let mut grants = SmallVec::new();
            for &l in plan.existing.iter().flatten() {
                grants.push(self.capture(l, true));
            }
            return Ok(Acquired::Granted(grants));
        }
        self.plan_needed(&mut plan, now);
        match self.first_blocked(&plan) {
            None => self.grant_now(req.owner, &plan, now),
            Some(blocked) => self.conflict_or_queue(req, &plan, blocked, now),
        }
    }

    /// Validate: every check before anything is touched.
    fn check_acquire<'a>(
        &mut self,
        req: &AcquireSpec<'a>,
        plan: &mut Plan<'a>,
        now: Millis,
    ) -> Result<(), LockError> {
        validate::validate_owner(req.owner)?;
        if req.targets.is_empty() {
            return Err(LockError::invalid("locks", "must name at least one key"));
        }
        let max_keys = self.config.limits.max_keys_per_request;
        if req.targets.len() > max_keys {
            return Err(self.limit_exceeded("max_keys_per_request", max_keys as u64));
        }
        if req.multi && req.targets.iter().any(|t| t.scope == Scope::Group) {
            return Err(LockError::invalid(
                "locks",
                "a group is joined on its own, not in a multi-lock",
            ));
        }
        // Merge duplicates (stronger mode wins), keep first-seen order.
        for s in req.targets {
            validate::name(s.name, s.scope, &self.config.limits)?;
            if let Some(e) = plan.specs.iter_mut().find(|e| e.scope == s.scope && e.name == s.name)
            {
                e.mode = e.mode.join(s.mode);
            } else {
                plan.specs.push(*s);
            }
        }
        plan.priority = Priority::parse(req.priority)?;
        plan.wait_ms = req.wait_ms.unwrap_or(0).min(self.config.max_wait_ms);
        plan.lease_ms = validate::lease(&self.config, req.lease_ms)?;
        plan.lock_delay_ms =
            self.lock_delay_for(req.lock_delay_ms, req.targets.iter().map(|t| t.scope))?;
        plan.preempt_ms =
            self.preempt_grace(req.preempt_ms, plan.wait_ms, req.targets.iter().map(|t| t.scope))?;
        plan.session = self.session_for(req.session, req.owner)?;
        plan.acquisition = validate::acquisition(req.acquisition)?;
        if now < self.grace_until {
            return Err(LockError::PartitionUnavailable { retry_after_ms: self.grace_until - now });
        }
        // At the memory cap, idle keys and owners are freed now, while no slab number is held
        // yet; the grant or queue step refuses if the table is still at the cap.
        self.at_memory_cap();
        Ok(())
    }

    /// Plan, part 1: what does the owner already hold?
    fn find_holdings(&self, owner_name: &str, plan: &mut Plan<'_>) {
        let owner = self.find_owner(owner_name);
        plan.owner = owner;
        for s in &plan.specs {
            let k = self.find_key(s.scope, s.name);
            plan.spec_keys.push(k);
            let lock = owner.zip(k).and_then(|(o, k)| self.find_target_lock(o, k));
            match lock {
                Some(l)
                    if self.lock(l).mode.covers(s.mode)
                        && same_acquisition(self.lock(l).acquisition, plan.acquisition) => {}
                Some(_) => plan.all_reentrant = false,
                None => {
                    plan.all_reentrant = false;
                    plan.all_upgrades = false;
                }
            }
            plan.existing.push(lock);
        }
    }

    /// Plan, part 2: the holdings needed (targets joined with what is held, and tree
    /// ancestors) and the queue position.
    fn plan_needed(&mut self, plan: &mut Plan<'_>, now: Millis) {
        for ((s, ex), k) in plan.specs.iter().zip(&plan.existing).zip(&plan.spec_keys) {
            // Targets already held stay in: a waiter queues on them too, so that it still
            // gets them if the owner lets them go while it waits. Keys the owner holds in a
            // covering mode never block it (see `blocked_at`).
            let mode = match ex {
                Some(l) => self.lock(*l).mode.join(s.mode),
                None => s.mode,
            };
            push_needed(&mut plan.needed, s.scope, s.name, mode, *k);
            if s.scope == Scope::Tree {
                for anc in validate::tree_ancestors(s.name) {
                    let ak = self.find_key(Scope::Tree, anc);
                    push_needed(&mut plan.needed, Scope::Tree, anc, mode.intention(), ak);
                }
            }
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let rank = if plan.all_upgrades { i128::MIN } else { self.rank(plan.priority, now) };
        plan.qkey = QueueKey { rank, seq };
    }

    /// The first needed key that blocks the request, if any (keys not interned yet are free).
    fn first_blocked(&self, plan: &Plan<'_>) -> Option<KeyIdx> {
        let owner = plan.owner.unwrap_or(NO_OWNER);
        plan.needed.iter().find_map(|&(_, _, mode, k)| {
            let k = k?;
            self.blocked_at(k, owner, mode, plan.permits, plan.qkey).then_some(k)
        })
    }

    /// Grant: nothing blocks, so every target is granted at once under one fresh token.
    fn grant_now(
        &mut self,
        owner_name: &str,
        plan: &Plan<'_>,
        now: Millis,
    ) -> Result<Acquired, LockError> {
        let new_locks = plan.existing.iter().filter(|e| e.is_none()).count();
        if new_locks > 0 {
            self.check_lock_room(plan.owner, new_locks)?;
        }
        let owner = match plan.owner {
            Some(o) => {
                self.owners.live_mut(o).refs += 1;
                o
            }
            None => self.intern_owner(owner_name),
        };
        for &(scope, name, _, k) in &plan.needed {
            if k.is_none() {
                self.intern_key(scope, name);
            }
        }
        let mut targets: SmallVec<[Target; 1]> = SmallVec::new();
        for (s, k) in plan.specs.iter().zip(&plan.spec_keys) {
            let key = match k {
                Some(k) => *k,
                None => self.intern_key(s.scope, s.name),
            };
            targets.push(Target { key, mode: s.mode });
        }
        let terms = GrantTerms {
            token: self.next_token()?,
            now,
            lease_ms: plan.lease_ms,
            session: plan.session,
            permits: plan.permits,
            lock_delay_ms: plan.lock_delay_ms,
            priority: plan.priority,
            acquisition: plan.acquisition,
        };
        let granted = self.apply_grant(owner, &targets, &terms);
        self.audit_grants(&granted, None);
        let mut grants = SmallVec::new();
        for &(l, reentrant) in &granted {
            grants.push(self.capture(l, reentrant));
        }
        self.counters.immediate_grants += 1;
        // An immediate grant ranked ahead of existing waiters (priority) can make them wait
        // for this owner: look for a cycle through it.
        if !self.owners.live(owner).waiters.is_empty() {
            self.resolve_deadlocks(owner, None);
            // A key the owner now holds no longer blocks its own waiters there.
            let mut dirty: Dirty =
                targets.iter().flat_map(|t| self.key_and_ancestors(t.key)).collect();
            self.pump(&mut dirty);
        }
        self.owner_unref(owner);
        Ok(Acquired::Granted(grants))
    }

    /// Blocked: a try-lock answers the conflict; otherwise the request queues, unless a limit
    /// or a deadlock refuses it.
    fn conflict_or_queue(
        &mut self,
        req: &AcquireSpec<'_>,
        plan: &Plan<'_>,
        blocked_key: KeyIdx,
        now: Millis,
    ) -> Result<Acquired, LockError> {
        let blocked_name = self.key_name(blocked_key);
        self.hot.hit(&blocked_name);
        if plan.wait_ms == 0 {
            self.counters.conflicts += 1;
            let holders = self.holder_infos(blocked_key, now);
            let delay_left_ms = self.delay_left(blocked_key);
            return Err(LockError::Conflict { key: blocked_name, holders, delay_left_ms });
        }
        self.check_queue_room(plan)?;
        let queued = self.enqueue(req, plan, now);
        if let Some(victim_cycle) = self.resolve_deadlocks(queued.owner, Some(queued.id)) {
            // This request was the victim: it is already removed; answer it directly.
            // Removing the victim may have freed the blocked key (nothing else used it and
            // the idle list was full), so its name is the one taken above and it is pumped
            // only while it still exists.
            self.counters.deadlocks += 1;
            if self.keys.contains(blocked_key) {
                let mut dirty = Dirty::new();
                dirty.push(blocked_key);
                self.pump(&mut dirty);
            }
            return Err(LockError::Deadlock {
                key: blocked_name,
                owner: req.owner.to_owned(),
                cycle: victim_cycle,
            });
        }
        self.ask_holders_to_yield(queued.id);
        // Queueing may have made a later-ranked waiter wait for nothing new, but it can also be
        // immediately grantable in a corner (its blockers vanished during `advance`): pump.
        let mut dirty = Dirty::new();
        if let Some(w) = self.waiters.get(&queued.id) {
            dirty.extend(w.keys.iter().map(|(k, _)| *k));
        }
        self.pump(&mut dirty);
        Ok(Acquired::Queued(Queued {
            waiter_id: queued.id,
            request_id: req.request_id,
            deadline: queued.deadline,
        }))
    }

    /// The lock limits for `new_locks` new locks of `owner`: partition-wide, per owner and
    /// the memory cap. A reentrant acquire or an upgrade creates no lock and is never refused.
    fn check_lock_room(
        &mut self,
        owner: Option<OwnerIdx>,
        new_locks: usize,
    ) -> Result<(), LockError> {
        let limits = self.config.limits;
        if self.live_locks + new_locks > limits.max_locks {
            return Err(self.limit_exceeded("max_locks", limits.max_locks as u64));
        }
        let held = owner.map_or(0, |o| self.owners.live(o).locks as usize);
        if held + new_locks > limits.max_locks_per_owner {
            return Err(
                self.limit_exceeded("max_locks_per_owner", limits.max_locks_per_owner as u64)
            );
        }
        self.check_memory_room()
    }

    /// The memory cap (`max_memory_bytes`) for anything new: a lock, a waiter, a session.
    pub(super) fn check_memory_room(&mut self) -> Result<(), LockError> {
        let cap = self.config.limits.max_memory_bytes;
        if self.memory_usage().total >= cap {
            return Err(self.limit_exceeded("max_memory", cap));
        }
        Ok(())
    }

    /// The waiter limits, partition-wide, per owner, per key and the memory cap.
    fn check_queue_room(&mut self, plan: &Plan<'_>) -> Result<(), LockError> {
        let limits = self.config.limits;
        if self.waiters.len() >= limits.max_waiters {
            return Err(self.limit_exceeded("max_waiters", limits.max_waiters as u64));
        }
        let queued = plan.owner.map_or(0, |o| self.owners.live(o).waiters.len());
        if queued >= limits.max_waiters_per_owner {
            let max = limits.max_waiters_per_owner as u64;
            return Err(self.limit_exceeded("max_waiters_per_owner", max));
        }
        let per_key = limits.max_waiters_per_key;
        for &(_, _, _, k) in &plan.needed {
            if let Some(k) = k {
                let len = self.key_state(k).queue.as_ref().map_or(0, |q| q.len());
                if len >= per_key {
                    return Err(self.limit_exceeded("max_waiters_per_key", per_key as u64));
                }
            }
        }
        self.check_memory_room()
    }

    /// Queue: one waiter for all needed keys.
    fn enqueue(&mut self, req: &AcquireSpec<'_>, plan: &Plan<'_>, now: Millis) -> Enqueued {
        let owner = self.intern_owner(req.owner);
        let mut keys: SmallVec<[(KeyIdx, Mode); 1]> = SmallVec::new();
        for &(scope, name, mode, k) in &plan.needed {
            keys.push((k.unwrap_or_else(|| self.intern_key(scope, name)), mode));
        }
        let mut targets: SmallVec<[Target; 1]> = SmallVec::new();
        for s in &plan.specs {
            targets.push(Target { key: self.intern_key(s.scope, s.name), mode: s.mode });
        }
        let id = self.next_waiter;
        self.next_waiter += 1;
        let deadline = now.saturating_add(plan.wait_ms);
        let waiter = Waiter {
            request_id: req.request_id,
            acquisition: plan.acquisition,
            owner,
            targets,
            keys,
            qkey: plan.qkey,
            priority: plan.priority,
            enqueued_at: now,
            deadline,
            lease_ms: plan.lease_ms,
            session: plan.session,
            permits: plan.permits,
            multi: req.multi,
            lock_delay_ms: plan.lock_delay_ms,
            preempt_ms: plan.preempt_ms,
        };
        self.insert_waiter(id, waiter);
        self.owner_unref(owner);
        self.counters.queued += 1;
        Enqueued { id, owner, deadline }
    }

    /// Counts a refusal by a configured limit and builds its error.
    pub(super) fn limit_exceeded(&mut self, limit: &'static str, max: u64) -> LockError {
        self.counters.limit_rejections += 1;
        LockError::LimitExceeded { limit, max }
    }
}

/// A request just queued.
struct Enqueued {
    id: crate::types::WaiterId,
    owner: OwnerIdx,
    deadline: Millis,
}

/// Adds a needed holding, joining the mode when the key is already listed.
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
