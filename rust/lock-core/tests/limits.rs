//! The partition and per-owner limits and the memory cap (`Limits`, docs/API.md "Settings"):
//! each refuses only new locks, waiters or sessions, with the limit named; holders keep
//! renewing and releasing; the memory estimate returns to its baseline once everything is
//! released.

use crate::common;

use common::*;
use lock_core::{
    AcquireRequest, ErrorCode, LockError, LockTable, Mode, MultiReleaseRequest, RenewRequest,
    SessionId,
};

use Mode::{Exclusive as X, Shared as S};

/// The name of the limit a refusal names (and that it is a limit refusal).
fn limit_of(e: &LockError) -> &'static str {
    assert_eq!(e.code(), ErrorCode::LimitExceeded, "{e}");
    match e {
        LockError::LimitExceeded { limit, .. } => limit,
        other => panic!("not a limit: {other:?}"),
    }
}

fn renew(t: &mut LockTable, key: &str, owner: &str, now: u64) {
    let r = RenewRequest {
        key: key.into(),
        owner: owner.into(),
        lease_ms: Some(10_000),
        ..Default::default()
    };
    t.renew(&r, now).expect("holder renews");
}

#[test]
fn max_locks_refuses_new_locks_but_not_reentry_renew_or_release() {
    let mut t = table_with(|c| c.limits.max_locks = 2);
    grant(&mut t, &acq(req("a", "o1", X), "a1"), 0);
    grant(&mut t, &req("b", "o2", S), 0);
    assert_eq!(limit_of(&t.acquire(&req("c", "o3", X), 1).expect_err("full")), "max_locks");
    assert!(grant(&mut t, &acq(req("a", "o1", X), "a1"), 1).reentrant, "a retry is no new lock");
    let again = grant(&mut t, &req("a", "o1", X), 1);
    assert!(!again.reentrant, "a new acquisition of a held lock is no new lock either");
    renew(&mut t, "a", "o1", 2);
    release(&mut t, "a", "o1", 3);
    grant(&mut t, &req("c", "o3", X), 4);
    assert_eq!(t.stats().counters.limit_rejections, 1);
    check(&t);
}

#[test]
fn max_locks_per_owner_counts_one_owner_only() {
    let mut t = table_with(|c| c.limits.max_locks_per_owner = 2);
    grant(&mut t, &req("a", "o1", X), 0);
    grant(&mut t, &req("b", "o1", X), 0);
    let e = t.acquire(&req("c", "o1", X), 0).expect_err("per owner");
    assert_eq!(limit_of(&e), "max_locks_per_owner");
    grant(&mut t, &req("c", "o2", X), 0);
    release(&mut t, "a", "o1", 1);
    grant(&mut t, &req("d", "o1", X), 1);
    check(&t);
}

#[test]
fn max_waiters_and_max_waiters_per_owner_refuse_queueing_only() {
    let mut t = table_with(|c| {
        c.limits.max_waiters = 3;
        c.limits.max_waiters_per_owner = 2;
    });
    for k in ["a", "b", "c", "d"] {
        grant(&mut t, &req(k, "holder", X), 0);
    }
    queue(&mut t, &waiting("a", "w1", X, 1_000), 0);
    queue(&mut t, &waiting("b", "w1", X, 1_000), 0);
    let e = t.acquire(&waiting("c", "w1", X, 1_000), 0).expect_err("per owner");
    assert_eq!(limit_of(&e), "max_waiters_per_owner");
    queue(&mut t, &waiting("c", "w2", X, 1_000), 0);
    let e = t.acquire(&waiting("d", "w3", X, 1_000), 0).expect_err("partition");
    assert_eq!(limit_of(&e), "max_waiters");
    // A try-lock never queues, so the waiter limits do not apply to it.
    conflict(&mut t, &req("d", "w3", X), 0);
    release(&mut t, "a", "holder", 1);
    assert_eq!(granted_owners(&t.drain_events()), ["w1"]);
    queue(&mut t, &waiting("d", "w3", X, 1_000), 1);
    check(&t);
}

#[test]
fn max_sessions_and_max_sessions_per_owner_refuse_new_sessions_only() {
    let mut t = table_with(|c| {
        c.limits.max_sessions = 3;
        c.limits.max_sessions_per_owner = 2;
    });
    let s1 =
        t.create_session("o1", Some(5_000), SessionId::from_u128(1), 0).expect("first").session;
    t.create_session("o1", Some(5_000), SessionId::from_u128(2), 0).expect("second");
    let e = t.create_session("o1", Some(5_000), SessionId::from_u128(3), 0).expect_err("per owner");
    assert_eq!(limit_of(&e), "max_sessions_per_owner");
    t.create_session("o2", Some(5_000), SessionId::from_u128(4), 0).expect("other owner");
    let e = t.create_session("o3", Some(5_000), SessionId::from_u128(5), 0).expect_err("partition");
    assert_eq!(limit_of(&e), "max_sessions");
    t.keepalive(&s1, "o1", 1).expect("keep-alive still works");
    t.end_session(&s1, "o1", 2).expect("ending still works");
    t.create_session("o1", Some(5_000), SessionId::from_u128(6), 3).expect("room again");
    check(&t);
}

#[test]
fn memory_cap_refuses_new_work_keeps_holders_and_memory_returns_to_baseline() {
    let mut t = table_with(|c| {
        c.idle_cache = 0;
        c.limits.max_memory_bytes = 20_000;
    });
    let baseline = t.memory().total;
    assert_eq!(baseline, 0);
    let mut held = Vec::new();
    let refusal = loop {
        let k = format!("key-{:04}", held.len());
        match t.acquire(&AcquireRequest::new(k.clone(), format!("owner-{}", held.len() % 7)), 0) {
            Ok(_) => held.push(k),
            Err(e) => break e,
        }
        assert!(held.len() < 10_000, "the cap never refused");
    };
    assert_eq!(limit_of(&refusal), "max_memory");
    let full = t.memory();
    assert!(full.total >= 20_000 && full.total < 21_000, "{full:?}");
    assert_eq!(t.stats().memory, full, "stats report the same estimate");
    assert!(full.keys > 0 && full.owners > 0 && full.locks > 0 && full.deadlines > 0, "{full:?}");
    let w = t.acquire(&waiting("key-0000", "late", X, 1_000), 0).expect_err("no waiting");
    assert_eq!(limit_of(&w), "max_memory");
    let s = t.create_session("late", None, SessionId::from_u128(7), 0).expect_err("no session");
    assert_eq!(limit_of(&s), "max_memory");
    renew(&mut t, "key-0000", "owner-0", 1);
    // Acquiring a held lock again (a new acquisition: a newer token) is no new lock.
    assert!(!grant(&mut t, &req("key-0001", "owner-1", X), 1).reentrant);
    for o in 0..7 {
        let all = MultiReleaseRequest {
            owner: format!("owner-{o}"),
            locks: vec![],
            all: true,
            acquisition: None,
        };
        t.release_many(&all, 2).expect("release");
    }
    assert_eq!(t.held_locks(), 0);
    t.advance(20_000);
    assert_eq!(t.memory().total, baseline, "{:?}", t.memory());
    check(&t);
}

#[test]
fn memory_estimate_follows_waiters_sessions_and_tree_locks() {
    let mut t = table_with(|c| c.idle_cache = 0);
    grant(&mut t, &req("k", "a", X), 0);
    let one_lock = t.memory();
    let q = queue(&mut t, &waiting("k", "b", X, 1_000), 0);
    let queued = t.memory();
    assert!(queued.waiters > 0 && queued.total > one_lock.total);
    t.cancel(q.waiter_id, 1).expect("queued");
    assert_eq!(t.memory().waiters, 0);
    let s = t.create_session("c", None, SessionId::from_u128(8), 1).expect("session").session;
    assert!(t.memory().sessions > 0);
    t.end_session(&s, "c", 2).expect("open");
    assert_eq!(t.memory().sessions, 0);
    grant(&mut t, &tree("/t/a/b", "d", X), 2);
    let tree_lock = t.memory();
    assert!(tree_lock.keys > one_lock.keys, "ancestors are interned keys");
    release_tree(&mut t, "/t/a/b", "d", 3);
    release(&mut t, "k", "a", 3);
    t.advance(1_000_000);
    assert_eq!(t.memory().total, 0, "{:?}", t.memory());
    check(&t);
}

#[test]
fn zero_limits_are_refused_naming_the_setting() {
    let mut c = lock_core::Config::default();
    c.limits.max_sessions_per_owner = 0;
    let e = LockTable::with_config(1, c).expect_err("zero");
    assert_eq!(e.field(), Some("max_sessions_per_owner"));
    let mut c = lock_core::Config::default();
    c.limits.max_memory_bytes = 0;
    assert_eq!(LockTable::with_config(1, c).expect_err("zero").field(), Some("max_memory_bytes"));
}
