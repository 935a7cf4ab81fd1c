//! Property test: random operation sequences with a random clock, checked after every step
//! against a small reference model that recomputes every rule from first principles.
//!
//! The model only sees what the API shows (answers and events) and keeps its own holders,
//! waiters and sessions. After every step it checks:
//!
//! - **safety**: no two owners hold incompatible modes on a key, counting the intention modes
//!   that tree locks put on their ancestors (the model derives those from the paths itself);
//! - **agreement**: the table's held locks equal the model's (owner, key, mode, token);
//! - **decisions**: an acquire is granted at once exactly when the model finds it unblocked;
//!   a conflict or queue happens only when the model finds it blocked;
//! - **order**: a grant never passes an earlier-ranked, still-waiting, incompatible request
//!   (rank = arrival − priority·aging, FIFO on ties; upgrades first);
//! - **liveness**: no waiter that the model finds grantable is left waiting;
//! - **tokens**: strictly increasing per key; a reentrant grant returns the held token;
//! - **leases**: no lock outlives its lease or its session; none expires early;
//! - **completion**: every waiter ends with exactly one event (granted / timed out / cancelled /
//!   deadlock victim), and at the end of the run every waiter has ended.
//! - **watches**: a watch on a held token registers, on any other token answers "not held" at
//!   once; it fires exactly once, only after the model saw that token's lock end, with the
//!   model's reason (released, expired, force-released, session ended or expired, upgraded);
//!   a registered watch's token is still held; a timeout comes only at its deadline.
//!
//! Cases: `PROPTEST_CASES`, else 10,000 when `CI=true`, else 20,000 (about 4 s per 10,000
//! with the workspace's optimised test profile for this crate).

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use lock_core::{
    AcquireOutcome, AcquireRequest, Config, DowngradeRequest, Event, FencingToken,
    ForceReleaseRequest, Grant, ListFilter, LockError, LockItem, LockTable, Millis, Mode,
    MultiAcquireRequest, MultiOutcome, PriorityValue, ReleaseRequest, RenewRequest, Scope,
    WaiterId, WatchOutcome, WatchReason, WatchRequest, ALL_MODES,
};
use proptest::prelude::*;

const AGING_MS: u64 = 40;
const OWNERS: [&str; 4] = ["o0", "o1", "o2", "o3"];
const TARGETS: [(Scope, &str); 7] = [
    (Scope::Key, "k0"),
    (Scope::Key, "k1"),
    (Scope::Key, "k2"),
    (Scope::Tree, "/a"),
    (Scope::Tree, "/a/b"),
    (Scope::Tree, "/a/c"),
    (Scope::Tree, "/a/b/x"),
];

#[derive(Debug, Clone)]
enum Op {
    Acquire {
        owner: usize,
        target: usize,
        mode: usize,
        prio: u8,
        wait: u64,
        lease: u64,
        session: bool,
    },
    Multi {
        owner: usize,
        t1: usize,
        m1: usize,
        t2: usize,
        m2: usize,
        prio: u8,
        wait: u64,
    },
    Release {
        owner: usize,
        target: usize,
    },
    Renew {
        owner: usize,
        target: usize,
        lease: u64,
    },
    Downgrade {
        owner: usize,
        target: usize,
        mode: usize,
    },
    Cancel {
        pick: usize,
    },
    Session {
        owner: usize,
        ttl: u64,
    },
    Keepalive {
        owner: usize,
    },
    EndSession {
        owner: usize,
    },
    Watch {
        owner: usize,
        target: usize,
        wait: u64,
        stale: bool,
    },
    CancelWatch {
        pick: usize,
    },
    ForceRelease {
        target: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let o = 0..OWNERS.len();
    let t = 0..TARGETS.len();
    let m = 0..ALL_MODES.len();
    prop_oneof![
        6 => (o.clone(), t.clone(), m.clone(), 0u8..10, prop_oneof![Just(0u64), 1u64..120], 1u64..200, any::<bool>())
            .prop_map(|(owner, target, mode, prio, wait, lease, session)| Op::Acquire { owner, target, mode, prio, wait, lease, session }),
        2 => (o.clone(), t.clone(), m.clone(), t.clone(), m.clone(), 0u8..10, 0u64..120)
            .prop_map(|(owner, t1, m1, t2, m2, prio, wait)| Op::Multi { owner, t1, m1, t2, m2, prio, wait }),
        4 => (o.clone(), t.clone()).prop_map(|(owner, target)| Op::Release { owner, target }),
        1 => (o.clone(), t.clone(), 1u64..200).prop_map(|(owner, target, lease)| Op::Renew { owner, target, lease }),
        1 => (o.clone(), t.clone(), m).prop_map(|(owner, target, mode)| Op::Downgrade { owner, target, mode }),
        1 => (0usize..8).prop_map(|pick| Op::Cancel { pick }),
        1 => (o.clone(), 20u64..300).prop_map(|(owner, ttl)| Op::Session { owner, ttl }),
        1 => o.clone().prop_map(|owner| Op::Keepalive { owner }),
        1 => o.clone().prop_map(|owner| Op::EndSession { owner }),
        3 => (o, t.clone(), prop_oneof![Just(0u64), 1u64..300], prop::bool::weighted(0.2))
            .prop_map(|(owner, target, wait, stale)| Op::Watch { owner, target, wait, stale }),
        1 => (0usize..4).prop_map(|pick| Op::CancelWatch { pick }),
        1 => t.prop_map(|target| Op::ForceRelease { target }),
    ]
}

type Lk = (Scope, String);

#[derive(Debug, Clone)]
struct MHolder {
    mode: Mode,
    token: FencingToken,
    /// `None` when held under a session.
    lease_until: Option<Millis>,
    session: Option<String>,
}

#[derive(Debug, Clone)]
struct MWaiter {
    owner: String,
    rank: (i128, u64),
    needs: Vec<(Lk, Mode)>,
}

#[derive(Debug, Clone)]
struct MWatch {
    lk: Lk,
    token: FencingToken,
    deadline: Millis,
}

#[derive(Default)]
struct Model {
    now: Millis,
    seq: u64,
    /// (scope, key) -> owner -> holder
    holders: BTreeMap<Lk, BTreeMap<String, MHolder>>,
    waiters: BTreeMap<WaiterId, MWaiter>,
    /// owner -> (session id, expires at, ttl)
    sessions: HashMap<String, (String, Millis, Millis)>,
    max_token: HashMap<Lk, FencingToken>,
    ended: BTreeSet<WaiterId>,
    watches: BTreeMap<WaiterId, MWatch>,
    /// Why each lock the model saw end ended, by (target, token).
    gone: HashMap<(Lk, FencingToken), WatchReason>,
}

fn ancestors(key: &str) -> Vec<String> {
    key.char_indices()
        .skip(1)
        .filter(|(_, c)| *c == '/')
        .map(|(i, _)| key[..i].to_owned())
        .collect()
}

impl Model {
    /// Every (owner, mode) holding on a key, with intention modes from tree locks below it.
    fn effective_holders(&self, lk: &Lk) -> Vec<(String, Mode)> {
        let mut out = Vec::new();
        for ((scope, key), hs) in &self.holders {
            for (owner, h) in hs {
                if (scope, key) == (&lk.0, &lk.1) {
                    out.push((owner.clone(), h.mode));
                } else if *scope == Scope::Tree
                    && lk.0 == Scope::Tree
                    && ancestors(key).contains(&lk.1)
                {
                    out.push((owner.clone(), h.mode.intention()));
                }
            }
        }
        out
    }

    /// What a request of `owner` for `targets` must hold, and whether it is only upgrades.
    fn needs(&self, owner: &str, targets: &[(Lk, Mode)]) -> (Vec<(Lk, Mode)>, bool, bool) {
        let mut needs: Vec<(Lk, Mode)> = Vec::new();
        let mut push = |lk: Lk, m: Mode| {
            if let Some(e) = needs.iter_mut().find(|e| e.0 == lk) {
                e.1 = e.1.join(m);
            } else {
                needs.push((lk, m));
            }
        };
        let mut all_reentrant = true;
        let mut all_upgrades = true;
        for (lk, mode) in targets {
            let held = self.holders.get(lk).and_then(|hs| hs.get(owner)).map(|h| h.mode);
            let m = match held {
                Some(h) if h.covers(*mode) => h,
                Some(h) => {
                    all_reentrant = false;
                    h.join(*mode)
                }
                None => {
                    all_reentrant = false;
                    all_upgrades = false;
                    *mode
                }
            };
            push(lk.clone(), m);
            if lk.0 == Scope::Tree {
                for a in ancestors(&lk.1) {
                    push((Scope::Tree, a), m.intention());
                }
            }
        }
        (needs, all_reentrant, all_upgrades)
    }

    fn blocked(
        &self,
        owner: &str,
        needs: &[(Lk, Mode)],
        rank: (i128, u64),
        skip: Option<WaiterId>,
    ) -> bool {
        needs.iter().any(|(lk, m)| {
            let eff = self.effective_holders(lk);
            // A key the owner already holds in a covering mode never blocks it.
            if eff.iter().any(|(o, hm)| o == owner && hm.covers(*m)) {
                return false;
            }
            eff.iter().any(|(o, hm)| o != owner && !hm.compatible_with(*m))
                || self.waiters.iter().any(|(id, w)| {
                    Some(*id) != skip
                        && w.rank < rank
                        && w.needs.iter().any(|(wl, wm)| {
                            wl == lk && (w.owner == owner || !wm.compatible_with(*m))
                        })
                })
        })
    }

    fn rank(&mut self, prio: u8, upgrades_only: bool) -> (i128, u64) {
        self.seq += 1;
        if upgrades_only {
            (i128::MIN, self.seq)
        } else {
            (i128::from(self.now) - i128::from(prio) * i128::from(AGING_MS), self.seq)
        }
    }

    fn apply_grant(&mut self, g: &Grant) -> Result<(), String> {
        let lk = (g.scope, g.key.clone());
        let prev = self.holders.get(&lk).and_then(|hs| hs.get(&g.owner)).cloned();
        if g.reentrant {
            let p = prev.ok_or_else(|| format!("reentrant grant of {} without a hold", g.key))?;
            if p.token != g.fencing_token {
                return Err(format!("reentrant grant of {} changed the token", g.key));
            }
            return Ok(());
        }
        if let Some(max) = self.max_token.get(&lk) {
            if g.fencing_token <= *max {
                return Err(format!(
                    "token on {} did not rise: {:?} after {:?}",
                    g.key, g.fencing_token, max
                ));
            }
        }
        self.max_token.insert(lk.clone(), g.fencing_token);
        if let Some(p) = prev {
            self.gone.insert((lk.clone(), p.token), WatchReason::Upgraded);
        }
        let lease_until = g.session.is_none().then_some(self.now + g.lease_ms);
        self.holders.entry(lk).or_default().insert(
            g.owner.clone(),
            MHolder {
                mode: g.mode,
                token: g.fencing_token,
                lease_until,
                session: g.session.clone(),
            },
        );
        Ok(())
    }

    fn remove_holder(&mut self, lk: &Lk, owner: &str, why: WatchReason) -> Option<MHolder> {
        let hs = self.holders.get_mut(lk)?;
        let h = hs.remove(owner);
        if hs.is_empty() {
            self.holders.remove(lk);
        }
        if let Some(h) = &h {
            self.gone.insert((lk.clone(), h.token), why);
        }
        h
    }

    /// Whether the lock of target `lk` with `token` is held in the model.
    fn token_held(&self, lk: &Lk, token: FencingToken) -> bool {
        self.holders.get(lk).is_some_and(|hs| hs.values().any(|h| h.token == token))
    }

    fn end_watch(&mut self, id: WaiterId) -> Result<MWatch, String> {
        if !self.ended.insert(id) {
            return Err(format!("watch {id} ended twice"));
        }
        self.watches.remove(&id).ok_or_else(|| format!("event for unknown watch {id}"))
    }

    /// A watch's event, checked against the model after the other events of its call.
    fn apply_watch_event(&mut self, e: &Event) -> Result<(), String> {
        match e {
            Event::WatchFired { watch_id, key, scope, fencing_token, reason, .. } => {
                let w = self.end_watch(*watch_id)?;
                let lk = (*scope, key.clone());
                if w.lk != lk || w.token != *fencing_token {
                    return Err(format!("watch {watch_id} fired for another lock"));
                }
                if self.token_held(&lk, *fencing_token) {
                    return Err(format!("watch {watch_id} fired while {lk:?} still holds"));
                }
                let why = self.gone.get(&(lk, *fencing_token));
                if why != Some(reason) {
                    return Err(format!("watch {watch_id} fired with {reason:?}, model {why:?}"));
                }
            }
            Event::WatchTimedOut { watch_id, .. } => {
                let w = self.end_watch(*watch_id)?;
                if w.deadline > self.now || !self.token_held(&w.lk, w.token) {
                    return Err(format!("watch {watch_id} timed out early or after its lock"));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn end_waiter(&mut self, id: WaiterId) -> Result<MWaiter, String> {
        if !self.ended.insert(id) {
            return Err(format!("waiter {id} ended twice"));
        }
        self.waiters.remove(&id).ok_or_else(|| format!("event for unknown waiter {id}"))
    }

    fn apply_events(&mut self, events: Vec<Event>) -> Result<(), String> {
        // In order, except that a fired watch is checked after the whole batch: a session's
        // expiry reports its released locks after their watches fired.
        let mut fired = Vec::new();
        for e in events {
            match e {
                Event::WatchFired { .. } => fired.push(e),
                Event::WatchTimedOut { .. } => self.apply_watch_event(&e)?,
                e => self.apply_lock_events(vec![e])?,
            }
        }
        for e in &fired {
            self.apply_watch_event(e)?;
        }
        Ok(())
    }

    fn apply_lock_events(&mut self, events: Vec<Event>) -> Result<(), String> {
        for e in events {
            match e {
                Event::Granted { waiter_id, grants, owner, .. } => {
                    let w =
                        self.waiters.get(&waiter_id).cloned().ok_or("grant of unknown waiter")?;
                    if w.owner != owner {
                        return Err("grant for the wrong owner".into());
                    }
                    // Order: nothing earlier and incompatible may still wait.
                    if self.blocked_by_waiters(&w, waiter_id) {
                        return Err(format!("waiter {waiter_id} barged past an earlier waiter"));
                    }
                    self.end_waiter(waiter_id)?;
                    for g in &grants {
                        self.apply_grant(g)?;
                    }
                }
                Event::WaitTimedOut { waiter_id, .. }
                | Event::Cancelled { waiter_id, .. }
                | Event::DeadlockVictim { waiter_id, .. } => {
                    self.end_waiter(waiter_id)?;
                }
                Event::LeaseExpired { key, scope, owner, fencing_token, .. } => {
                    let lk = (scope, key.clone());
                    let h = self
                        .remove_holder(&lk, &owner, WatchReason::Expired)
                        .ok_or("expiry of a lock not held")?;
                    if h.token != fencing_token {
                        return Err("expiry with a wrong token".into());
                    }
                    if h.lease_until.is_none_or(|u| u > self.now) {
                        return Err(format!("lease of {key} expired early"));
                    }
                }
                Event::SessionExpired { session, owner, .. } => {
                    match self.sessions.get(&owner) {
                        Some((id, exp, _)) if *id == session => {
                            if *exp > self.now {
                                return Err("session expired early".into());
                            }
                        }
                        _ => return Err("expiry of an unknown session".into()),
                    }
                    self.sessions.remove(&owner);
                    self.drop_session_locks(&session, WatchReason::SessionExpired);
                }
                Event::WatchFired { .. } | Event::WatchTimedOut { .. } => {}
            }
        }
        Ok(())
    }

    fn blocked_by_waiters(&self, w: &MWaiter, id: WaiterId) -> bool {
        w.needs.iter().any(|(lk, m)| {
            if self.effective_holders(lk).iter().any(|(o, hm)| *o == w.owner && hm.covers(*m)) {
                return false;
            }
            self.waiters.iter().any(|(eid, e)| {
                *eid != id
                    && e.rank < w.rank
                    && e.needs
                        .iter()
                        .any(|(el, em)| el == lk && (e.owner == w.owner || !em.compatible_with(*m)))
            })
        })
    }

    /// The owners `from` waits for directly: holders of another owner in a conflicting mode
    /// and earlier conflicting waiters of another owner, on keys it does not already cover.
    fn waits_for(&self, from: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for w in self.waiters.values().filter(|w| w.owner == from) {
            for (lk, m) in &w.needs {
                let eff = self.effective_holders(lk);
                if eff.iter().any(|(o, hm)| o == from && hm.covers(*m)) {
                    continue;
                }
                for (o, hm) in eff {
                    if o != from && !hm.compatible_with(*m) {
                        out.insert(o);
                    }
                }
                for e in self.waiters.values() {
                    if e.rank < w.rank && e.owner != from {
                        if let Some((_, em)) = e.needs.iter().find(|(el, _)| el == lk) {
                            if !em.compatible_with(*m) {
                                out.insert(e.owner.clone());
                            }
                        }
                    }
                }
            }
        }
        out
    }

    fn reaches(&self, from: &str, to: &str) -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(x) = stack.pop() {
            for y in self.waits_for(&x) {
                if y == to {
                    return true;
                }
                if seen.insert(y.clone()) {
                    stack.push(y);
                }
            }
        }
        false
    }

    /// Whether `a` and `b` lie on one wait-for cycle (`a == b`: on any cycle).
    fn on_cycle(&self, a: &str, b: &str) -> bool {
        if a == b {
            self.reaches(a, a)
        } else {
            self.reaches(a, b) && self.reaches(b, a)
        }
    }

    fn drop_session_locks(&mut self, session: &str, why: WatchReason) {
        for (lk, hs) in &mut self.holders {
            hs.retain(|_, h| {
                let mine = h.session.as_deref() == Some(session);
                if mine {
                    self.gone.insert((lk.clone(), h.token), why);
                }
                !mine
            });
        }
        self.holders.retain(|_, hs| !hs.is_empty());
    }

    fn check(&self, t: &LockTable) -> Result<(), String> {
        t.check_invariants()?;
        // Safety, from the model's own view of intention modes.
        let mut keys: BTreeSet<Lk> = self.holders.keys().cloned().collect();
        for (scope, key) in self.holders.keys() {
            if *scope == Scope::Tree {
                keys.extend(ancestors(key).into_iter().map(|a| (Scope::Tree, a)));
            }
        }
        for lk in &keys {
            let hs = self.effective_holders(lk);
            for (i, (oa, ma)) in hs.iter().enumerate() {
                for (ob, mb) in &hs[i + 1..] {
                    if oa != ob && !ma.compatible_with(*mb) {
                        return Err(format!(
                            "incompatible holders on {lk:?}: {oa} {ma:?} / {ob} {mb:?}"
                        ));
                    }
                }
            }
        }
        // Leases and sessions.
        for (lk, hs) in &self.holders {
            for (o, h) in hs {
                if h.lease_until.is_some_and(|u| u <= self.now) {
                    return Err(format!("{o}'s lock on {lk:?} outlived its lease"));
                }
                if let Some(s) = &h.session {
                    if self.sessions.get(o).is_none_or(|(id, exp, _)| id != s || *exp <= self.now) {
                        return Err(format!("{o}'s lock on {lk:?} outlived its session"));
                    }
                }
            }
        }
        // Agreement with the table.
        let table: BTreeSet<(String, String, String, u64)> = list_all(t)?
            .into_iter()
            .map(|l| (l.key, l.owner, l.mode.short().to_owned(), l.fencing_token.0))
            .collect();
        let model: BTreeSet<(String, String, String, u64)> = self
            .holders
            .iter()
            .flat_map(|((_, k), hs)| {
                hs.iter()
                    .map(move |(o, h)| (k.clone(), o.clone(), h.mode.short().to_owned(), h.token.0))
            })
            .collect();
        if table != model {
            return Err(format!("held locks differ:\n table {table:?}\n model {model:?}"));
        }
        if t.waiting() != self.waiters.len() {
            return Err(format!(
                "waiters differ: table {} model {}",
                t.waiting(),
                self.waiters.len()
            ));
        }
        // Watches: every registered one hangs on a held token.
        if t.watching() != self.watches.len() {
            return Err(format!("watches: table {} model {}", t.watching(), self.watches.len()));
        }
        for (id, w) in &self.watches {
            if !self.token_held(&w.lk, w.token) {
                return Err(format!("watch {id} still registered after its lock ended"));
            }
        }
        // Liveness: everything still waiting is blocked.
        for (id, w) in &self.waiters {
            if !self.blocked(&w.owner, &w.needs, w.rank, Some(*id)) {
                return Err(format!("waiter {id} of {} is grantable but waits", w.owner));
            }
        }
        Ok(())
    }
}

fn config() -> Config {
    common::model_config(AGING_MS)
}

fn lk(i: usize) -> Lk {
    let (s, k) = TARGETS[i % TARGETS.len()];
    (s, k.to_owned())
}

/// Runs one acquire-like call and checks the decision against the model.
fn check_acquire(
    m: &mut Model,
    owner: &str,
    targets: &[(Lk, Mode)],
    prio: u8,
    wait: u64,
    outcome: Result<Result<Vec<Grant>, (WaiterId, u64)>, LockError>,
) -> Result<(), String> {
    let (needs, all_reentrant, upgrades_only) = m.needs(owner, targets);
    let rank = if all_reentrant { (i128::MIN, 0) } else { m.rank(prio, upgrades_only) };
    let blocked = !all_reentrant && m.blocked(owner, &needs, rank, None);
    match outcome {
        Ok(Ok(grants)) => {
            if blocked {
                return Err(format!("{owner} granted {targets:?} though blocked"));
            }
            for g in &grants {
                m.apply_grant(g)?;
            }
        }
        Ok(Err((id, _deadline))) => {
            if !blocked || wait == 0 {
                return Err(format!("{owner} queued for {targets:?} though free or a try-lock"));
            }
            m.waiters.insert(id, MWaiter { owner: owner.to_owned(), rank, needs });
        }
        Err(LockError::Conflict { .. }) => {
            if !blocked || wait != 0 {
                return Err(format!("{owner} refused {targets:?} though free: {blocked} {wait}"));
            }
        }
        Err(LockError::Deadlock { owner: victim, .. }) => {
            if !blocked || wait == 0 {
                return Err("deadlock for a request that did not wait".into());
            }
            // No false positive: with the request queued, its owner is on a wait-for cycle.
            // It stays in the model (as `VICTIM_ID`) until `check_first_victim` has looked at
            // the other victims chosen while it was queued.
            m.waiters.insert(VICTIM_ID, MWaiter { owner: owner.to_owned(), rank, needs });
            if !m.on_cycle(&victim, owner) {
                return Err(format!("deadlock reported for {victim} without a cycle"));
            }
        }
        Err(LockError::SessionNotFound { .. } | LockError::LimitExceeded { .. }) => {}
        Err(e) => return Err(format!("unexpected error {e}")),
    }
    Ok(())
}

/// The first deadlock victim an acquire produced (if any) must share a wait-for cycle with the
/// acquiring owner in the state the table saw (the model before applying this call's events).
/// The events stay in the table for the usual processing.
fn check_first_victim(m: &mut Model, owner: &str, t: &mut LockTable) -> Result<(), String> {
    let events = t.drain_events();
    let victim = events.iter().find_map(|e| match e {
        Event::DeadlockVictim { owner, .. } => Some(owner.clone()),
        _ => None,
    });
    let first_grant = events.iter().position(|e| matches!(e, Event::Granted { .. }));
    let first_victim = events.iter().position(|e| matches!(e, Event::DeadlockVictim { .. }));
    let checkable = match (first_victim, first_grant) {
        (Some(v), Some(g)) => v < g,
        (Some(_), None) => true,
        _ => false,
    };
    if let (Some(v), true) = (victim, checkable) {
        if !m.on_cycle(&v, owner) {
            return Err(format!("{v} chosen as deadlock victim without a cycle through {owner}"));
        }
    }
    m.waiters.remove(&VICTIM_ID);
    PENDING.with(|p| p.borrow_mut().extend(events));
    Ok(())
}

/// Model id of a request that was refused as a deadlock victim (never queued in the table).
const VICTIM_ID: WaiterId = WaiterId::MAX;

thread_local! {
    /// Events taken out of the table by [`check_first_victim`], applied with the next drain.
    static PENDING: std::cell::RefCell<Vec<Event>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn drain_all(t: &mut LockTable) -> Vec<Event> {
    let mut v = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    v.extend(t.drain_events());
    v
}

fn run(ops: Vec<(u64, Op)>) -> Result<(), String> {
    PENDING.with(|p| p.borrow_mut().clear());
    let mut t = LockTable::with_config(1, config()).map_err(|e| e.to_string())?;
    let mut m = Model::default();
    let mut sessions_made = 0;
    for (dt, op) in ops {
        m.now += dt;
        t.advance(m.now);
        m.apply_events(drain_all(&mut t))?;
        m.check(&t)?;
        let now = m.now;
        match op {
            Op::Acquire { owner, target, mode, prio, wait, lease, session } => {
                let owner = OWNERS[owner];
                let (scope, key) = lk(target);
                let session =
                    if session { m.sessions.get(owner).map(|s| s.0.clone()) } else { None };
                let req = AcquireRequest {
                    key: key.clone(),
                    owner: owner.into(),
                    mode: ALL_MODES[mode],
                    scope,
                    priority: Some(PriorityValue::Level(i64::from(prio))),
                    wait_ms: Some(wait),
                    lease_ms: Some(lease),
                    session,
                    request_id: 0,
                    permits: None,
                    limit: None,
                    value: None,
                    lock_delay_ms: None,
                    preempt_ms: None,
                    acquisition: None,
                };
                let out = t.acquire(&req, now).map(|o| match o {
                    AcquireOutcome::Granted(g) => Ok(vec![g]),
                    AcquireOutcome::Queued(q) => Err((q.waiter_id, q.deadline)),
                });
                check_acquire(&mut m, owner, &[((scope, key), ALL_MODES[mode])], prio, wait, out)?;
                check_first_victim(&mut m, owner, &mut t)?;
            }
            Op::Multi { owner, t1, m1, t2, m2, prio, wait } => {
                let owner = OWNERS[owner];
                let items = [(lk(t1), ALL_MODES[m1]), (lk(t2), ALL_MODES[m2])];
                let req = MultiAcquireRequest {
                    owner: owner.into(),
                    locks: items
                        .iter()
                        .map(|((s, k), m)| LockItem { key: k.clone(), mode: *m, scope: *s })
                        .collect(),
                    priority: Some(PriorityValue::Level(i64::from(prio))),
                    wait_ms: Some(wait),
                    ..Default::default()
                };
                let out = t.acquire_many(&req, now).map(|o| match o {
                    MultiOutcome::Granted(g) => Ok(g),
                    MultiOutcome::Queued(q) => Err((q.waiter_id, q.deadline)),
                });
                // The table merges a key named twice; so does the model's `needs`.
                let mut merged: Vec<(Lk, Mode)> = Vec::new();
                for (l, md) in items {
                    if let Some(e) = merged.iter_mut().find(|e| e.0 == l) {
                        e.1 = e.1.join(md);
                    } else {
                        merged.push((l, md));
                    }
                }
                check_acquire(&mut m, owner, &merged, prio, wait, out)?;
                check_first_victim(&mut m, owner, &mut t)?;
            }
            Op::Release { owner, target } => {
                let owner = OWNERS[owner];
                let (scope, key) = lk(target);
                let r = t.release(
                    &ReleaseRequest {
                        key: key.clone(),
                        owner: owner.into(),
                        fencing_token: None,
                        scope,
                        acquisition: None,
                    },
                    now,
                );
                let held = m.remove_holder(&(scope, key), owner, WatchReason::Released);
                if r.is_ok() != held.is_some() {
                    return Err(format!("release by {owner}: table {r:?}, model held {held:?}"));
                }
            }
            Op::Renew { owner, target, lease } => {
                let owner = OWNERS[owner];
                let (scope, key) = lk(target);
                let r = t.renew(
                    &RenewRequest {
                        key: key.clone(),
                        owner: owner.into(),
                        scope,
                        lease_ms: Some(lease),
                        fencing_token: None,
                        acquisition: None,
                    },
                    now,
                );
                let lk = (scope, key);
                let held = m.holders.get(&lk).and_then(|hs| hs.get(owner)).cloned();
                match (r, held) {
                    (Ok(_), Some(h)) => {
                        if let Some(s) = &h.session {
                            if let Some(e) = m.sessions.get_mut(owner).filter(|e| &e.0 == s) {
                                e.1 = now + e.2;
                            }
                        } else if let Some(hm) =
                            m.holders.get_mut(&lk).and_then(|hs| hs.get_mut(owner))
                        {
                            hm.lease_until = Some(now + lease);
                        }
                    }
                    (Err(LockError::NotHeld { .. }), None) => {}
                    (r, h) => return Err(format!("renew: table {r:?}, model {h:?}")),
                }
            }
            Op::Downgrade { owner, target, mode } => {
                let owner = OWNERS[owner];
                let (scope, key) = lk(target);
                let mode = ALL_MODES[mode];
                let r = t.downgrade(
                    &DowngradeRequest {
                        key: key.clone(),
                        owner: owner.into(),
                        mode,
                        scope,
                        fencing_token: None,
                        acquisition: None,
                    },
                    now,
                );
                let lk = (scope, key);
                let held = m.holders.get(&lk).and_then(|hs| hs.get(owner)).map(|h| h.mode);
                match (r, held) {
                    (Ok(g), Some(h)) if h.covers(mode) => {
                        if g.mode != mode {
                            return Err("downgrade answered the wrong mode".into());
                        }
                        if let Some(hm) = m.holders.get_mut(&lk).and_then(|hs| hs.get_mut(owner)) {
                            hm.mode = mode;
                        }
                    }
                    (Err(LockError::InvalidArgument { .. }), Some(h)) if !h.covers(mode) => {}
                    (Err(LockError::NotHeld { .. }), None) => {}
                    (r, h) => return Err(format!("downgrade: table {r:?}, model {h:?}")),
                }
            }
            Op::Cancel { pick } => {
                let ids: Vec<WaiterId> = m.waiters.keys().copied().collect();
                let id = if ids.is_empty() || pick >= ids.len() {
                    1_000_000 + pick as u64
                } else {
                    ids[pick]
                };
                let r = t.cancel(id, now);
                if r.is_ok() != m.waiters.contains_key(&id) {
                    return Err(format!("cancel {id}: {r:?}"));
                }
            }
            Op::Session { owner, ttl } => {
                let owner = OWNERS[owner];
                if !m.sessions.contains_key(owner) {
                    sessions_made += 1;
                    let id = common::sid(sessions_made);
                    let s =
                        t.create_session(owner, Some(ttl), id, now).map_err(|e| e.to_string())?;
                    m.sessions.insert(owner.to_owned(), (s.session, now + ttl, ttl));
                }
            }
            Op::Keepalive { owner } => {
                if let Some((id, _, ttl)) = m.sessions.get(OWNERS[owner]).cloned() {
                    let s = t.keepalive(&id, OWNERS[owner], now).map_err(|e| e.to_string())?;
                    if s.ttl_ms != ttl {
                        return Err("session ttl changed".into());
                    }
                    m.sessions.insert(OWNERS[owner].to_owned(), (id, now + ttl, ttl));
                }
            }
            Op::EndSession { owner } => {
                if let Some((id, _, _)) = m.sessions.remove(OWNERS[owner]) {
                    t.end_session(&id, OWNERS[owner], now).map_err(|e| e.to_string())?;
                    m.drop_session_locks(&id, WatchReason::SessionEnded);
                }
            }
            Op::Watch { owner, target, wait, stale } => {
                watch(&mut m, &mut t, owner, target, wait, stale)?
            }
            Op::CancelWatch { pick } => {
                let id = m.watches.keys().nth(pick).copied().unwrap_or(2_000_000 + pick as u64);
                let r = t.cancel(id, now);
                if r.is_ok() != m.watches.remove(&id).is_some() {
                    return Err(format!("cancel of watch {id}: {r:?}"));
                }
                m.ended.insert(id);
            }
            Op::ForceRelease { target } => {
                let lk = lk(target);
                let req = ForceReleaseRequest { scope: lk.0, ..ForceReleaseRequest::new(&lk.1) };
                let released = t.force_release(&req, now).map_err(|e| e.to_string())?;
                let owners: Vec<String> =
                    m.holders.get(&lk).map(|hs| hs.keys().cloned().collect()).unwrap_or_default();
                if released.len() != owners.len() {
                    return Err(format!("force-release of {lk:?}: {released:?}, model {owners:?}"));
                }
                for o in owners {
                    m.remove_holder(&lk, &o, WatchReason::ForceReleased);
                }
            }
        }
        m.apply_events(drain_all(&mut t))?;
        m.check(&t)?;
    }
    // Completion: far in the future every waiter has ended (granted ones at that time, with a
    // fresh lease) and, once more that far, every lease has run out.
    for _ in 0..2 {
        m.now += 10_000;
        t.advance(m.now);
        m.apply_events(drain_all(&mut t))?;
        m.check(&t)?;
    }
    if std::env::var_os("MODEL_STATS").is_some() {
        use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
        static SEEN: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
        let c = t.stats().counters;
        let n = [c.deadlocks, c.grants_after_wait, c.wait_timeouts, c.upgrades];
        for (s, v) in SEEN.iter().zip(n) {
            s.fetch_add(v, Relaxed);
        }
        eprintln!(
            "model stats so far: deadlocks {} grants_after_wait {} timeouts {} upgrades {}",
            SEEN[0].load(Relaxed),
            SEEN[1].load(Relaxed),
            SEEN[2].load(Relaxed),
            SEEN[3].load(Relaxed)
        );
    }
    if !m.waiters.is_empty() || !m.watches.is_empty() || t.held_locks() != 0 {
        return Err(format!("left over: {} waiters, {} locks", m.waiters.len(), t.held_locks()));
    }
    Ok(())
}

/// A watch on the lock `owner` holds on `target` (with `stale`, or when it holds none, on a
/// token that is not held): registered exactly when the token is held and the watch waits.
fn watch(
    m: &mut Model,
    t: &mut LockTable,
    owner: usize,
    target: usize,
    wait: u64,
    stale: bool,
) -> Result<(), String> {
    let lk = lk(target);
    let held = m.holders.get(&lk).and_then(|hs| hs.get(OWNERS[owner])).map(|h| h.token);
    let token = match held {
        Some(tok) if !stale => tok,
        _ => m.max_token.get(&lk).map_or(FencingToken(1), |x| FencingToken(x.0 + 1)),
    };
    let req = WatchRequest {
        key: lk.1.clone(),
        scope: lk.0,
        fencing_token: token,
        wait_ms: Some(wait),
        request_id: 7,
        revoke: false,
    };
    let held = m.token_held(&lk, token);
    match (t.watch(&req, m.now).map_err(|e| e.to_string())?, held) {
        (WatchOutcome::Answered(a), false) if a.reason == Some(WatchReason::NotHeld) => {}
        (WatchOutcome::Answered(a), true) if wait == 0 && a.reason.is_none() => {}
        (WatchOutcome::Watching(q), true) if wait > 0 => {
            let deadline = m.now + wait.min(config().max_wait_ms);
            if q.deadline != deadline || q.request_id != 7 {
                return Err(format!("watch registered with {q:?}, expected deadline {deadline}"));
            }
            m.watches.insert(q.waiter_id, MWatch { lk, token, deadline });
        }
        (out, held) => {
            return Err(format!("watch of {lk:?} {token:?}: {out:?}, model held {held}"))
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(), max_shrink_iters: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn table_matches_the_reference_model(ops in proptest::collection::vec((0u64..40, op()), 1..40)) {
        if let Err(e) = run(ops) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// Every held lock, paged through three at a time (so the listing's cursors are exercised on
/// every step); the pages must come in strictly increasing (key, scope, owner) order.
fn list_all(t: &LockTable) -> Result<Vec<lock_core::LockInfo>, String> {
    let mut all: Vec<lock_core::LockInfo> = Vec::new();
    let mut after = None;
    loop {
        let page = t.list_page(&ListFilter { after, size: 3, ..Default::default() });
        all.extend(page.locks);
        match page.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    let order: Vec<_> = all.iter().map(|l| (&l.key, l.scope, &l.owner)).collect();
    if order.windows(2).any(|w| w[0] >= w[1]) {
        return Err(format!("listing out of order: {order:?}"));
    }
    Ok(all)
}
