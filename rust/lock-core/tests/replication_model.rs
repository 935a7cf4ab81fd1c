//! Property test of replication: random histories on a primary with change tracking on, its
//! changes taken and applied to a [`Standby`] at random points, and the standby promoted at
//! random points. After every step:
//!
//! - **agreement**: after an apply, the standby's snapshot equals the primary's `export()`:
//!   the same locks (token, scope, key, owner, mode, session), the same sessions, the same
//!   counter, and the same lease and session time left. The standby's clock runs `skew` ms
//!   behind the primary's applies (a transport delay, 0 in some cases): it counts down from
//!   when it applied, so at any instant its leases are at least the primary's;
//! - **gaps and repeats**: a lost delta makes the next apply fail and ask for a full state
//!   (after which the standby agrees again); a repeated delta changes nothing;
//! - **promotion**: `LockTable::import(standby.snapshot(now), epoch + 1, ..)` passes
//!   `check_invariants`, holds exactly the standby's holders and sessions (after a final sync:
//!   exactly the primary's), each with exactly the lease and session time the standby counted
//!   — also when the importer runs with a smaller `max_lease_ms` than the primary did (no event
//!   shortens a lease) — and its next grant's token is larger than every token the primary ever
//!   issued. Promotion happens with and without a final sync (a primary that died with changes
//!   not yet replicated). The promoted table then becomes the primary (tracking on, a new
//!   standby from its full state), and the run goes on.
//!
//! Cases: as `tests/model.rs`: `PROPTEST_CASES`, else 10,000 when `CI=true`, else 20,000.

use crate::common;

use std::collections::HashMap;

use lock_core::{
    AcquireOutcome, AcquireRequest, Config, DowngradeRequest, Event, FencingToken,
    ForceReleaseRequest, LockItem, LockTable, Millis, MultiAcquireRequest, MultiOutcome,
    PartitionDelta, PartitionSnapshot, ReleaseRequest, RenewRequest, Scope, Standby, ALL_MODES,
};
use proptest::prelude::*;

const OWNERS: [&str; 4] = ["o0", "o1", "o2", "o3"];
const TARGETS: [(Scope, &str); 6] = [
    (Scope::Key, "k0"),
    (Scope::Key, "k1"),
    (Scope::Key, "k2"),
    (Scope::Tree, "/a"),
    (Scope::Tree, "/a/b"),
    (Scope::Tree, "/a/c"),
];

#[derive(Debug, Clone)]
enum Op {
    Acquire {
        owner: usize,
        target: usize,
        mode: usize,
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
    Force {
        target: usize,
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
    Advance,
    Sync,
    LoseDelta,
    Repeat,
    /// `synced`: the standby gets the primary's last changes first; `lower_max`: the importer
    /// runs with a smaller `max_lease_ms` than every lease granted so far.
    Promote {
        synced: bool,
        lower_max: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let o = 0..OWNERS.len();
    let t = 0..TARGETS.len();
    let m = 0..ALL_MODES.len();
    prop_oneof![
        6 => (o.clone(), t.clone(), m.clone(), prop_oneof![Just(0u64), 1u64..100], 1u64..200, any::<bool>())
            .prop_map(|(owner, target, mode, wait, lease, session)| Op::Acquire { owner, target, mode, wait, lease, session }),
        2 => (o.clone(), t.clone(), m.clone(), t.clone(), m.clone(), 0u64..100)
            .prop_map(|(owner, t1, m1, t2, m2, wait)| Op::Multi { owner, t1, m1, t2, m2, wait }),
        4 => (o.clone(), t.clone()).prop_map(|(owner, target)| Op::Release { owner, target }),
        2 => (o.clone(), t.clone(), 1u64..200).prop_map(|(owner, target, lease)| Op::Renew { owner, target, lease }),
        1 => (o.clone(), t.clone(), m).prop_map(|(owner, target, mode)| Op::Downgrade { owner, target, mode }),
        1 => t.prop_map(|target| Op::Force { target }),
        1 => (o.clone(), 20u64..300).prop_map(|(owner, ttl)| Op::Session { owner, ttl }),
        1 => o.clone().prop_map(|owner| Op::Keepalive { owner }),
        1 => o.prop_map(|owner| Op::EndSession { owner }),
        1 => Just(Op::Advance),
        5 => Just(Op::Sync),
        1 => Just(Op::LoseDelta),
        1 => Just(Op::Repeat),
        1 => (any::<bool>(), any::<bool>()).prop_map(|(synced, lower_max)| Op::Promote { synced, lower_max }),
    ]
}

fn config() -> Config {
    Config {
        default_lease_ms: 100,
        max_lease_ms: 1_000,
        max_wait_ms: 1_000,
        aging_ms: 40,
        idle_cache: 1,
        ..Default::default()
    }
}

/// What a node whose `locks.lease.max` was lowered below every lease granted runs with.
fn lowered() -> Config {
    Config { default_lease_ms: 5, max_lease_ms: 10, ..config() }
}

/// One history: the primary, its standby, the clock and what the primary issued.
struct Run {
    primary: LockTable,
    standby: Standby,
    now: Millis,
    /// The standby applies this long after the primary's take (its clock runs behind).
    skew: Millis,
    sessions: HashMap<usize, String>,
    /// Sessions created so far: the next one's id is `common::sid` of it.
    sessions_made: u64,
    max_token: FencingToken,
    last_delta: Option<PartitionDelta>,
}

/// A snapshot with its locks in one canonical order (a multi-key grant shares a token, and
/// `export` orders equal tokens by slot).
fn canon(mut p: PartitionSnapshot) -> PartitionSnapshot {
    p.locks.sort_by(|a, b| {
        (a.fencing_token, a.scope, &a.key).cmp(&(b.fencing_token, b.scope, &b.key))
    });
    p
}

impl Run {
    fn new(skew: Millis) -> Run {
        let mut primary = LockTable::with_config(1, config()).expect("table");
        primary.set_change_tracking(true);
        let standby = Standby::from_full(&primary.export_full(), skew);
        Run {
            primary,
            standby,
            now: 0,
            skew,
            sessions: HashMap::new(),
            sessions_made: 0,
            max_token: FencingToken(0),
            last_delta: None,
        }
    }

    fn saw(&mut self, t: FencingToken) {
        self.max_token = self.max_token.max(t);
    }

    /// Drains the primary's events, noting the tokens of grants after a wait.
    fn drain(&mut self) {
        for e in self.primary.drain_events() {
            if let Event::Granted { grants, .. } = e {
                for g in grants {
                    self.saw(g.fencing_token);
                }
            }
        }
    }

    fn acquire(&mut self, r: &AcquireRequest) {
        if let Ok(AcquireOutcome::Granted(g)) = self.primary.acquire(r, self.now) {
            self.saw(g.fencing_token);
        }
    }

    fn session(&self, owner: usize) -> Option<String> {
        self.sessions.get(&owner).cloned()
    }

    fn step(&mut self, op: &Op) -> Result<(), String> {
        let now = self.now;
        let key = |t: usize| (TARGETS[t].0, TARGETS[t].1.to_owned());
        match *op {
            Op::Acquire { owner, target, mode, wait, lease, session } => {
                let (scope, k) = key(target);
                let r = AcquireRequest {
                    mode: ALL_MODES[mode],
                    scope,
                    wait_ms: Some(wait),
                    lease_ms: Some(lease),
                    session: if session { self.session(owner) } else { None },
                    ..AcquireRequest::new(k, OWNERS[owner])
                };
                self.acquire(&r);
            }
            Op::Multi { owner, t1, m1, t2, m2, wait } => {
                let item = |t: usize, m: usize| LockItem {
                    key: TARGETS[t].1.to_owned(),
                    scope: TARGETS[t].0,
                    mode: ALL_MODES[m],
                };
                let r = MultiAcquireRequest {
                    owner: OWNERS[owner].to_owned(),
                    locks: vec![item(t1, m1), item(t2, m2)],
                    wait_ms: Some(wait),
                    ..Default::default()
                };
                if let Ok(MultiOutcome::Granted(gs)) = self.primary.acquire_many(&r, now) {
                    for g in gs {
                        self.saw(g.fencing_token);
                    }
                }
            }
            Op::Release { owner, target } => {
                let (scope, key) = key(target);
                let r = ReleaseRequest {
                    key,
                    scope,
                    owner: OWNERS[owner].into(),
                    ..Default::default()
                };
                let _ = self.primary.release(&r, now);
            }
            Op::Renew { owner, target, lease } => {
                let (scope, key) = key(target);
                let r = RenewRequest {
                    key,
                    scope,
                    owner: OWNERS[owner].into(),
                    lease_ms: Some(lease),
                    ..Default::default()
                };
                let _ = self.primary.renew(&r, now);
            }
            Op::Downgrade { owner, target, mode } => {
                let (scope, key) = key(target);
                let r = DowngradeRequest {
                    key,
                    scope,
                    owner: OWNERS[owner].into(),
                    mode: ALL_MODES[mode],
                    fencing_token: None,
                    acquisition: None,
                };
                let _ = self.primary.downgrade(&r, now);
            }
            Op::Force { target } => {
                let (scope, key) = key(target);
                let req = ForceReleaseRequest { scope, ..ForceReleaseRequest::new(key) };
                let _ = self.primary.force_release(&req, now);
            }
            Op::Session { owner, ttl } => {
                self.sessions_made += 1;
                let id = common::sid(self.sessions_made);
                if let Ok(s) = self.primary.create_session(OWNERS[owner], Some(ttl), id, now) {
                    self.sessions.insert(owner, s.session);
                }
            }
            Op::Keepalive { owner } => {
                if let Some(s) = self.session(owner) {
                    let _ = self.primary.keepalive(&s, OWNERS[owner], now);
                }
            }
            Op::EndSession { owner } => {
                if let Some(s) = self.sessions.remove(&owner) {
                    let _ = self.primary.end_session(&s, OWNERS[owner], now);
                }
            }
            Op::Advance => self.primary.advance(now),
            Op::Sync => self.sync()?,
            Op::LoseDelta => self.lose_delta()?,
            Op::Repeat => self.repeat()?,
            Op::Promote { synced, lower_max } => self.promote(synced, lower_max)?,
        }
        self.drain();
        self.primary.check_invariants()
    }

    /// Takes the primary's changes at `now` and applies them at `now + skew`.
    fn take_and_apply(&mut self) -> Result<(), String> {
        let d = self.primary.take_changes(self.now).map_err(|e| e.to_string())?;
        self.drain();
        self.standby.apply(&d, self.now + self.skew).map_err(|e| format!("apply: {e}"))?;
        self.last_delta = Some(d);
        Ok(())
    }

    fn sync(&mut self) -> Result<(), String> {
        self.take_and_apply()?;
        self.check_agreement()
    }

    /// The standby at its clock agrees with the primary at the take.
    fn check_agreement(&self) -> Result<(), String> {
        let standby = canon(self.standby.snapshot(self.now + self.skew));
        let primary = canon(self.primary.export());
        if standby != primary {
            return Err(format!("standby disagrees:\n standby {standby:?}\n primary {primary:?}"));
        }
        Ok(())
    }

    /// A delta lost in transit: the next one is refused, and a full state brings the standby
    /// back.
    fn lose_delta(&mut self) -> Result<(), String> {
        let lost = self.primary.take_changes(self.now).map_err(|e| e.to_string())?;
        self.drain();
        let d = self.primary.take_changes(self.now).map_err(|e| e.to_string())?;
        let before = self.standby.seq();
        match self.standby.apply(&d, self.now + self.skew) {
            Err(e) if e.to_string().contains("send a full state") && !lost.is_empty() => {}
            Ok(()) if lost.is_empty() => return self.check_agreement(), // nothing was lost
            other => {
                return Err(format!(
                    "after seq {before}, losing {lost:?} then applying gave {other:?}"
                ))
            }
        }
        self.standby = Standby::from_full(&self.primary.export_full(), self.now + self.skew);
        self.last_delta = None;
        self.check_agreement()
    }

    /// The last delta sent again: nothing changes.
    fn repeat(&mut self) -> Result<(), String> {
        let Some(d) = self.last_delta.clone() else { return Ok(()) };
        let before = canon(self.standby.snapshot(self.now + self.skew));
        self.standby.apply(&d, self.now + self.skew).map_err(|e| format!("repeat: {e}"))?;
        if canon(self.standby.snapshot(self.now + self.skew)) != before {
            return Err("a repeated delta changed the standby".into());
        }
        Ok(())
    }

    /// Promotes the standby (synced first with `synced`): it holds what the standby held (all
    /// the primary held when synced), with the same time left on every lease and session even
    /// under a lower `max_lease_ms` (`lower_max`), and issues larger tokens; it then becomes
    /// the primary.
    fn promote(&mut self, synced: bool, lower_max: bool) -> Result<(), String> {
        if synced {
            self.take_and_apply()?;
        }
        let snap = self.standby.snapshot(self.now + self.skew);
        let epoch = self.primary.epoch() + 1;
        let importer = if lower_max { lowered() } else { config() };
        let mut p =
            LockTable::import(&snap, epoch, importer, self.now).map_err(|e| e.to_string())?;
        p.check_invariants()?;
        if held(p.export()) != held(snap.clone()) {
            return Err(format!("promoted {:?} != standby {snap:?}", p.export()));
        }
        if synced && held(p.export()) != held(self.primary.export()) {
            return Err(format!(
                "promoted {:?} != primary {:?}",
                p.export(),
                self.primary.export()
            ));
        }
        if leases(p.export()) != leases(snap.clone()) {
            return Err(format!(
                "a promotion changed leases: {:?} became {:?}",
                leases(snap),
                leases(p.export())
            ));
        }
        self.probe_token(&mut p)?;
        p.set_change_tracking(true);
        self.primary = p;
        self.standby = Standby::from_full(&self.primary.export_full(), self.now + self.skew);
        self.last_delta = None;
        Ok(())
    }

    /// The promoted table's next grant outranks every token issued before.
    fn probe_token(&mut self, p: &mut LockTable) -> Result<(), String> {
        let probe = AcquireRequest::new("fresh-key", "prober");
        match p.acquire(&probe, self.now) {
            Ok(AcquireOutcome::Granted(g)) if g.fencing_token > self.max_token => {
                self.saw(g.fencing_token);
            }
            other => {
                return Err(format!("promoted grant {other:?} not above {:?}", self.max_token))
            }
        }
        p.release(
            &ReleaseRequest {
                key: "fresh-key".into(),
                owner: "prober".into(),
                ..Default::default()
            },
            self.now,
        )
        .map_err(|e| e.to_string())?;
        p.drain_events();
        Ok(())
    }
}

type HeldLock = (FencingToken, Scope, String, String, lock_core::Mode, Option<String>);

/// Who holds what in a snapshot, in one order: locks and sessions by identity.
fn held(s: PartitionSnapshot) -> (Vec<HeldLock>, Vec<(String, String)>) {
    let s = canon(s);
    let locks = s
        .locks
        .into_iter()
        .map(|l| (l.fencing_token, l.scope, l.key, l.owner, l.mode, l.session))
        .collect();
    let sessions = s.sessions.into_iter().map(|s| (s.session, s.owner)).collect();
    (locks, sessions)
}

/// Every lock's and session's time left in a snapshot (at least 1 ms: an import keeps a lease
/// or session that ran out at this instant for the 1 ms the table counts in).
fn leases(s: PartitionSnapshot) -> (Vec<Millis>, Vec<Millis>) {
    let s = canon(s);
    (
        s.locks.iter().map(|l| l.lease_ms.max(1)).collect(),
        s.sessions.iter().map(|s| s.expires_in_ms.max(1)).collect(),
    )
}

fn run(skew: Millis, ops: Vec<(u64, Op)>) -> Result<(), String> {
    let mut r = Run::new(skew);
    for (dt, op) in ops {
        r.now += dt;
        r.step(&op).map_err(|e| format!("after {op:?} at {}: {e}", r.now))?;
    }
    r.sync()?;
    r.promote(true, false)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(), max_shrink_iters: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn a_standby_follows_its_primary_and_takes_over(
        skew in prop_oneof![Just(0u64), 1u64..50],
        ops in proptest::collection::vec((0u64..40, op()), 1..40),
    ) {
        if let Err(e) = run(skew, ops) {
            prop_assert!(false, "{}", e);
        }
    }
}
