//! One test (or a few) per lock rule of DESIGN.md §4, through the public API.

use crate::common;

use common::*;
use lock_core::{
    AcquireOutcome, AcquireRequest, CancelReason, Config, DowngradeRequest, ErrorCode, Event,
    FencingToken, KeyInfoRequest, ListFilter, LockError, LockItem, LockTable, Mode,
    MultiAcquireRequest, MultiOutcome, MultiReleaseRequest, PriorityValue, ReleaseRequest,
    RenewRequest, Scope,
};

use Mode::{Exclusive as X, IntentionExclusive as IX, Shared as S};

// ---- modes, reentrancy, release ----------------------------------------------------------

#[test]
fn exclusive_conflicts_with_another_owner_and_names_the_holder() {
    let mut t = table();
    let g = grant(&mut t, &req("k", "a", X), 10);
    assert!(!g.reentrant);
    match t.acquire(&req("k", "b", X), 15) {
        Err(LockError::Conflict { key, holders, .. }) => {
            assert_eq!(key, "k");
            assert_eq!(holders.len(), 1);
            assert_eq!(holders[0].owner, "a");
            assert_eq!(holders[0].held_ms, 5);
        }
        other => panic!("expected conflict, got {other:?}"),
    }
    check(&t);
}

#[test]
fn reacquire_by_the_same_acquisition_returns_same_token() {
    let mut t = table();
    let g1 = grant(&mut t, &acq(req("k", "a", X), "a-1"), 0);
    let g2 = grant(&mut t, &acq(req("k", "a", X), "a-1"), 1);
    assert!(g2.reentrant);
    assert_eq!(g1.fencing_token, g2.fencing_token);
    let g3 = grant(&mut t, &acq(req("k", "a", S), "a-1"), 1);
    assert!(g3.reentrant, "exclusive covers shared");
    assert_eq!(g3.mode, X);
    assert_eq!(t.held_locks(), 1);
}

#[test]
fn only_the_holder_releases_and_tokens_grow() {
    let mut t = LockTable::new(3).expect("epoch");
    let g1 = grant(&mut t, &req("k", "a", X), 0);
    assert_eq!(g1.fencing_token.epoch(), 3);
    let rel = |o: &str| ReleaseRequest { key: "k".into(), owner: o.into(), ..Default::default() };
    assert!(matches!(t.release(&rel("b"), 0), Err(LockError::NotHeld { .. })));
    let stale = ReleaseRequest { fencing_token: Some(FencingToken(1)), ..rel("a") };
    assert!(matches!(t.release(&stale, 0), Err(LockError::NotHeld { .. })), "wrong token");
    assert_eq!(t.release(&rel("a"), 0).expect("holder").fencing_token, g1.fencing_token);
    assert_eq!(t.held_keys(), 0);
    assert!(matches!(t.release(&rel("a"), 0), Err(LockError::NotHeld { .. })), "twice");
    let g2 = grant(&mut t, &req("k", "b", X), 1);
    assert!(g2.fencing_token > g1.fencing_token);
    check(&t);
}

#[test]
fn shared_holders_coexist_but_exclude_exclusive() {
    let mut t = table();
    grant(&mut t, &req("k", "a", S), 0);
    grant(&mut t, &req("k", "b", S), 0);
    conflict(&mut t, &req("k", "c", X), 0);
    assert_eq!(t.key_info(&KeyInfoRequest::new("k"), 0).expect("info").holders.len(), 2);
    check(&t);
}

#[test]
fn bad_input_is_refused_naming_the_field_without_touching_state() {
    let mut t = table();
    let field = |r: Result<AcquireOutcome, LockError>| r.expect_err("refused").field();
    assert_eq!(field(t.acquire(&req("", "a", X), 0)), Some("key"));
    assert_eq!(field(t.acquire(&req("k", " ", X), 0)), Some("owner"));
    assert_eq!(field(t.acquire(&tree("a/b", "o", X), 0)), Some("key"));
    assert_eq!(field(t.acquire(&tree("/a//b", "o", X), 0)), Some("key"));
    let r = AcquireRequest { priority: Some(PriorityValue::Level(12)), ..req("k", "a", X) };
    assert_eq!(field(t.acquire(&r, 0)), Some("priority"));
    let r = AcquireRequest { lease_ms: Some(0), ..req("k", "a", X) };
    assert_eq!(field(t.acquire(&r, 0)), Some("lease_ms"));
    assert_eq!(t.create_session("o", Some(0), sid(1), 0).expect_err("ttl").field(), Some("ttl_ms"));
    let r = DowngradeRequest { key: "k".into(), owner: "a".into(), mode: X, ..Default::default() };
    assert!(matches!(t.downgrade(&r, 0), Err(LockError::NotHeld { .. })));
    assert_eq!(t.held_keys(), 0);
    assert_eq!(t.waiting(), 0);
    assert!(LockTable::new(FencingToken::MAX_EPOCH + 1).is_err());
    check(&t);
}

// ---- queue order ----------------------------------------------------------------------------

#[test]
fn waiters_are_granted_in_fifo_order() {
    let mut t = table();
    grant(&mut t, &req("k", "a", X), 0);
    let qb = queue(&mut t, &waiting("k", "b", X, 1000), 1);
    let qc = queue(&mut t, &waiting("k", "c", X, 1000), 2);
    queue(&mut t, &waiting("k", "d", X, 1000), 3);
    let info = t.key_info(&KeyInfoRequest::new("k"), 3).expect("info");
    assert_eq!(info.waiters.iter().map(|w| w.owner.as_str()).collect::<Vec<_>>(), ["b", "c", "d"]);
    release(&mut t, "k", "a", 10);
    let ev = t.drain_events();
    assert_eq!(granted_owners(&ev), ["b"]);
    match &ev[0] {
        Event::Granted { waiter_id, grants, .. } => {
            assert_eq!(*waiter_id, qb.waiter_id);
            assert_eq!(grants[0].waited_ms, 9);
        }
        other => panic!("{other:?}"),
    }
    release(&mut t, "k", "b", 11);
    let ev = t.drain_events();
    assert_eq!(ev[0].waiter_id(), Some(qc.waiter_id));
    release(&mut t, "k", "c", 12);
    assert_eq!(granted_owners(&t.drain_events()), ["d"]);
    check(&t);
}

#[test]
fn shared_request_does_not_barge_past_an_earlier_exclusive_waiter() {
    let mut t = table();
    grant(&mut t, &req("k", "a", S), 0);
    queue(&mut t, &waiting("k", "b", X, 1000), 1);
    conflict(&mut t, &req("k", "c", S), 2);
    queue(&mut t, &waiting("k", "c", S, 1000), 2);
    queue(&mut t, &waiting("k", "d", S, 1000), 3);
    release(&mut t, "k", "a", 5);
    assert_eq!(granted_owners(&t.drain_events()), ["b"]);
    release(&mut t, "k", "b", 6);
    assert_eq!(granted_owners(&t.drain_events()), ["c", "d"], "both shared waiters at once");
    check(&t);
}

#[test]
fn higher_priority_waiter_goes_first_fifo_within_a_priority() {
    let mut t = table();
    grant(&mut t, &req("k", "h", X), 0);
    queue(&mut t, &with_priority(waiting("k", "bg1", X, 60_000), 2), 1);
    queue(&mut t, &with_priority(waiting("k", "fg1", X, 60_000), 7), 2);
    queue(&mut t, &with_priority(waiting("k", "bg2", X, 60_000), 2), 3);
    queue(&mut t, &with_priority(waiting("k", "fg2", X, 60_000), 7), 4);
    let mut order = Vec::new();
    let mut holder = "h".to_string();
    for now in 10..14 {
        release(&mut t, "k", &holder, now);
        let g = granted_owners(&t.drain_events());
        holder = g[0].clone();
        order.push(holder.clone());
    }
    assert_eq!(order, ["fg1", "fg2", "bg1", "bg2"]);
}

#[test]
fn priority_names_map_to_levels() {
    let mut t = table_with(|c| c.aging_ms = 0);
    grant(&mut t, &req("k", "h", X), 0);
    let named = |o: &str, p: &str| AcquireRequest {
        priority: Some(PriorityValue::Name(p.into())),
        ..waiting("k", o, X, 1000)
    };
    queue(&mut t, &named("bg", "background"), 1);
    queue(&mut t, &with_priority(waiting("k", "p3", X, 1000), 3), 2);
    queue(&mut t, &named("fg", "foreground"), 3);
    queue(&mut t, &with_priority(waiting("k", "p6", X, 1000), 6), 4);
    let info = t.key_info(&KeyInfoRequest::new("k"), 5).expect("info");
    let order: Vec<_> = info.waiters.iter().map(|w| w.owner.as_str()).collect();
    assert_eq!(order, ["fg", "p6", "p3", "bg"]);
}

/// The starvation bound of aging: with `aging_ms = g`, a background (2) waiter is ranked ahead
/// of every foreground (7) request arriving more than `5·g` after it. Under a continuous
/// foreground stream (one new request every `h/2` ms, each holding `h` ms), it is granted
/// within `5·g + (queue ahead) · h` plus one hold — the bound asserted here.
fn background_grant_time(aging_ms: u64) -> Option<u64> {
    let mut t = table_with(|c| {
        c.aging_ms = aging_ms;
        c.max_wait_ms = 10_000_000;
    });
    let h = 10u64;
    grant(&mut t, &req("k", "fg0", X), 0);
    let mut holder = "fg0".to_string();
    let mut next_release = h;
    let mut n = 1;
    queue(&mut t, &with_priority(waiting("k", "fg1", X, 10_000_000), 7), 1);
    queue(&mut t, &with_priority(waiting("k", "bg", X, 10_000_000), 2), 2);
    for now in (3..20_000).step_by(5) {
        n += 1;
        queue(&mut t, &with_priority(waiting("k", &format!("fg{n}"), X, 10_000_000), 7), now);
        if now >= next_release {
            release(&mut t, "k", &holder, now);
            let g = granted_owners(&t.drain_events());
            holder = g.first().cloned().expect("someone waits");
            next_release = now + h;
            if holder == "bg" {
                return Some(now);
            }
        }
    }
    None
}

#[test]
fn aging_serves_background_within_the_bound_under_a_foreground_stream() {
    let g = 200;
    let granted_at = background_grant_time(g).expect("background must not starve");
    // Arrived at 2; overtaken only by foreground arrivals before 2 + 5g, each holding ≤ 15 ms
    // (one release per ≥ h ms on a 5 ms tick), plus fg1 and fg0's hold.
    let bound = 2 + 5 * g + 2 * 15 + (5 * g / 5 + 2) * 15;
    assert!(granted_at <= bound, "granted at {granted_at}, bound {bound}");
    assert!(granted_at >= 5 * g / 2, "aging must not make background jump the queue at once");
}

#[test]
fn without_aging_background_starves_under_the_same_stream() {
    assert_eq!(background_grant_time(0), None, "control: the aging test can fail");
}

// ---- waiting: timeouts and cancel ----------------------------------------------------------

#[test]
fn wait_times_out_at_its_deadline_with_an_event() {
    let mut t = table();
    grant(&mut t, &AcquireRequest { lease_ms: Some(10_000), ..req("k", "a", X) }, 0);
    let q = queue(&mut t, &AcquireRequest { request_id: 77, ..waiting("k", "b", X, 100) }, 5);
    assert_eq!(q.deadline, 105);
    assert_eq!(t.next_deadline(), Some(105));
    t.advance(104);
    assert!(t.drain_events().is_empty());
    t.advance(105);
    let ev = t.drain_events();
    assert_eq!(ev.len(), 1);
    match &ev[0] {
        Event::WaitTimedOut { waiter_id, request_id, waited_ms, key, .. } => {
            assert_eq!(
                (*waiter_id, *request_id, *waited_ms, key.as_str()),
                (q.waiter_id, 77, 100, "k")
            );
        }
        other => panic!("{other:?}"),
    }
    let (_, _, outcome) = ev[0].outcome().expect("completes a waiter");
    assert_eq!(outcome.expect_err("timeout").code(), ErrorCode::WaitTimeout);
    assert_eq!(t.waiting(), 0);
    assert_eq!(t.next_deadline(), Some(10_000), "only the lease is left");
    check(&t);
}

#[test]
fn wait_is_capped_by_max_wait() {
    let mut t = table_with(|c| c.max_wait_ms = 50);
    grant(&mut t, &req("k", "a", X), 0);
    assert_eq!(queue(&mut t, &waiting("k", "b", X, 1_000_000), 0).deadline, 50);
}

#[test]
fn cancel_drops_the_waiter_and_lets_later_ones_through() {
    let mut t = table();
    grant(&mut t, &req("k", "a", S), 0);
    let qb = queue(&mut t, &waiting("k", "b", X, 1000), 1);
    queue(&mut t, &waiting("k", "c", S, 1000), 2);
    t.cancel(qb.waiter_id, 3).expect("cancel");
    let ev = t.drain_events();
    assert!(matches!(&ev[0], Event::Cancelled { reason: CancelReason::Cancelled, .. }));
    assert_eq!(granted_owners(&ev), ["c"], "the shared waiter fits once the exclusive one left");
    assert!(matches!(t.cancel(qb.waiter_id, 4), Err(LockError::WaiterNotFound { .. })));
    check(&t);
}

// ---- leases ------------------------------------------------------------------------------

#[test]
fn lease_expiry_passes_the_lock_on_and_kills_the_old_token() {
    let mut t = table();
    let old = grant(&mut t, &AcquireRequest { lease_ms: Some(100), ..req("k", "a", X) }, 0);
    assert_eq!(old.lease_ms, 100);
    let q = queue(&mut t, &waiting("k", "b", X, 1000), 10);
    assert_eq!(t.next_deadline(), Some(100));
    t.advance(100);
    let ev = t.drain_events();
    assert!(
        matches!(&ev[0], Event::LeaseExpired { owner, fencing_token, .. } if owner == "a" && *fencing_token == old.fencing_token)
    );
    let Event::Granted { waiter_id, grants, .. } = &ev[1] else { panic!("{ev:?}") };
    assert_eq!(*waiter_id, q.waiter_id);
    assert!(grants[0].fencing_token > old.fencing_token);
    let stale = ReleaseRequest {
        key: "k".into(),
        owner: "a".into(),
        fencing_token: Some(old.fencing_token),
        ..Default::default()
    };
    assert!(matches!(t.release(&stale, 101), Err(LockError::NotHeld { .. })));
    check(&t);
}

#[test]
fn every_call_processes_expiries_first() {
    let mut t = table();
    grant(&mut t, &AcquireRequest { lease_ms: Some(100), ..req("k", "a", X) }, 0);
    // No advance call: the acquire at 100 itself sees the lease gone.
    let g = grant(&mut t, &req("k", "b", X), 100);
    assert_eq!(g.owner, "b");
    assert!(matches!(t.drain_events()[0], Event::LeaseExpired { .. }));
}

#[test]
fn renew_extends_the_lease_only_for_the_holder() {
    let mut t = table();
    let g = grant(&mut t, &AcquireRequest { lease_ms: Some(100), ..req("k", "a", X) }, 0);
    let renew = |o: &str, tok: Option<FencingToken>| RenewRequest {
        key: "k".into(),
        owner: o.into(),
        fencing_token: tok,
        lease_ms: Some(500),
        ..Default::default()
    };
    assert!(matches!(t.renew(&renew("b", None), 50), Err(LockError::NotHeld { .. })));
    assert!(matches!(
        t.renew(&renew("a", Some(FencingToken(999))), 50),
        Err(LockError::NotHeld { .. })
    ));
    let r = t.renew(&renew("a", Some(g.fencing_token)), 50).expect("renew");
    assert_eq!(r.lease_ms, 500);
    t.advance(549);
    assert_eq!(t.held_locks(), 1);
    t.advance(550);
    assert_eq!(t.held_locks(), 0);
    check(&t);
}

#[test]
fn lease_is_capped_by_max_lease() {
    let mut t = table_with(|c| {
        c.max_lease_ms = 1000;
        c.default_lease_ms = 1000;
    });
    let g = grant(&mut t, &AcquireRequest { lease_ms: Some(10_000_000), ..req("k", "a", X) }, 0);
    assert_eq!(g.lease_ms, 1000);
}

// ---- upgrade and downgrade ---------------------------------------------------------------

#[test]
fn upgrade_is_immediate_for_a_sole_holder_with_a_new_token() {
    let mut t = table();
    let s = grant(&mut t, &req("k", "a", S), 0);
    queue(&mut t, &waiting("k", "b", X, 1000), 1);
    let x = grant(&mut t, &req("k", "a", X), 2);
    assert_eq!(x.mode, X);
    assert!(!x.reentrant);
    assert!(x.fencing_token > s.fencing_token);
    assert_eq!(t.held_locks(), 1);
    check(&t);
}

#[test]
fn upgrade_queues_ahead_of_other_waiters_while_others_share() {
    let mut t = table();
    grant(&mut t, &req("k", "a", S), 0);
    grant(&mut t, &req("k", "b", S), 0);
    queue(&mut t, &waiting("k", "c", X, 1000), 1);
    let up = queue(&mut t, &waiting("k", "a", X, 1000), 2);
    release(&mut t, "k", "b", 3);
    let ev = t.drain_events();
    assert_eq!(ev[0].waiter_id(), Some(up.waiter_id), "the upgrade goes before c");
    assert_eq!(granted_owners(&ev), ["a"]);
    release(&mut t, "k", "a", 4);
    assert_eq!(granted_owners(&t.drain_events()), ["c"]);
    check(&t);
}

#[test]
fn downgrade_keeps_the_token_and_admits_shared_waiters() {
    let mut t = table();
    let g = grant(&mut t, &req("k", "a", X), 0);
    queue(&mut t, &waiting("k", "b", S, 1000), 1);
    let d = t
        .downgrade(
            &DowngradeRequest { key: "k".into(), owner: "a".into(), mode: S, ..Default::default() },
            2,
        )
        .expect("downgrade");
    assert_eq!((d.mode, d.fencing_token), (S, g.fencing_token));
    assert_eq!(granted_owners(&t.drain_events()), ["b"]);
    let up = DowngradeRequest { key: "k".into(), owner: "a".into(), mode: X, ..Default::default() };
    assert_eq!(t.downgrade(&up, 3).expect_err("not weaker").field(), Some("mode"));
    check(&t);
}

// ---- tree locks ----------------------------------------------------------------------------

#[test]
fn tree_lock_takes_intention_modes_on_every_ancestor() {
    let mut t = table();
    grant(&mut t, &tree("/a/b/c", "o1", X), 0);
    let info = t
        .key_info(&KeyInfoRequest { scope: Scope::Tree, ..KeyInfoRequest::new("/a") }, 0)
        .expect("info");
    assert_eq!(info.holders.len(), 1);
    assert_eq!(info.holders[0].mode, IX);
    assert!(info.holders[0].intention);
    assert_eq!(t.held_locks(), 1);
    assert_eq!(t.held_keys(), 3);
    // Siblings fit (IX + IX); the parent and the root do not.
    grant(&mut t, &tree("/a/b/d", "o2", X), 1);
    conflict(&mut t, &tree("/a/b", "o3", S), 1);
    conflict(&mut t, &tree("/a", "o3", X), 1);
    grant(&mut t, &tree("/a/x", "o3", S), 1);
    // Plain keys live in their own namespace.
    grant(&mut t, &req("/a", "o4", X), 1);
    check(&t);
    release_tree(&mut t, "/a/b/c", "o1", 2);
    release_tree(&mut t, "/a/b/d", "o2", 2);
    grant(&mut t, &tree("/a/b", "o3", S), 3);
    check(&t);
}

#[test]
fn tree_lock_is_all_or_nothing() {
    let mut t = table();
    grant(&mut t, &tree("/a/b", "o1", S), 0);
    conflict(&mut t, &tree("/a/b/c", "o2", X), 1);
    // Nothing of the refused request stays behind: only o1's IS on /a and S on /a/b.
    assert_eq!(t.held_keys(), 2);
    let info = t
        .key_info(&KeyInfoRequest { scope: Scope::Tree, ..KeyInfoRequest::new("/a") }, 1)
        .expect("info");
    assert_eq!(info.holders.iter().map(|h| h.owner.as_str()).collect::<Vec<_>>(), ["o1"]);
    check(&t);
}

#[test]
fn tree_waiters_in_other_subtrees_are_not_blocked_by_a_blocked_sibling() {
    let mut t = table();
    grant(&mut t, &tree("/a/b", "o1", X), 0);
    queue(&mut t, &AcquireRequest { scope: Scope::Tree, ..waiting("/a/b", "o2", X, 1000) }, 1);
    // o2 waits with IX on /a; o3's IX on /a fits, so /a/c is granted at once.
    grant(&mut t, &tree("/a/c", "o3", X), 2);
    check(&t);
}

#[test]
fn tree_upgrade_raises_ancestor_intentions() {
    let mut t = table();
    grant(&mut t, &tree("/r/x", "o", S), 0);
    grant(&mut t, &tree("/r/x", "o", X), 1);
    let info = t
        .key_info(&KeyInfoRequest { scope: Scope::Tree, ..KeyInfoRequest::new("/r") }, 1)
        .expect("info");
    assert_eq!(info.holders[0].mode, IX);
    conflict(&mut t, &tree("/r", "p", S), 2);
    check(&t);
}

// ---- multi-lock --------------------------------------------------------------------------

fn multi(owner: &str, keys: &[(&str, Mode)], wait_ms: u64) -> MultiAcquireRequest {
    MultiAcquireRequest {
        owner: owner.into(),
        locks: keys
            .iter()
            .map(|(k, m)| LockItem { key: (*k).into(), mode: *m, scope: Scope::Key })
            .collect(),
        wait_ms: Some(wait_ms),
        ..Default::default()
    }
}

#[test]
fn multi_lock_is_all_or_nothing() {
    let mut t = table();
    grant(&mut t, &req("k2", "a", X), 0);
    assert!(
        matches!(t.acquire_many(&multi("b", &[("k1", X), ("k2", S)], 0), 1), Err(LockError::Conflict { key, .. }) if key == "k2")
    );
    assert_eq!(
        t.key_info(&KeyInfoRequest::new("k1"), 1).expect("info").holders.len(),
        0,
        "k1 untouched"
    );
    let MultiOutcome::Queued(q) =
        t.acquire_many(&multi("b", &[("k1", X), ("k2", S)], 1000), 1).expect("queue")
    else {
        panic!("should queue")
    };
    // While b waits for k2 it does not hold k1 (but nobody may barge past it there).
    let k1 = t.key_info(&KeyInfoRequest::new("k1"), 2).expect("info");
    assert!(k1.holders.is_empty());
    assert_eq!(k1.waiters[0].owner, "b");
    conflict(&mut t, &req("k1", "c", X), 2);
    release(&mut t, "k2", "a", 5);
    let ev = t.drain_events();
    let Event::Granted { waiter_id, grants, .. } =
        ev.iter().find(|e| matches!(e, Event::Granted { .. })).expect("granted")
    else {
        unreachable!()
    };
    assert_eq!(*waiter_id, q.waiter_id);
    assert_eq!(grants.iter().map(|g| g.key.as_str()).collect::<Vec<_>>(), ["k1", "k2"]);
    assert_eq!(grants[0].fencing_token, grants[1].fencing_token, "one grant, one token");
    check(&t);
}

#[test]
fn opposite_order_multi_locks_do_not_deadlock() {
    let mut t = table();
    grant(&mut t, &req("k1", "h", X), 0);
    grant(&mut t, &req("k2", "h", X), 0);
    t.acquire_many(&multi("a", &[("k1", X), ("k2", X)], 1000), 1).expect("a");
    t.acquire_many(&multi("b", &[("k2", X), ("k1", X)], 1000), 2).expect("b");
    t.release_many(&MultiReleaseRequest { owner: "h".into(), all: true, ..Default::default() }, 3)
        .expect("release all");
    let ev = t.drain_events();
    assert_eq!(granted_owners(&ev), ["a"]);
    assert!(!ev.iter().any(|e| matches!(e, Event::DeadlockVictim { .. })));
    t.release_many(&MultiReleaseRequest { owner: "a".into(), all: true, ..Default::default() }, 4)
        .expect("release a");
    assert_eq!(granted_owners(&t.drain_events()), ["b"]);
    check(&t);
}

#[test]
fn multi_lock_mixes_modes_scopes_and_merges_duplicates() {
    let mut t = table();
    let r = MultiAcquireRequest {
        owner: "o".into(),
        locks: vec![
            LockItem { key: "/t/a".into(), mode: X, scope: Scope::Tree },
            LockItem { key: "plain".into(), mode: S, scope: Scope::Key },
            LockItem { key: "plain".into(), mode: X, scope: Scope::Key },
        ],
        ..Default::default()
    };
    let MultiOutcome::Granted(gs) = t.acquire_many(&r, 0).expect("grant") else { panic!() };
    assert_eq!(gs.len(), 2);
    assert_eq!(gs[1].mode, X, "duplicate merged into the stronger mode");
    check(&t);
}

// ---- deadlocks -----------------------------------------------------------------------------

#[test]
fn deadlock_victim_is_the_youngest_at_equal_priority() {
    let mut t = table();
    grant(&mut t, &req("k1", "a", X), 0);
    grant(&mut t, &req("k2", "b", X), 0);
    queue(&mut t, &waiting("k2", "a", X, 1000), 1);
    match t.acquire(&waiting("k1", "b", X, 1000), 2) {
        Err(LockError::Deadlock { owner, cycle, key }) => {
            assert_eq!(owner, "b");
            assert_eq!(key, "k1");
            assert_eq!(cycle, ["b", "a"]);
        }
        other => panic!("expected deadlock, got {other:?}"),
    }
    assert_eq!(t.waiting(), 1);
    assert_eq!(t.stats().counters.deadlocks, 1);
    check(&t);
}

#[test]
fn deadlock_victim_is_the_lowest_priority() {
    let mut t = table();
    grant(&mut t, &req("k1", "a", X), 0);
    grant(&mut t, &req("k2", "b", X), 0);
    let qa = queue(&mut t, &with_priority(waiting("k2", "a", X, 1000), 2), 1);
    let qb = queue(&mut t, &with_priority(waiting("k1", "b", X, 1000), 7), 2);
    let ev = t.drain_events();
    assert_eq!(ev.len(), 1);
    assert!(
        matches!(&ev[0], Event::DeadlockVictim { waiter_id, .. } if *waiter_id == qa.waiter_id)
    );
    // b still waits for k1, which a still holds.
    release(&mut t, "k1", "a", 3);
    assert_eq!(t.drain_events()[0].waiter_id(), Some(qb.waiter_id));
    check(&t);
}

#[test]
fn no_false_positive_for_a_wait_chain() {
    let mut t = table();
    grant(&mut t, &req("k1", "a", X), 0);
    grant(&mut t, &req("k2", "b", X), 0);
    grant(&mut t, &req("k3", "c", X), 0);
    queue(&mut t, &waiting("k2", "a", X, 1000), 1);
    queue(&mut t, &waiting("k3", "b", X, 1000), 2);
    queue(&mut t, &waiting("k3", "x", X, 1000), 3);
    queue(&mut t, &waiting("k1", "y", S, 1000), 3);
    assert!(t.drain_events().is_empty());
    assert_eq!(t.stats().counters.deadlocks, 0);
    check(&t);
}

#[test]
fn three_owner_cycle_is_found() {
    let mut t = table();
    for (k, o) in [("k1", "a"), ("k2", "b"), ("k3", "c")] {
        grant(&mut t, &req(k, o, X), 0);
    }
    queue(&mut t, &waiting("k2", "a", X, 1000), 1);
    queue(&mut t, &waiting("k3", "b", X, 1000), 2);
    match t.acquire(&waiting("k1", "c", X, 1000), 3) {
        Err(LockError::Deadlock { cycle, .. }) => assert_eq!(cycle, ["c", "a", "b"]),
        other => panic!("{other:?}"),
    }
}

// ---- sessions ----------------------------------------------------------------------------

#[test]
fn session_locks_share_one_keepalive_and_expire_together() {
    let mut t = table();
    let s = t.create_session("o", Some(100), sid(1), 0).expect("session");
    let with_s = |k: &str| AcquireRequest { session: Some(s.session.clone()), ..req(k, "o", X) };
    let g = grant(&mut t, &with_s("k1"), 0);
    assert_eq!(g.session.as_deref(), Some(s.session.as_str()));
    grant(&mut t, &with_s("k2"), 0);
    t.keepalive(&s.session, "o", 90).expect("keepalive");
    t.advance(150);
    assert_eq!(t.held_locks(), 2, "kept alive");
    let qb = queue(&mut t, &waiting("k1", "b", X, 1000), 150);
    t.advance(190);
    let ev = t.drain_events();
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::SessionExpired { released, .. } if released.len() == 2)));
    assert!(ev
        .iter()
        .any(|e| e.waiter_id() == Some(qb.waiter_id) && matches!(e, Event::Granted { .. })));
    assert!(matches!(t.keepalive(&s.session, "o", 191), Err(LockError::SessionNotFound { .. })));
    check(&t);
}

#[test]
fn ending_a_session_releases_its_locks_and_drops_its_waiters() {
    let mut t = table();
    grant(&mut t, &req("busy", "x", X), 0);
    let s = t.create_session("o", Some(1000), sid(1), 0).expect("session");
    let sess = |r: AcquireRequest| AcquireRequest { session: Some(s.session.clone()), ..r };
    grant(&mut t, &sess(req("k", "o", X)), 0);
    let q = queue(&mut t, &sess(waiting("busy", "o", X, 500)), 1);
    let ended = t.end_session(&s.session, "o", 2).expect("end");
    assert_eq!(ended.released, ["k"]);
    assert_eq!(ended.dropped_waiters, 1);
    let ev = t.drain_events();
    assert!(
        matches!(&ev[0], Event::Cancelled { waiter_id, reason: CancelReason::SessionEnded, .. } if *waiter_id == q.waiter_id)
    );
    assert_eq!(t.held_locks(), 1);
    check(&t);
}

#[test]
fn session_must_exist_and_belong_to_the_owner() {
    let mut t = table();
    let r = AcquireRequest { session: Some("12345".into()), ..req("k", "o", X) };
    assert_eq!(t.acquire(&r, 0).expect_err("unknown").code(), ErrorCode::SessionNotFound);
    let r = AcquireRequest { session: Some("not-a-number".into()), ..req("k", "o", X) };
    assert_eq!(t.acquire(&r, 0).expect_err("unknown").code(), ErrorCode::SessionNotFound);
    let s = t.create_session("other", None, sid(1), 0).expect("session");
    let r = AcquireRequest { session: Some(s.session), ..req("k", "o", X) };
    let foreign = t.acquire(&r, 0).expect_err("foreign");
    assert_eq!(foreign.code(), ErrorCode::SessionNotFound, "as an unknown one: {foreign}");
}

// ---- fencing, epochs, grace ------------------------------------------------------------------

#[test]
fn tokens_rise_across_an_epoch_change() {
    let mut t = LockTable::new(5).expect("epoch");
    let g1 = grant(&mut t, &req("k", "a", X), 0);
    release(&mut t, "k", "a", 1);
    for _ in 0..10 {
        grant(&mut t, &req("other", "a", X), 1);
        release(&mut t, "other", "a", 1);
    }
    t.set_epoch(6).expect("up");
    let g2 = grant(&mut t, &req("k", "b", X), 2);
    assert_eq!(g2.fencing_token.epoch(), 6);
    assert_eq!(g2.fencing_token.counter(), 1);
    assert!(g2.fencing_token > g1.fencing_token);
    assert_eq!(t.set_epoch(5).expect_err("down").field(), Some("epoch"));
    assert!(g2.fencing_token.0 <= i64::MAX as u64);
}

#[test]
fn recovery_grace_refuses_grants_but_not_releases() {
    let mut t = table();
    grant(&mut t, &req("k", "a", X), 0);
    t.begin_grace(100);
    let e = t.acquire(&req("j", "b", X), 10).expect_err("grace");
    assert_eq!(e.code(), ErrorCode::PartitionUnavailable);
    assert!(matches!(e, LockError::PartitionUnavailable { retry_after_ms: 90 }));
    release(&mut t, "k", "a", 20);
    grant(&mut t, &req("j", "b", X), 100);
}

#[test]
fn clock_going_backwards_is_treated_as_standing_still() {
    let mut t = table();
    grant(&mut t, &AcquireRequest { lease_ms: Some(100), ..req("k", "a", X) }, 1000);
    t.advance(5);
    assert_eq!(t.now(), 1000);
    assert_eq!(t.held_locks(), 1);
    t.advance(1100);
    assert_eq!(t.held_locks(), 0);
}

// ---- limits ------------------------------------------------------------------------------

#[test]
fn limits_are_enforced_with_clear_errors() {
    let mut t = table_with(|c| {
        c.limits.max_waiters_per_key = 2;
        c.limits.max_keys_per_request = 3;
        c.limits.max_locks = 4;
        c.limits.max_key_bytes = 8;
    });
    grant(&mut t, &req("k", "a", X), 0);
    queue(&mut t, &waiting("k", "b", X, 100), 0);
    queue(&mut t, &waiting("k", "c", X, 100), 0);
    let e = t.acquire(&waiting("k", "d", X, 100), 0).expect_err("full queue");
    assert!(matches!(e, LockError::LimitExceeded { limit: "max_waiters_per_key", max: 2 }), "{e}");
    assert_eq!(e.code(), ErrorCode::LimitExceeded);
    let e = t
        .acquire_many(&multi("o", &[("1", X), ("2", X), ("3", X), ("4", X)], 0), 0)
        .expect_err("keys");
    assert!(matches!(e, LockError::LimitExceeded { limit: "max_keys_per_request", .. }));
    for k in ["l1", "l2", "l3"] {
        grant(&mut t, &req(k, "a", X), 0);
    }
    let e = t.acquire(&req("l4", "a", X), 0).expect_err("locks");
    assert!(matches!(e, LockError::LimitExceeded { limit: "max_locks", .. }));
    let e = t.acquire(&req("123456789", "a", X), 0).expect_err("long key");
    assert_eq!(e.field(), Some("key"));
    check(&t);
}

// ---- introspection -----------------------------------------------------------------------

#[test]
fn introspection_lists_holders_waiters_and_stats() {
    let mut t = table();
    grant(&mut t, &req("app/1", "a", X), 0);
    grant(&mut t, &req("app/2", "b", S), 0);
    grant(&mut t, &req("db/1", "a", X), 0);
    conflict(&mut t, &req("app/1", "c", X), 1);
    queue(&mut t, &waiting("app/1", "c", X, 100), 2);
    let by_owner = t.list_page(&ListFilter { owner: Some("a".into()), ..Default::default() }).locks;
    assert_eq!(by_owner.iter().map(|l| l.key.as_str()).collect::<Vec<_>>(), ["app/1", "db/1"]);
    let by_prefix =
        t.list_page(&ListFilter { prefix: Some("app/".into()), size: 1, ..Default::default() });
    assert_eq!(by_prefix.locks.len(), 1);
    assert_eq!(by_prefix.next.as_ref().map(|c| c.key.as_str()), Some("app/1"));
    let info = t.key_info(&KeyInfoRequest::new("app/1"), 12).expect("info");
    assert_eq!(info.waiters[0].waited_ms, 10);
    assert_eq!(info.waiters[0].wait_left_ms, 90);
    release(&mut t, "app/1", "a", 20);
    let st = t.stats();
    assert_eq!(st.counters.conflicts, 1);
    assert_eq!(st.counters.queued, 1);
    assert_eq!(st.counters.grants_after_wait, 1);
    assert_eq!(st.wait_time.count, 1);
    assert!(st.wait_time.p50_ms >= 18 && st.wait_time.p50_ms <= 31, "{:?}", st.wait_time);
    assert_eq!(st.hold_time.count, 1);
    assert_eq!(st.hottest_keys[0].key, "app/1");
    assert_eq!(st.hottest_keys[0].contended, 2);
    assert_eq!(st.held_locks, 3);
    assert_eq!(t.oldest_waiters(5).len(), 0);
}

#[test]
fn events_serialise_with_a_type_tag() {
    let mut t = table();
    grant(&mut t, &req("k", "a", X), 0);
    let q = queue(&mut t, &AcquireRequest { request_id: 42, ..waiting("k", "b", X, 100) }, 0);
    release(&mut t, "k", "a", 1);
    let v = serde_json::to_value(t.drain_events()).expect("json");
    assert_eq!(v[0]["event"], "granted");
    assert_eq!(v[0]["waiter_id"], q.waiter_id);
    assert_eq!(v[0]["request_id"], 42);
    assert_eq!(v[0]["grants"][0]["owner"], "b");
}

// ---- export / import -----------------------------------------------------------------------

#[test]
fn export_import_keeps_holders_sessions_and_rising_tokens() {
    let mut t = LockTable::new(3).expect("t");
    let g = grant(&mut t, &AcquireRequest { lease_ms: Some(1000), ..req("k", "a", X) }, 0);
    grant(&mut t, &tree("/t/x", "b", S), 0);
    let s = t.create_session("c", Some(500), sid(1), 0).expect("session");
    grant(&mut t, &AcquireRequest { session: Some(s.session.clone()), ..req("s", "c", X) }, 0);
    queue(&mut t, &waiting("k", "w", X, 100), 10);
    let snap = t.export();
    let json = serde_json::to_string(&snap).expect("json");
    let snap: lock_core::PartitionSnapshot = serde_json::from_str(&json).expect("json back");

    assert!(LockTable::import(&snap, 2, Config::default(), 0).is_err(), "lower epoch");
    let mut n = LockTable::import(&snap, 4, Config::default(), 50_000).expect("import");
    check(&n);
    assert_eq!(n.held_locks(), 3);
    assert_eq!(n.waiting(), 0, "waiters stay behind");
    conflict(&mut n, &req("k", "z", X), 50_000);
    assert_eq!(
        n.key_info(&KeyInfoRequest::new("k"), 50_000).expect("info").holders[0].lease_ms,
        990,
        "lease left at export"
    );
    let fresh = grant(&mut n, &req("new", "z", X), 50_000);
    assert!(fresh.fencing_token > g.fencing_token);
    assert_eq!(fresh.fencing_token.epoch(), 4);
    n.keepalive(&s.session, "c", 50_100).expect("session survived");
    let renewed = RenewRequest {
        key: "k".into(),
        owner: "a".into(),
        fencing_token: Some(g.fencing_token),
        ..Default::default()
    };
    n.renew(&renewed, 50_100).expect("the holder keeps its token");
    // Same epoch: the counter carries on.
    let mut same = LockTable::import(&snap, 3, Config::default(), 0).expect("same epoch");
    assert!(grant(&mut same, &req("new", "z", X), 0).fencing_token.counter() > snap.counter - 1);
}

#[test]
fn import_refuses_inconsistent_snapshots() {
    let mut t = table();
    grant(&mut t, &req("k", "a", X), 0);
    let mut snap = t.export();
    let mut dup = snap.locks[0].clone();
    dup.owner = "b".into();
    snap.locks.push(dup);
    assert_eq!(
        LockTable::import(&snap, 1, Config::default(), 0).expect_err("two X").field(),
        Some("snapshot")
    );
    let mut snap = t.export();
    snap.locks[0].fencing_token = FencingToken::new(1, 999);
    assert!(LockTable::import(&snap, 1, Config::default(), 0).is_err(), "token from the future");
    let mut snap = t.export();
    snap.locks[0].session = Some("77".into());
    assert!(LockTable::import(&snap, 1, Config::default(), 0).is_err(), "unknown session");
}

#[test]
fn settings_change_applies_to_new_requests_and_bad_settings_are_refused() {
    let mut t = table();
    grant(&mut t, &req("k", "a", X), 0);
    let bad = lock_core::Config { default_lease_ms: 0, ..Config::default() };
    assert_eq!(t.set_config(bad).expect_err("bad").field(), Some("lease"));
    assert_eq!(t.config().default_lease_ms, Config::default().default_lease_ms, "old kept");
    let short = lock_core::Config { default_lease_ms: 50, max_lease_ms: 50, ..Config::default() };
    t.set_config(short).expect("valid");
    assert_eq!(grant(&mut t, &req("j", "a", X), 0).lease_ms, 50);
    assert_eq!(
        t.key_info(&KeyInfoRequest::new("k"), 0).expect("info").holders[0].lease_ms,
        30_000,
        "old grant kept"
    );
    check(&t);
}
