//! Regression tests, each named after the bug it caught (found by the model test unless noted).

use crate::common;

use common::*;
use lock_core::{AcquireRequest, KeyInfoRequest, Mode, Scope};

/// An owner holding a lock with its own lease upgraded it through a session-bound request: the
/// upgrade stored the "held by session" lease marker on a lock outside the session, so the lock
/// never expired.
#[test]
fn regression_upgrade_with_session_made_lease_endless() {
    let mut t = table();
    let s = t.create_session("o", Some(20), sid(1), 0).expect("session");
    grant(
        &mut t,
        &AcquireRequest { lease_ms: Some(10), ..req("k", "o", Mode::IntentionShared) },
        0,
    );
    let up = AcquireRequest {
        session: Some(s.session),
        lease_ms: Some(1),
        ..req("k", "o", Mode::IntentionExclusive)
    };
    let g = grant(&mut t, &up, 0);
    assert_eq!(g.mode, Mode::IntentionExclusive);
    assert!(g.lease_ms > 0 && g.lease_ms <= t.config().default_lease_ms);
    t.advance(1_000_000);
    assert_eq!(t.held_locks(), 0, "the upgraded lock must still expire");
    check(&t);
}

/// Keep tree and plain namespaces apart even when names look alike.
#[test]
fn regression_tree_and_plain_key_with_same_name_are_distinct() {
    let mut t = table();
    grant(&mut t, &tree("/a", "o1", Mode::Exclusive), 0);
    grant(&mut t, &req("/a", "o2", Mode::Exclusive), 0);
    assert_eq!(
        t.key_info(&KeyInfoRequest { scope: Scope::Tree, ..KeyInfoRequest::new("/a") }, 0)
            .expect("tree")
            .holders[0]
            .owner,
        "o1"
    );
    assert_eq!(t.key_info(&KeyInfoRequest::new("/a"), 0).expect("plain").holders[0].owner, "o2");
    check(&t);
}

/// A multi-lock naming a key its owner already held queued only on the other keys; the owner
/// released the held key while waiting, the key's state was freed, and the later grant looked
/// up the freed key: a panic ("slab index refers to a live entry").
#[test]
fn regression_waiter_with_a_held_target_survives_its_release() {
    use lock_core::{LockItem, MultiAcquireRequest};
    let mut t = table();
    grant(&mut t, &req("k0", "o1", Mode::Shared), 0);
    grant(&mut t, &AcquireRequest { lease_ms: Some(36), ..tree("/a", "o2", Mode::Shared) }, 0);
    let multi = MultiAcquireRequest {
        owner: "o1".into(),
        locks: vec![
            LockItem { key: "k0".into(), mode: Mode::Shared, scope: Scope::Key },
            LockItem { key: "/a".into(), mode: Mode::IntentionExclusive, scope: Scope::Tree },
        ],
        wait_ms: Some(100),
        ..Default::default()
    };
    t.acquire_many(&multi, 0).expect("queued");
    release(&mut t, "k0", "o1", 1);
    check(&t);
    t.advance(36);
    let ev = t.drain_events();
    assert_eq!(granted_owners(&ev), ["o1"], "{ev:?}");
    assert_eq!(
        t.key_info(&KeyInfoRequest::new("k0"), 36).expect("info").holders[0].owner,
        "o1",
        "k0 granted again"
    );
    check(&t);
}

/// An owner's own earlier waiter blocked its later one on a tree ancestor; the owner then took
/// that ancestor at once with a higher priority, which made the later waiter grantable (a held
/// covering mode never blocks its owner) — but nothing re-examined the queue, so it waited.
#[test]
fn regression_immediate_grant_unblocks_the_owners_own_waiters() {
    use lock_core::{LockItem, MultiAcquireRequest, PriorityValue};
    let mut t = table_with(|c| c.aging_ms = 40);
    let item = |k: &str, m: Mode, s: Scope| LockItem { key: k.into(), mode: m, scope: s };
    let multi = |items: Vec<LockItem>, prio: i64, wait: u64| MultiAcquireRequest {
        owner: "o0".into(),
        locks: items,
        priority: Some(PriorityValue::Level(prio)),
        wait_ms: Some(wait),
        ..Default::default()
    };
    grant(&mut t, &req("k2", "o1", Mode::Exclusive), 0);
    t.acquire_many(
        &multi(
            vec![
                item("k2", Mode::IntentionShared, Scope::Key),
                item("/a/c", Mode::IntentionShared, Scope::Tree),
            ],
            2,
            34,
        ),
        0,
    )
    .expect("first waiter");
    t.acquire_many(&multi(vec![item("/a/b", Mode::IntentionShared, Scope::Tree)], 0, 26), 0)
        .expect("second waiter");
    assert_eq!(t.waiting(), 2);
    grant(&mut t, &with_priority(tree("/a", "o0", Mode::IntentionShared), 3), 0);
    assert_eq!(granted_owners(&t.drain_events()), ["o0"], "the second waiter is granted");
    check(&t);
}

/// The queue scan stopped at the first waiter that nothing could pass (an exclusive one), but a
/// later waiter whose owner had just taken a covering intention mode on the key is not blocked
/// by it — and was left waiting.
#[test]
fn regression_queue_scan_stopped_before_a_waiter_its_owner_unblocked() {
    let mut t = table_with(|c| c.aging_ms = 40);
    use lock_core::{LockItem, MultiAcquireRequest, PriorityValue};
    grant(
        &mut t,
        &AcquireRequest { lease_ms: Some(64), ..tree("/a", "o1", Mode::IntentionShared) },
        0,
    );
    let multi = MultiAcquireRequest {
        owner: "o2".into(),
        locks: vec![
            LockItem { key: "/a".into(), mode: Mode::Exclusive, scope: Scope::Tree },
            LockItem { key: "k0".into(), mode: Mode::IntentionShared, scope: Scope::Key },
        ],
        priority: Some(PriorityValue::Level(2)),
        wait_ms: Some(47),
        ..Default::default()
    };
    t.acquire_many(&multi, 0).expect("o2 waits");
    let w =
        AcquireRequest { scope: Scope::Tree, ..waiting("/a/c", "o0", Mode::IntentionShared, 28) };
    queue(&mut t, &with_priority(w, 0), 0);
    grant(&mut t, &with_priority(tree("/a/b", "o0", Mode::IntentionShared), 3), 0);
    assert_eq!(granted_owners(&t.drain_events()), ["o0"]);
    check(&t);
}

/// A clock value near `u64::MAX` made `now + lease` saturate to the "held by a session" marker,
/// so the lock never expired (found by reading the code after the fuzzer's JSON path allowed
/// arbitrary `advance` steps). Times are now clamped far below that.
#[test]
fn regression_time_near_u64_max_made_leases_endless() {
    let mut t = table();
    let near_end = u64::MAX - 10;
    grant(
        &mut t,
        &AcquireRequest { lease_ms: Some(100), ..req("k", "a", Mode::Exclusive) },
        near_end,
    );
    check(&t);
    assert!(t.next_deadline().is_some(), "the lease has a deadline");
    t.advance(u64::MAX);
    check(&t);
}

/// An immediate grant let the owner's own queued request through in the same call, which
/// upgraded the very lock just granted; the immediate answer was built afterwards and reported
/// the later token and mode (caught by the model test while adding `acquire_token`, before it
/// was committed).
#[test]
fn regression_immediate_answer_reported_a_later_upgrade_of_the_same_lock() {
    use lock_core::{Event, LockItem, MultiAcquireRequest, PriorityValue};
    let mut t = table_with(|c| c.aging_ms = 40);
    let item = |k: &str, m: Mode, s: Scope| LockItem { key: k.into(), mode: m, scope: s };
    let multi = |owner: &str, items: Vec<LockItem>, prio: i64, wait: u64| MultiAcquireRequest {
        owner: owner.into(),
        locks: items,
        priority: Some(PriorityValue::Level(prio)),
        wait_ms: Some(wait),
        ..Default::default()
    };
    t.acquire_many(&multi("o1", vec![item("k2", Mode::Exclusive, Scope::Key)], 0, 0), 0)
        .expect("o1");
    t.acquire_many(
        &multi(
            "o0",
            vec![
                item("k2", Mode::IntentionShared, Scope::Key),
                item("/a/c", Mode::IntentionShared, Scope::Tree),
            ],
            2,
            34,
        ),
        0,
    )
    .expect("o0 waits for k2");
    t.acquire_many(&multi("o0", vec![item("/a/b", Mode::Exclusive, Scope::Tree)], 0, 26), 0)
        .expect("o0 waits behind its own request");
    let g = grant(&mut t, &with_priority(tree("/a/b", "o0", Mode::IntentionExclusive), 3), 0);
    assert_eq!(g.mode, Mode::IntentionExclusive, "the answer is the grant as made");
    let ev = t.drain_events();
    let Some(Event::Granted { grants, .. }) =
        ev.iter().find(|e| matches!(e, Event::Granted { .. }))
    else {
        panic!("the own waiter is granted: {ev:?}")
    };
    assert_eq!(grants[0].mode, Mode::Exclusive);
    assert!(grants[0].fencing_token > g.fencing_token);
    check(&t);
}

/// A queued request chosen as the deadlock victim had its blocked key freed by its own
/// removal (nothing else used the key, and with a small idle cache the sweep ran at once);
/// the victim path then read the key's name and pumped it through a dead slab number, a
/// panic. Found by the model test (ops shrunk from `model.proptest-regressions`).
#[test]
fn regression_deadlock_victim_whose_blocked_key_was_freed() {
    use lock_core::{LockItem, MultiAcquireRequest, PriorityValue};
    let mut t = table_with(|c| {
        c.aging_ms = 40;
        c.default_lease_ms = 100;
        c.max_lease_ms = 1_000;
        c.max_wait_ms = 1_000;
        c.idle_cache = 1;
    });
    let at =
        |key: &str, owner: &str, mode: Mode, prio: i64, wait: u64, lease: u64| AcquireRequest {
            scope: if key.starts_with('/') { Scope::Tree } else { Scope::Key },
            priority: Some(PriorityValue::Level(prio)),
            wait_ms: Some(wait),
            lease_ms: Some(lease),
            ..req(key, owner, mode)
        };
    let _ = t.acquire(&at("/a/b/x", "o1", Mode::Shared, 0, 0, 30), 0);
    let multi = MultiAcquireRequest {
        owner: "o2".into(),
        locks: vec![
            LockItem { key: "/a".into(), scope: Scope::Tree, mode: Mode::Shared },
            LockItem { key: "k0".into(), scope: Scope::Key, mode: Mode::IntentionShared },
        ],
        priority: Some(PriorityValue::Level(0)),
        wait_ms: Some(0),
        ..Default::default()
    };
    let _ = t.acquire_many(&multi, 0);
    let _ = t.acquire(&at("/a/b/x", "o1", Mode::SharedIntentionExclusive, 0, 67, 1), 0);
    let _ = t.acquire(&at("k0", "o0", Mode::IntentionShared, 0, 0, 1), 0);
    let _ = t.acquire(&at("/a", "o1", Mode::SharedIntentionExclusive, 6, 15, 1), 16);
    let _ = t.acquire(&at("/a/b/x", "o2", Mode::IntentionExclusive, 1, 1, 1), 30);
    check(&t);
    t.advance(100_000);
    check(&t);
}

/// Found by the model test: ending a session dropped its waiters one at a time, and dropping
/// the first (exclusive, behind a shared holder) granted the second (shared, queued behind it)
/// although it belonged to the session being ended, whose record was already gone: a panic.
/// Now every waiter of the session goes before anyone is granted.
#[test]
fn regression_ending_a_session_never_grants_one_of_its_own_waiters() {
    let mut t = table();
    grant(&mut t, &req("k", "other", Mode::Shared), 0);
    let s = t.create_session("b", Some(1_000), sid(1), 0).expect("session");
    let in_session = |mode| AcquireRequest {
        session: Some(s.session.clone()),
        ..waiting("k", "b", mode, 60_000)
    };
    queue(&mut t, &in_session(Mode::Exclusive), 1);
    queue(&mut t, &in_session(Mode::Shared), 2);
    t.end_session(&s.session, "b", 3).expect("end");
    let info = t.key_info(&KeyInfoRequest::new("k"), 3).expect("info");
    assert_eq!(info.holders.iter().map(|h| h.owner.as_str()).collect::<Vec<_>>(), ["other"]);
    assert!(info.waiters.is_empty());
    t.check_invariants().expect("invariants");
}
