//! Property test of counting semaphores: random histories of acquires (with mixed permits,
//! priorities, waits, leases, sessions and now and then a wrong limit), releases, renewals,
//! session ends and changes of the limit while in use, with a random clock, checked against a small reference model after every
//! millisecond (docs/LOCK_CORE.md, "Semaphores").
//!
//! The model sees only answers and events. It checks:
//!
//! - **limit**: no grant takes the permits held over the limit (a lowered limit may leave more
//!   held than it allows: nothing is revoked, and grants wait until the permits fit again);
//!   a limit change is refused exactly when the model expects (unused, below a waiter's permits);
//! - **agreement**: the table's holders (owner, permits, token) and limit equal the model's;
//! - **decisions**: an acquire is granted at once exactly when its permits fit and no waiter is
//!   ranked ahead of it; refused with the error the model expects (limit mismatch, permits,
//!   owner already waiting); reentrant with the held token when the owner asks again;
//! - **FIFO**: every hand-off goes to the first waiter in queue order, and only when it fits;
//! - **liveness**: after every step the first waiter does not fit (or it would have been
//!   granted);
//! - **permits back**: a lease or session that ends gives its permits back at its deadline,
//!   never earlier, never later;
//! - **tokens**: strictly increasing per semaphore.
//!
//! The clock moves one millisecond at a time, so each batch of events belongs to one instant; the
//! model follows the events in the order the table made them. Cases as the lock model: `PROPTEST_CASES`, else 10,000 when `CI=true`,
//! else 20,000.

use crate::common;

use std::collections::BTreeMap;

use lock_core::{
    AcquireOutcome, AcquireRequest, Config, Event, FencingToken, KeyInfoRequest, LockError,
    LockTable, Millis, PriorityValue, ReleaseRequest, RenewRequest, Scope, SessionId,
};
use proptest::prelude::*;

const AGING_MS: u64 = 40;
const OWNERS: [&str; 5] = ["o0", "o1", "o2", "o3", "o4"];
/// The semaphores and the limit each is usually asked with.
const SEMS: [(&str, u32); 2] = [("s0", 3), ("s1", 5)];

#[derive(Debug, Clone)]
enum Op {
    Acquire {
        owner: usize,
        sem: usize,
        permits: u32,
        prio: u8,
        wait: u64,
        lease: u64,
        session: bool,
        odd_limit: bool,
        /// A new acquisition id instead of the owner's usual one: while the owner holds, a
        /// new grant under a newer token, not its grant back (docs/API.md, "Acquisitions").
        fresh: bool,
    },
    Release {
        owner: usize,
        sem: usize,
    },
    Renew {
        owner: usize,
        sem: usize,
        lease: u64,
    },
    Session {
        owner: usize,
        ttl: u64,
    },
    EndSession {
        owner: usize,
    },
    ChangeLimit {
        sem: usize,
        limit: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let o = 0..OWNERS.len();
    let s = 0..SEMS.len();
    let wait = prop_oneof![1 => Just(0u64), 3 => (0u64..60).prop_map(|w| 2 * w + 1)];
    let lease = (1u64..50).prop_map(|l| 4 * l);
    prop_oneof![
        8 => (o.clone(), s.clone(), 1u32..5, 0u8..10, wait, lease.clone(), any::<bool>(), prop::bool::weighted(0.1), prop::bool::weighted(0.2))
            .prop_map(|(owner, sem, permits, prio, wait, lease, session, odd_limit, fresh)| Op::Acquire { owner, sem, permits, prio, wait, lease, session, odd_limit, fresh }),
        4 => (o.clone(), s.clone()).prop_map(|(owner, sem)| Op::Release { owner, sem }),
        1 => (o.clone(), s.clone(), lease).prop_map(|(owner, sem, lease)| Op::Renew { owner, sem, lease }),
        1 => (o.clone(), (5u64..60).prop_map(|t| 4 * t + 2)).prop_map(|(owner, ttl)| Op::Session { owner, ttl }),
        1 => o.prop_map(|owner| Op::EndSession { owner }),
        1 => (s, 1u32..7).prop_map(|(sem, limit)| Op::ChangeLimit { sem, limit }),
    ]
}

#[derive(Debug, Clone)]
struct Holder {
    owner: String,
    permits: u32,
    token: FencingToken,
    /// `None` under a session.
    lease_until: Option<Millis>,
    session: Option<String>,
    /// The acquisition id it was granted to: asked again with it, the grant comes back.
    acquisition: String,
}

#[derive(Debug, Clone)]
struct Waiter {
    sem: String,
    owner: String,
    permits: u32,
    rank: (i128, u64),
    deadline: Millis,
    lease: Millis,
    session: Option<String>,
    acquisition: String,
}

#[derive(Debug, Default)]
struct Model {
    now: Millis,
    seq: u64,
    holders: BTreeMap<String, Vec<Holder>>,
    limits: BTreeMap<String, u32>,
    waiters: BTreeMap<u64, Waiter>,
    /// Per owner: (id, expires_at).
    sessions: BTreeMap<String, (String, Millis)>,
    last_token: BTreeMap<String, FencingToken>,
    grants_after_wait: u64,
}

impl Model {
    fn held(&self, sem: &str) -> u32 {
        self.holders.get(sem).map_or(0, |h| h.iter().map(|h| h.permits).sum())
    }

    fn in_use(&self, sem: &str) -> bool {
        self.holders.get(sem).is_some_and(|h| !h.is_empty())
            || self.waiters.values().any(|w| w.sem == sem)
    }

    fn head(&self, sem: &str) -> Option<(u64, &Waiter)> {
        self.waiters
            .iter()
            .filter(|(_, w)| w.sem == sem)
            .min_by_key(|(_, w)| w.rank)
            .map(|(i, w)| (*i, w))
    }

    fn fits(&self, sem: &str, permits: u32) -> bool {
        self.held(sem) + permits <= self.limits[sem]
    }

    fn new_token(&mut self, sem: &str, token: FencingToken) -> Result<(), String> {
        if self.last_token.get(sem).is_some_and(|t| token <= *t) {
            return Err(format!(
                "token {token:?} on {sem} is not above {:?}",
                self.last_token[sem]
            ));
        }
        self.last_token.insert(sem.to_owned(), token);
        Ok(())
    }

    /// Whether a session is over (ended, or expiring at or before now).
    fn session_dead(&self, id: &str) -> bool {
        !self.sessions.values().any(|(s, until)| s == id && *until > self.now)
    }

    /// Drops the holders of a session that is over.
    fn drop_session_holders(&mut self, id: &str) {
        for hs in self.holders.values_mut() {
            hs.retain(|h| h.session.as_deref() != Some(id));
        }
    }

    /// Each event must be one the model allows at this millisecond; the table reports them in
    /// the order it made them, so the model follows them one by one.
    fn apply_events(&mut self, events: Vec<Event>) -> Result<(), String> {
        let now = self.now;
        for e in events {
            match e {
                Event::LeaseExpired { key, owner, .. } => {
                    let hs = self.holders.entry(key.clone()).or_default();
                    let i = hs
                        .iter()
                        .position(|h| h.owner == owner && h.lease_until.is_some_and(|u| u <= now))
                        .ok_or_else(|| {
                            format!("at {now}: lease of {owner} on {key} ended early")
                        })?;
                    hs.remove(i);
                }
                Event::SessionExpired { session, .. } => {
                    let owner = self
                        .sessions
                        .iter()
                        .find(|(_, (s, until))| *s == session && *until <= now)
                        .map(|(o, _)| o.clone())
                        .ok_or_else(|| format!("at {now}: session {session} expired early"))?;
                    self.sessions.remove(&owner);
                    self.drop_session_holders(&session);
                }
                Event::WaitTimedOut { waiter_id, .. } => {
                    let w = self.waiters.remove(&waiter_id).ok_or("unknown waiter timed out")?;
                    if w.deadline > now {
                        return Err(format!("at {now}: waiter {waiter_id} timed out early"));
                    }
                }
                Event::Cancelled { waiter_id, .. } => {
                    let w = self.waiters.remove(&waiter_id).ok_or("unknown waiter cancelled")?;
                    if !w.session.as_deref().is_some_and(|s| self.session_dead(s)) {
                        return Err(format!(
                            "at {now}: waiter {waiter_id} cancelled, session live"
                        ));
                    }
                }
                Event::Granted { waiter_id, grants, .. } => {
                    self.handed_off(waiter_id, &grants[0])?
                }
                other => return Err(format!("unexpected event {other:?}")),
            }
        }
        self.nothing_due()
    }

    /// Every deadline up to now has been reported.
    fn nothing_due(&self) -> Result<(), String> {
        let now = self.now;
        let late_lease =
            self.holders.values().flatten().any(|h| h.lease_until.is_some_and(|u| u <= now));
        let late_session = self.sessions.values().any(|(_, until)| *until <= now);
        let late_wait = self.waiters.values().any(|w| {
            w.deadline <= now || w.session.as_deref().is_some_and(|s| self.session_dead(s))
        });
        if late_lease || late_session || late_wait {
            return Err(format!(
                "at {now}: a deadline passed unreported (lease {late_lease}, session {late_session}, wait {late_wait})"
            ));
        }
        Ok(())
    }

    /// The permits held on `sem` by holders still alive (a session expiring now lets its
    /// permits go before its expiry event is reported).
    fn live_held(&self, sem: &str) -> u32 {
        self.holders.get(sem).map_or(0, |hs| {
            hs.iter()
                .filter(|h| !h.session.as_deref().is_some_and(|s| self.session_dead(s)))
                .map(|h| h.permits)
                .sum()
        })
    }

    /// FIFO: a hand-off goes to the first waiter, and only when its permits fit.
    fn handed_off(&mut self, id: u64, g: &lock_core::Grant) -> Result<(), String> {
        let sem = g.key.clone();
        let head = self.head(&sem).map(|(i, _)| i);
        if head != Some(id) {
            return Err(format!("waiter {id} granted on {sem}, but the first waiter is {head:?}"));
        }
        let w = self.waiters.remove(&id).ok_or("granted an unknown waiter")?;
        if self.live_held(&sem) + w.permits > self.limits[&sem] {
            return Err(format!(
                "waiter {id} granted {} permits on {sem} that do not fit",
                w.permits
            ));
        }
        if g.permits != Some(w.permits) || g.limit != Some(self.limits[&sem]) {
            return Err(format!("grant {g:?} does not show the waiter's permits and limit"));
        }
        self.new_token(&sem, g.fencing_token)?;
        self.grants_after_wait += 1;
        let lease_until = w.session.is_none().then_some(self.now + w.lease);
        self.holders.entry(sem).or_default().push(Holder {
            owner: w.owner,
            permits: w.permits,
            token: g.fencing_token,
            lease_until,
            session: w.session,
            acquisition: w.acquisition,
        });
        Ok(())
    }

    /// Agreement, the limit and liveness, against the table.
    fn check(&self, t: &LockTable) -> Result<(), String> {
        t.check_invariants()?;
        for (sem, _) in SEMS {
            let info = t
                .key_info(
                    &KeyInfoRequest { scope: Scope::Semaphore, ..KeyInfoRequest::new(sem) },
                    self.now,
                )
                .map_err(|e| e.to_string())?;
            let mut got: Vec<(String, u32, FencingToken)> = info
                .holders
                .iter()
                .map(|h| (h.owner.clone(), h.permits.unwrap_or(0), h.fencing_token))
                .collect();
            let mut want: Vec<(String, u32, FencingToken)> = self
                .holders
                .get(sem)
                .map(|hs| hs.iter().map(|h| (h.owner.clone(), h.permits, h.token)).collect())
                .unwrap_or_default();
            got.sort();
            want.sort();
            if got != want {
                return Err(format!("at {}: {sem} holders {got:?}, model {want:?}", self.now));
            }
            if self.in_use(sem) && info.limit != Some(self.limits[sem]) {
                return Err(format!("{sem}: limit {:?}, model {}", info.limit, self.limits[sem]));
            }
            if info.waiters.len() != self.waiters.values().filter(|w| w.sem == sem).count() {
                return Err(format!("{sem}: {} waiters, model disagrees", info.waiters.len()));
            }
            if let Some((id, w)) = self.head(sem) {
                if self.fits(sem, w.permits) {
                    return Err(format!("{sem}: first waiter {id} fits but waits"));
                }
            }
        }
        Ok(())
    }
}

fn config() -> Config {
    common::model_config(AGING_MS)
}

/// A held semaphore acquired again under a new acquisition id: granted at once under a newer
/// token, with a fresh lease unless the grant is held under a session (which it keeps).
fn supersede(
    m: &mut Model,
    sem: &str,
    owner: &str,
    (lease, id): (u64, String),
    out: Result<AcquireOutcome, LockError>,
) -> Result<(), String> {
    let Ok(AcquireOutcome::Granted(g)) = out else {
        return Err(format!("expected a new grant of a held semaphore, got {out:?}"));
    };
    if g.reentrant {
        return Err(format!("a new acquisition got the old grant back: {g:?}"));
    }
    m.new_token(sem, g.fencing_token)?;
    let now = m.now;
    let h = m.holders.get_mut(sem).and_then(|hs| hs.iter_mut().find(|h| h.owner == owner));
    let h = h.ok_or("no holder to supersede")?;
    h.token = g.fencing_token;
    h.acquisition = id;
    if h.session.is_none() {
        h.lease_until = Some(now + lease);
    }
    Ok(())
}

/// One acquire, its answer checked against the model's decision.
fn acquire(m: &mut Model, t: &mut LockTable, op: &Op) -> Result<(), String> {
    let Op::Acquire { owner, sem, permits, prio, wait, lease, session, odd_limit, fresh } = *op
    else {
        return Ok(());
    };
    let (owner, (sem, base)) = (OWNERS[owner], SEMS[sem]);
    let limit = if odd_limit { base + 1 } else { base };
    let session = if session { m.sessions.get(owner).map(|s| s.0.clone()) } else { None };
    let id = if fresh { format!("{owner}-{}", m.seq) } else { owner.to_owned() };
    let req = AcquireRequest {
        key: sem.into(),
        owner: owner.into(),
        scope: Scope::Semaphore,
        priority: Some(PriorityValue::Level(i64::from(prio))),
        wait_ms: Some(wait),
        lease_ms: Some(lease),
        session: session.clone(),
        permits: Some(permits),
        limit: Some(limit),
        acquisition: Some(id.clone()),
        ..Default::default()
    };
    let out = t.acquire(&req, m.now);
    if permits > limit {
        return expect_invalid(out, "permits");
    }
    if m.in_use(sem) && m.limits[sem] != limit {
        return match out {
            Err(LockError::LimitMismatch { limit: l, .. }) if l == m.limits[sem] => Ok(()),
            other => Err(format!("expected a limit mismatch, got {other:?}")),
        };
    }
    if !m.in_use(sem) {
        m.limits.insert(sem.to_owned(), limit);
    }
    if let Some(h) = m.holders.get(sem).and_then(|hs| hs.iter().find(|h| h.owner == owner)) {
        if h.permits != permits {
            return expect_invalid(out, "permits");
        }
        if h.acquisition != id {
            return supersede(m, sem, owner, (lease, id), out);
        }
        return match out {
            Ok(AcquireOutcome::Granted(g)) if g.reentrant && g.fencing_token == h.token => Ok(()),
            other => Err(format!("expected a reentrant grant of {:?}, got {other:?}", h.token)),
        };
    }
    if m.waiters.values().any(|w| w.sem == sem && w.owner == owner) {
        return expect_invalid(out, "owner");
    }
    let rank = (i128::from(m.now) - i128::from(prio) * i128::from(AGING_MS), m.seq);
    m.seq += 1;
    let ahead = m.waiters.values().any(|w| w.sem == sem && w.rank.0 <= rank.0);
    let free = m.fits(sem, permits) && !ahead;
    match out {
        Ok(AcquireOutcome::Granted(g)) if free && !g.reentrant => {
            if g.permits != Some(permits) || g.limit != Some(limit) {
                return Err(format!("grant {g:?} does not show permits {permits} of {limit}"));
            }
            m.new_token(sem, g.fencing_token)?;
            let lease_until = session.is_none().then_some(m.now + lease);
            m.holders.entry(sem.to_owned()).or_default().push(Holder {
                owner: owner.into(),
                permits,
                token: g.fencing_token,
                lease_until,
                session,
                acquisition: id,
            });
            Ok(())
        }
        Err(LockError::Conflict { .. }) if !free && wait == 0 => Ok(()),
        Ok(AcquireOutcome::Queued(q)) if !free && wait > 0 => {
            m.waiters.insert(
                q.waiter_id,
                Waiter {
                    sem: sem.into(),
                    owner: owner.into(),
                    permits,
                    rank,
                    deadline: m.now + wait,
                    lease,
                    session,
                    acquisition: id,
                },
            );
            Ok(())
        }
        other => Err(format!("acquire {req:?}: free={free}, got {other:?}")),
    }
}

fn expect_invalid<T: std::fmt::Debug>(
    out: Result<T, LockError>,
    field: &str,
) -> Result<(), String> {
    match out {
        Err(LockError::InvalidArgument { field: f, .. }) if f == field => Ok(()),
        other => Err(format!("expected a 400 naming [{field}], got {other:?}")),
    }
}

/// A release, renewal or session call; the permits it frees go to waiters as events.
fn other_op(m: &mut Model, t: &mut LockTable, op: &Op, made: &mut u128) -> Result<(), String> {
    let now = m.now;
    match *op {
        Op::Acquire { .. } => acquire(m, t, op)?,
        Op::Release { owner, sem } => {
            let (owner, sem) = (OWNERS[owner], SEMS[sem].0);
            let req = ReleaseRequest {
                key: sem.into(),
                owner: owner.into(),
                scope: Scope::Semaphore,
                ..Default::default()
            };
            let out = t.release(&req, now);
            let hs = m.holders.entry(sem.to_owned()).or_default();
            match (hs.iter().position(|h| h.owner == owner), out) {
                (Some(i), Ok(_)) => {
                    hs.remove(i);
                }
                (None, Err(LockError::NotHeld { .. })) => {}
                (h, out) => return Err(format!("release by {owner}: model {h:?}, got {out:?}")),
            }
        }
        Op::Renew { owner, sem, lease } => {
            let (owner, sem) = (OWNERS[owner], SEMS[sem].0);
            let hs = m.holders.entry(sem.to_owned()).or_default();
            let Some(h) = hs.iter_mut().find(|h| h.owner == owner && h.session.is_none()) else {
                return Ok(());
            };
            let req = RenewRequest {
                key: sem.into(),
                owner: owner.into(),
                scope: Scope::Semaphore,
                lease_ms: Some(lease),
                ..Default::default()
            };
            t.renew(&req, now).map_err(|e| format!("renew: {e}"))?;
            h.lease_until = Some(now + lease);
        }
        Op::Session { owner, ttl } => {
            let owner = OWNERS[owner];
            if m.sessions.contains_key(owner) {
                return Ok(());
            }
            *made += 1;
            let info = t
                .create_session(owner, Some(ttl), SessionId::from_u128(*made), now)
                .map_err(|e| e.to_string())?;
            m.sessions.insert(owner.into(), (info.session, now + ttl));
        }
        Op::EndSession { owner } => {
            let owner = OWNERS[owner];
            let Some((id, _)) = m.sessions.remove(owner) else { return Ok(()) };
            // Its holders go in the answer, its waiters with events.
            m.drop_session_holders(&id);
            t.end_session(&id, owner, now).map_err(|e| e.to_string())?;
        }
        Op::ChangeLimit { sem, limit } => change_limit(m, t, SEMS[sem].0, limit)?,
    }
    m.apply_events(t.drain_events())
}

/// A change of the limit: refused on an unused semaphore or below a waiter's permits, else in
/// force at once (the waiters it lets in come as events).
fn change_limit(m: &mut Model, t: &mut LockTable, sem: &str, limit: u32) -> Result<(), String> {
    let out = t.change_semaphore_limit(sem, limit, true, m.now);
    if !m.in_use(sem) {
        return match out {
            Err(LockError::NotHeld { .. }) => Ok(()),
            other => Err(format!("limit of unused {sem}: expected not held, got {other:?}")),
        };
    }
    if m.waiters.values().any(|w| w.sem == sem && w.permits > limit) {
        return expect_invalid(out, "limit");
    }
    match out {
        Ok(c) if c.previous == m.limits[sem] && c.held == m.held(sem) && c.limit == limit => {
            m.limits.insert(sem.to_owned(), limit);
            Ok(())
        }
        other => Err(format!("limit {limit} of {sem} (model {}): got {other:?}", m.limits[sem])),
    }
}

fn run(ops: Vec<(u64, Op)>) -> Result<(), String> {
    let mut t = LockTable::with_config(1, config()).map_err(|e| e.to_string())?;
    let mut m = Model::default();
    let mut made = 0u128;
    for (dt, op) in ops {
        // Every millisecond up to the operation: deadlines fire exactly when the model says.
        for _ in 0..4 * dt {
            m.now += 1;
            t.advance(m.now);
            m.apply_events(t.drain_events())?;
            m.check(&t)?;
        }
        other_op(&mut m, &mut t, &op, &mut made)?;
        m.check(&t)?;
    }
    // Let every lease, session and wait run out: all permits come back.
    for _ in 0..2_000 {
        m.now += 1;
        t.advance(m.now);
        m.apply_events(t.drain_events())?;
    }
    m.check(&t)?;
    if std::env::var_os("MODEL_STATS").is_some() {
        print_stats(&t);
    }
    if t.held_locks() != 0 || !m.waiters.is_empty() {
        return Err(format!("left over: {} locks, {} waiters", t.held_locks(), m.waiters.len()));
    }
    Ok(())
}

/// `MODEL_STATS=1`: running totals of what the histories exercised, to see that grants after a
/// wait, timeouts, lease and session expiries, conflicts and reentrant grants all happen.
fn print_stats(t: &LockTable) {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static SEEN: [AtomicU64; 7] = [const { AtomicU64::new(0) }; 7];
    let c = t.stats().counters;
    let n = [
        c.immediate_grants,
        c.grants_after_wait,
        c.wait_timeouts,
        c.lease_expiries,
        c.sessions_expired,
        c.conflicts,
        c.reentrant_grants,
    ];
    for (s, v) in SEEN.iter().zip(n) {
        s.fetch_add(v, Relaxed);
    }
    let v: Vec<u64> = SEEN.iter().map(|s| s.load(Relaxed)).collect();
    eprintln!(
        "semaphore model so far: grants {} after_wait {} timeouts {} lease_expiries {} \
         session_expiries {} conflicts {} reentrant {}",
        v[0], v[1], v[2], v[3], v[4], v[5], v[6]
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(), max_shrink_iters: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn semaphores_match_the_reference_model(ops in proptest::collection::vec((0u64..10, op()), 1..40)) {
        if let Err(e) = run(ops) {
            prop_assert!(false, "{}", e);
        }
    }
}
