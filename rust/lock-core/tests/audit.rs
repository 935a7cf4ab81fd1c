//! The lock history (docs/LOCK_CORE.md "Lock history"): off by default, one record per event
//! with the fields the history document shows, bounded with the overflow counted.

use lock_core::{
    AcquireOutcome, AcquireRequest, AuditEvent, AuditRecord, Config, FencingToken,
    ForceReleaseRequest, LockTable, Mode, PriorityValue, ReleaseRequest, RenewRequest, Scope,
    SessionId,
};

fn table(capacity: usize) -> LockTable {
    LockTable::with_config(1, Config { audit_capacity: capacity, ..Config::default() })
        .expect("table")
}

fn acquire(key: &str, owner: &str) -> AcquireRequest {
    AcquireRequest { lease_ms: Some(10_000), ..AcquireRequest::new(key, owner) }
}

fn waiting(key: &str, owner: &str, priority: i64) -> AcquireRequest {
    AcquireRequest {
        wait_ms: Some(60_000),
        priority: Some(PriorityValue::Level(priority)),
        ..acquire(key, owner)
    }
}

fn release(key: &str, owner: &str) -> ReleaseRequest {
    ReleaseRequest {
        key: key.into(),
        owner: owner.into(),
        fencing_token: None,
        scope: Scope::Key,
        acquisition: None,
    }
}

fn token(t: &mut LockTable, req: &AcquireRequest, now: u64) -> u64 {
    match t.acquire(req, now).expect("acquire") {
        AcquireOutcome::Granted(g) => g.fencing_token.0,
        AcquireOutcome::Queued(_) => panic!("queued"),
    }
}

fn only(records: &[AuditRecord], event: AuditEvent) -> &AuditRecord {
    let found: Vec<&AuditRecord> = records.iter().filter(|r| r.event == event).collect();
    assert_eq!(found.len(), 1, "one {event:?} in {records:?}");
    found[0]
}

#[test]
fn off_by_default_nothing_is_recorded() {
    let mut t = LockTable::new(1).expect("table");
    token(&mut t, &acquire("k", "a"), 0);
    t.release(&release("k", "a"), 5).expect("release");
    let why = ForceReleaseRequest { reason: Some("why".into()), ..ForceReleaseRequest::new("k") };
    t.force_release(&why, 6).expect("nothing held");
    assert!(t.drain_audit(usize::MAX).is_empty());
    let s = t.stats().audit;
    assert_eq!((s.recorded, s.dropped, s.buffered), (0, 0, 0));
}

#[test]
fn a_grant_and_a_release_are_recorded_with_token_and_times() {
    let mut t = table(16);
    let first = AcquireRequest { acquisition: Some("a-1".into()), ..acquire("k", "a") };
    let tok = token(&mut t, &first, 100);
    token(&mut t, &first, 110); // the same acquisition again: its grant back, no new grant
    t.release(&release("k", "a"), 350).expect("release");
    let r = t.drain_audit(usize::MAX);
    assert_eq!(r.len(), 2, "{r:?}");
    let g = only(&r, AuditEvent::Granted);
    assert_eq!((g.at, &*g.key, &*g.owner, g.token), (100, "k", "a", tok));
    assert_eq!(
        (g.scope, g.mode, g.waited_ms, g.held_ms),
        (Scope::Key, Some(Mode::Exclusive), None, None)
    );
    let rel = only(&r, AuditEvent::Released);
    assert_eq!(
        (rel.at, rel.token, rel.held_ms, rel.reason.as_deref()),
        (350, tok, Some(250), None)
    );
    assert_eq!(AuditEvent::Released.name(), "released");
    let s = t.stats().audit;
    assert_eq!((s.recorded, s.dropped, s.buffered), (2, 0, 0));
}

#[test]
fn a_waiter_granted_after_a_wait_carries_waited_ms() {
    let mut t = table(16);
    token(&mut t, &acquire("k", "a"), 0);
    assert!(matches!(
        t.acquire(&waiting("k", "b", 7), 10).expect("queue"),
        AcquireOutcome::Queued(_)
    ));
    t.release(&release("k", "a"), 40).expect("release");
    let r = t.drain_audit(usize::MAX);
    let granted: Vec<&AuditRecord> = r.iter().filter(|r| r.event == AuditEvent::Granted).collect();
    assert_eq!(granted.len(), 2, "{r:?}");
    assert_eq!((&*granted[1].owner, granted[1].waited_ms, granted[1].at), ("b", Some(30), 40));
}

#[test]
fn expiries_and_force_releases_say_why() {
    let mut t = table(16);
    let tok = token(&mut t, &acquire("k", "a"), 0);
    t.advance(10_000);
    let r = t.drain_audit(usize::MAX);
    let e = only(&r, AuditEvent::Expired);
    assert_eq!(
        (e.token, e.held_ms, e.reason.as_deref()),
        (tok, Some(10_000), Some("lease_expired"))
    );

    let tok = token(&mut t, &acquire("k", "b"), 10_001);
    let stuck =
        ForceReleaseRequest { reason: Some("stuck job".into()), ..ForceReleaseRequest::new("k") };
    t.force_release(&stuck, 10_003).expect("force");
    token(&mut t, &acquire("k", "c"), 10_004);
    t.force_release(&ForceReleaseRequest::new("k"), 10_005).expect("force without a reason");
    let r = t.drain_audit(usize::MAX);
    let forced: Vec<&AuditRecord> =
        r.iter().filter(|r| r.event == AuditEvent::ForceReleased).collect();
    assert_eq!(forced.len(), 2, "{r:?}");
    assert_eq!((&*forced[0].owner, forced[0].token), ("b", tok));
    assert_eq!((forced[0].reason.as_deref(), forced[0].held_ms), (Some("stuck job"), Some(2)));
    assert_eq!(forced[1].reason, None, "the reason is not kept past its call");
}

#[test]
fn a_session_expiry_ends_its_locks_as_expired() {
    let mut t = table(16);
    let s = t.create_session("a", Some(1_000), SessionId::from_u128(7), 0).expect("session");
    let req = AcquireRequest { session: Some(s.session.clone()), ..AcquireRequest::new("k", "a") };
    token(&mut t, &req, 0);
    t.advance(1_000);
    let r = t.drain_audit(usize::MAX);
    assert_eq!(only(&r, AuditEvent::Expired).reason.as_deref(), Some("session_expired"), "{r:?}");
}

#[test]
fn ending_a_session_releases_its_locks_as_released_by_the_session() {
    let mut t = table(16);
    let s = t.create_session("a", Some(60_000), SessionId::from_u128(8), 0).expect("session");
    let req = AcquireRequest { session: Some(s.session.clone()), ..AcquireRequest::new("k", "a") };
    let tok = token(&mut t, &req, 0);
    t.end_session(&s.session, "a", 25).expect("end");
    let r = t.drain_audit(usize::MAX);
    let rel = only(&r, AuditEvent::Released);
    assert_eq!(
        (rel.token, rel.held_ms, rel.reason.as_deref()),
        (tok, Some(25), Some("session_ended"))
    );
}

#[test]
fn a_deadlock_victim_and_a_refused_renewal_are_recorded() {
    let mut t = table(16);
    token(&mut t, &acquire("k1", "a"), 0);
    token(&mut t, &acquire("k2", "b"), 0);
    assert!(matches!(
        t.acquire(&waiting("k2", "a", 0), 5).expect("queue"),
        AcquireOutcome::Queued(_)
    ));
    let _ = t.acquire(&waiting("k1", "b", 9), 20);
    let r = t.drain_audit(usize::MAX);
    let v = only(&r, AuditEvent::DeadlockVictim);
    assert_eq!((&*v.key, &*v.owner, v.waited_ms), ("k2", "a", Some(15)), "{r:?}");
    assert_eq!(v.reason.as_deref(), Some("deadlock cycle: a -> b"));

    let renew = RenewRequest {
        key: "k9".into(),
        owner: "z".into(),
        fencing_token: Some(FencingToken(42)),
        scope: Scope::Key,
        lease_ms: None,
        acquisition: None,
    };
    t.renew(&renew, 30).expect_err("not held");
    let bad = RenewRequest { key: String::new(), ..renew.clone() };
    t.renew(&bad, 31).expect_err("bad input is no history");
    let r = t.drain_audit(usize::MAX);
    assert_eq!(r.len(), 1, "{r:?}");
    let n = only(&r, AuditEvent::RenewRefused);
    assert_eq!(
        (&*n.key, &*n.owner, n.token, n.reason.as_deref()),
        ("k9", "z", 42, Some("not_held"))
    );
}

#[test]
fn a_preemption_is_recorded_and_the_old_holders_renewal_refused_as_preempted() {
    let mut t = table(16);
    let old =
        token(&mut t, &AcquireRequest { lease_ms: Some(60_000), ..waiting("k", "batch", 2) }, 0);
    let ui = AcquireRequest { preempt_ms: Some(500), ..waiting("k", "ui", 7) };
    assert!(matches!(t.acquire(&ui, 10).expect("queue"), AcquireOutcome::Queued(_)));
    t.advance(510);
    let renew = RenewRequest {
        key: "k".into(),
        owner: "batch".into(),
        fencing_token: None,
        scope: Scope::Key,
        lease_ms: None,
        acquisition: None,
    };
    t.renew(&renew, 520).expect_err("preempted");
    let r = t.drain_audit(usize::MAX);
    let p = only(&r, AuditEvent::Preempted);
    assert_eq!((&*p.owner, p.token, p.held_ms), ("batch", old, Some(510)), "{r:?}");
    assert_eq!(AuditEvent::Preempted.name(), "preempted");
    let granted: Vec<&AuditRecord> = r.iter().filter(|r| r.event == AuditEvent::Granted).collect();
    assert_eq!((&*granted[1].owner, granted[1].waited_ms), ("ui", Some(500)), "{r:?}");
    let n = only(&r, AuditEvent::RenewRefused);
    assert_eq!((&*n.owner, n.reason.as_deref()), ("batch", Some("preempted")));
}

#[test]
fn a_full_buffer_drops_and_counts_and_a_drain_makes_room() {
    let mut t = table(3);
    for i in 0..5 {
        let key = format!("k{i}");
        token(&mut t, &acquire(&key, "a"), i);
    }
    let s = t.stats().audit;
    assert_eq!((s.recorded, s.dropped, s.buffered), (3, 2, 3));
    let first = t.drain_audit(2);
    assert_eq!(first.iter().map(|r| &*r.key).collect::<Vec<_>>(), ["k0", "k1"], "oldest first");
    assert_eq!(t.stats().audit.buffered, 1);
    t.release(&release("k0", "a"), 10).expect("release");
    assert_eq!(t.stats().audit.recorded, 4);

    // Turning the history off drops (and counts) what was buffered.
    let off = Config { audit_capacity: 0, ..*t.config() };
    t.set_config(off).expect("config");
    let s = t.stats().audit;
    assert_eq!((s.recorded, s.dropped, s.buffered), (4, 4, 0));
    token(&mut t, &acquire("k9", "a"), 20);
    assert!(t.drain_audit(usize::MAX).is_empty());
    let too_big = Config { audit_capacity: lock_core::MAX_AUDIT_CAPACITY + 1, ..Config::default() };
    assert!(LockTable::with_config(1, too_big).is_err());
}
