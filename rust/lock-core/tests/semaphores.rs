//! Counting semaphores, rule by rule (docs/LOCK_CORE.md, "Semaphores"): the checks of a
//! request, FIFO with mixed permits, and the replicated state (snapshot, delta, standby,
//! listing). The random histories are in `tests/semaphore_model.rs`.

use crate::common;

use common::{sid, table_with};
use lock_core::{
    AcquireOutcome, AcquireRequest, Event, Grant, KeyInfoRequest, ListFilter, LockError, LockItem,
    LockTable, Mode, MultiAcquireRequest, Queued, ReleaseRequest, Scope, Standby,
};

fn sem(name: &str, owner: &str, permits: u32, limit: u32) -> AcquireRequest {
    AcquireRequest {
        scope: Scope::Semaphore,
        permits: Some(permits),
        limit: Some(limit),
        lease_ms: Some(60_000),
        ..AcquireRequest::new(name, owner)
    }
}

fn waiting(r: AcquireRequest) -> AcquireRequest {
    AcquireRequest { wait_ms: Some(10_000), ..r }
}

fn table() -> LockTable {
    table_with(|c| c.max_lease_ms = 600_000)
}

fn granted(t: &mut LockTable, r: &AcquireRequest, now: u64) -> Grant {
    match t.acquire(r, now) {
        Ok(AcquireOutcome::Granted(g)) => g,
        other => panic!("expected a grant for {} by {}, got {other:?}", r.key, r.owner),
    }
}

fn queued(t: &mut LockTable, r: &AcquireRequest, now: u64) -> Queued {
    match t.acquire(r, now) {
        Ok(AcquireOutcome::Queued(q)) => q,
        other => panic!("expected {} by {} to queue, got {other:?}", r.key, r.owner),
    }
}

fn release(t: &mut LockTable, name: &str, owner: &str, now: u64) {
    let req = ReleaseRequest {
        key: name.into(),
        owner: owner.into(),
        scope: Scope::Semaphore,
        ..Default::default()
    };
    t.release(&req, now).expect("held");
}

/// The owners granted by the events drained now, in order.
fn granted_owners(t: &mut LockTable) -> Vec<String> {
    t.drain_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Granted { owner, .. } => Some(owner),
            _ => None,
        })
        .collect()
}

#[test]
fn permits_add_up_to_the_limit_and_answers_show_them() {
    let mut t = table();
    let g = granted(&mut t, &sem("api", "a", 2, 3), 0);
    assert_eq!(
        (g.permits, g.limit, g.scope, g.mode),
        (Some(2), Some(3), Scope::Semaphore, Mode::Shared)
    );
    granted(&mut t, &sem("api", "b", 1, 3), 0);
    let err = t.acquire(&sem("api", "c", 1, 3), 0).expect_err("full");
    assert!(matches!(err, LockError::Conflict { .. }), "{err}");
    let info = t
        .key_info(&KeyInfoRequest { scope: Scope::Semaphore, ..KeyInfoRequest::new("api") }, 0)
        .expect("info");
    assert_eq!(info.limit, Some(3));
    let permits: Vec<_> = info.holders.iter().map(|h| (h.owner.as_str(), h.permits)).collect();
    assert_eq!(permits, [("a", Some(2)), ("b", Some(1))]);
    let lock = t
        .key_info(&KeyInfoRequest { scope: Scope::Key, ..KeyInfoRequest::new("api") }, 0)
        .expect("info");
    assert!(lock.holders.is_empty() && lock.limit.is_none(), "a lock named api is another key");
    t.check_invariants().expect("invariants");
}

#[test]
fn a_grant_says_how_many_permits_remain_after_it() {
    let mut t = table();
    assert_eq!(granted(&mut t, &sem("pool", "a", 2, 5), 0).remaining, Some(3));
    assert_eq!(granted(&mut t, &sem("pool", "b", 3, 5), 0).remaining, Some(0));
    let q = queued(&mut t, &waiting(sem("pool", "c", 4, 5)), 0);
    release(&mut t, "pool", "b", 1);
    assert!(granted_owners(&mut t).is_empty(), "4 do not fit beside a's 2");
    release(&mut t, "pool", "a", 2);
    let remaining: Vec<_> = t
        .drain_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Granted { waiter_id, grants, .. } if waiter_id == q.waiter_id => {
                Some(grants[0].remaining)
            }
            _ => None,
        })
        .collect();
    assert_eq!(remaining, [Some(1)], "the waiter's grant, after it");
    assert_eq!(granted(&mut t, &AcquireRequest::new("lock", "a"), 3).remaining, None);
    t.check_invariants().expect("invariants");
}

#[test]
fn bad_numbers_and_other_limits_are_refused_naming_the_field() {
    let mut t = table();
    let field = |e: LockError| match e {
        LockError::InvalidArgument { field, .. } => field,
        other => panic!("expected a 400, got {other:?}"),
    };
    assert_eq!(field(t.acquire(&sem("s", "a", 4, 3), 0).unwrap_err()), "permits");
    assert_eq!(field(t.acquire(&sem("s", "a", 0, 3), 0).unwrap_err()), "permits");
    assert_eq!(field(t.acquire(&sem("s", "a", 1, 0), 0).unwrap_err()), "limit");
    assert_eq!(field(t.acquire(&sem("s", "a", 1, 70_000), 0).unwrap_err()), "limit");
    let no_limit = AcquireRequest { limit: None, ..sem("s", "a", 1, 3) };
    assert_eq!(field(t.acquire(&no_limit, 0).unwrap_err()), "limit");
    let lock_with_permits = AcquireRequest { permits: Some(1), ..AcquireRequest::new("k", "a") };
    assert_eq!(field(t.acquire(&lock_with_permits, 0).unwrap_err()), "permits");
    let multi = MultiAcquireRequest {
        owner: "a".into(),
        locks: vec![LockItem { key: "s".into(), mode: Mode::Exclusive, scope: Scope::Semaphore }],
        ..Default::default()
    };
    assert_eq!(field(t.acquire_many(&multi, 0).unwrap_err()), "scope");

    granted(&mut t, &sem("s", "a", 1, 3), 0);
    match t.acquire(&sem("s", "b", 1, 4), 0) {
        Err(LockError::LimitMismatch { limit: 3, requested: 4, .. }) => {}
        other => panic!("expected a limit mismatch, got {other:?}"),
    }
    assert_eq!(field(t.acquire(&sem("s", "a", 2, 3), 0).unwrap_err()), "permits");
    let again = granted(&mut t, &sem("s", "a", 1, 3), 0);
    assert!(!again.reentrant, "no acquisition id: a new grant of the same permits");
    let first = AcquireRequest { acquisition: Some("a-1".into()), ..sem("s", "a", 1, 3) };
    let held = granted(&mut t, &first, 0);
    let retried = granted(&mut t, &first, 0);
    assert!(retried.reentrant, "the same acquisition with the same permits gets its grant back");
    assert_eq!(retried.fencing_token, held.fencing_token);
    release(&mut t, "s", "a", 1);
    let g = granted(&mut t, &sem("s", "b", 1, 4), 2);
    assert_eq!(g.limit, Some(4), "an unused semaphore takes the next acquirer's limit");
}

#[test]
fn a_large_request_is_not_overtaken_by_later_small_ones() {
    let mut t = table();
    granted(&mut t, &sem("s", "a", 2, 4), 0);
    granted(&mut t, &sem("s", "b", 1, 4), 0);
    queued(&mut t, &waiting(sem("s", "big", 3, 4)), 1);
    // One permit is free, but "big" waits ahead: FIFO.
    queued(&mut t, &waiting(sem("s", "small", 1, 4)), 2);
    let err = t.acquire(&sem("s", "try", 1, 4), 3).expect_err("a waiter is ahead");
    assert!(matches!(err, LockError::Conflict { .. }), "{err}");
    release(&mut t, "s", "b", 4);
    assert!(granted_owners(&mut t).is_empty(), "2 free permits do not fit big's 3");
    release(&mut t, "s", "a", 5);
    assert_eq!(granted_owners(&mut t), ["big", "small"], "big first, then small fits too");
    t.check_invariants().expect("invariants");
}

#[test]
fn expired_leases_give_their_permits_back() {
    let mut t = table();
    granted(&mut t, &AcquireRequest { lease_ms: Some(100), ..sem("s", "a", 2, 2) }, 0);
    queued(&mut t, &waiting(sem("s", "b", 2, 2)), 10);
    t.advance(99);
    assert!(granted_owners(&mut t).is_empty());
    t.advance(100);
    assert_eq!(granted_owners(&mut t), ["b"]);
}

#[test]
fn a_session_end_gives_its_permits_back() {
    let mut t = table();
    let s = t.create_session("a", Some(5_000), sid(1), 0).expect("session");
    granted(&mut t, &AcquireRequest { session: Some(s.session.clone()), ..sem("s", "a", 1, 1) }, 0);
    queued(&mut t, &waiting(sem("s", "b", 1, 1)), 1);
    t.end_session(&s.session, "a", 2).expect("ended");
    assert_eq!(granted_owners(&mut t), ["b"]);
}

#[test]
fn permits_and_limit_survive_snapshot_standby_and_listing() {
    let mut t = table();
    t.set_change_tracking(true);
    let mut standby = Standby::from_full(&t.export_full(), 0);
    granted(&mut t, &sem("api", "a", 2, 5), 0);
    granted(&mut t, &sem("api", "b", 3, 5), 0);
    granted(&mut t, &AcquireRequest::new("api", "c"), 0);
    standby.apply(&t.take_changes(1).expect("on"), 1).expect("delta");
    let listed = t.list_page(&ListFilter::default()).locks;
    let shown: Vec<_> = listed.iter().map(|l| (l.scope, l.owner.as_str(), l.permits)).collect();
    assert_eq!(
        shown,
        [
            (Scope::Key, "c", None),
            (Scope::Semaphore, "a", Some(2)),
            (Scope::Semaphore, "b", Some(3))
        ]
    );
    let only =
        t.list_page(&ListFilter { scope: Some(Scope::Semaphore), size: 1, ..Default::default() });
    assert_eq!(only.locks.iter().map(|l| l.owner.as_str()).collect::<Vec<_>>(), ["a"]);
    let after = only.next;
    let rest =
        t.list_page(&ListFilter { scope: Some(Scope::Semaphore), after, ..Default::default() });
    assert_eq!((rest.locks.len(), rest.locks[0].owner.as_str(), rest.next), (1, "b", None));
    for snapshot in [t.export(), standby.snapshot(1)] {
        let mut moved = LockTable::import(&snapshot, 2, *t.config(), 1).expect("import");
        moved.check_invariants().expect("invariants");
        let info = moved
            .key_info(&KeyInfoRequest { scope: Scope::Semaphore, ..KeyInfoRequest::new("api") }, 1)
            .expect("info");
        assert_eq!(info.limit, Some(5));
        let err = moved.acquire(&sem("api", "d", 1, 5), 1).expect_err("full after the move");
        assert!(matches!(err, LockError::Conflict { .. }), "{err}");
        release(&mut moved, "api", "a", 2);
        let g = granted(&mut moved, &sem("api", "d", 2, 5), 2);
        assert_eq!(g.fencing_token.epoch(), 2, "tokens go on in the new epoch");
    }
    let mut bad = t.export();
    bad.locks[1].limit = Some(4);
    let err = LockTable::import(&bad, 2, *t.config(), 1).expect_err("two limits");
    assert!(matches!(err, LockError::InvalidArgument { field: "snapshot", .. }), "{err}");
    let mut same_owner = t.export();
    same_owner.locks[1].owner = "a".into();
    let err = LockTable::import(&same_owner, 2, *t.config(), 1).expect_err("owner twice");
    assert!(matches!(err, LockError::InvalidArgument { field: "snapshot", .. }), "{err}");
}

fn change(t: &mut LockTable, limit: u32, below_held: bool, now: u64) -> Result<u32, LockError> {
    t.change_semaphore_limit("api", limit, below_held, now).map(|c| c.previous)
}

#[test]
fn a_lowered_limit_revokes_nothing_and_grants_only_below_it() {
    let mut t = table();
    granted(&mut t, &sem("api", "a", 2, 5), 0);
    granted(&mut t, &sem("api", "b", 3, 5), 0);
    queued(&mut t, &waiting(sem("api", "c", 2, 5)), 0);
    let err = change(&mut t, 3, false, 1).expect_err("below the held without format 3");
    assert!(matches!(err, LockError::InvalidArgument { field: "limit", .. }), "{err}");
    assert_eq!(change(&mut t, 3, true, 1), Ok(5));
    t.check_invariants().expect("held over a lowered limit is allowed");
    let info = t
        .key_info(&KeyInfoRequest { scope: Scope::Semaphore, ..KeyInfoRequest::new("api") }, 1)
        .expect("info");
    assert_eq!((info.limit, info.holders.len()), (Some(3), 2), "nobody lost a permit");
    assert!(t.drain_events().is_empty());
    match t.acquire(&sem("api", "d", 1, 5), 1) {
        Err(LockError::LimitMismatch { limit: 3, requested: 5, .. }) => {}
        other => panic!("an acquire naming the old limit: {other:?}"),
    }
    release(&mut t, "api", "b", 2);
    assert!(granted_owners(&mut t).is_empty(), "2 held + 2 asked is over 3");
    release(&mut t, "api", "a", 3);
    assert_eq!(granted_owners(&mut t), ["c"]);
    let err = t.acquire(&sem("api", "d", 2, 3), 3).expect_err("2 + 2 > 3");
    assert!(matches!(err, LockError::Conflict { .. }), "{err}");
}

#[test]
fn a_raised_limit_grants_the_waiters_it_lets_in() {
    let mut t = table();
    let a = AcquireRequest { acquisition: Some("a-1".into()), ..sem("api", "a", 2, 3) };
    granted(&mut t, &a, 0);
    queued(&mut t, &waiting(sem("api", "b", 3, 3)), 0);
    queued(&mut t, &waiting(sem("api", "c", 1, 3)), 0);
    assert_eq!(change(&mut t, 5, false, 1), Ok(3));
    assert_eq!(granted_owners(&mut t), ["b"], "FIFO: b first; c does not fit in 5");
    assert_eq!(change(&mut t, 6, false, 2), Ok(5));
    assert_eq!(granted_owners(&mut t), ["c"]);
    let g = granted(&mut t, &AcquireRequest { limit: Some(6), ..a }, 2);
    assert!(g.reentrant && g.limit == Some(6) && g.remaining == Some(0), "{g:?}");
}

#[test]
fn a_limit_change_is_refused_on_an_unused_semaphore_or_below_a_waiter() {
    let mut t = table();
    let err = change(&mut t, 3, true, 0).expect_err("unused");
    assert!(matches!(err, LockError::NotHeld { .. }), "{err}");
    granted(&mut t, &sem("api", "a", 1, 6), 0);
    queued(&mut t, &waiting(sem("api", "b", 6, 6)), 0);
    let err = change(&mut t, 5, true, 1).expect_err("b asks for 6");
    assert!(err.to_string().contains("[b] waits for [6] permits"), "{err}");
    for bad in [0, 70_000] {
        let err = change(&mut t, bad, true, 1).expect_err("out of range");
        assert!(matches!(err, LockError::InvalidArgument { field: "limit", .. }), "{err}");
    }
    assert_eq!(
        t.key_info(&KeyInfoRequest { scope: Scope::Semaphore, ..KeyInfoRequest::new("api") }, 1)
            .expect("info")
            .limit,
        Some(6)
    );
}

#[test]
fn a_changed_limit_reaches_the_replicas_and_survives_a_move_over_it() {
    let mut t = table();
    t.set_change_tracking(true);
    let mut standby = Standby::from_full(&t.export_full(), 0);
    granted(&mut t, &sem("api", "a", 2, 5), 0);
    granted(&mut t, &sem("api", "b", 3, 5), 0);
    standby.apply(&t.take_changes(1).expect("on"), 1).expect("delta");
    change(&mut t, 2, true, 2).expect("lowered");
    let delta = t.take_changes(2).expect("on");
    assert_eq!(delta.locks.iter().map(|l| l.limit).collect::<Vec<_>>(), [Some(2), Some(2)]);
    standby.apply(&delta, 2).expect("delta");
    for snapshot in [t.export(), standby.snapshot(2)] {
        let mut moved = LockTable::import(&snapshot, 2, *t.config(), 2).expect("import over it");
        moved.check_invariants().expect("invariants");
        let info = moved
            .key_info(&KeyInfoRequest { scope: Scope::Semaphore, ..KeyInfoRequest::new("api") }, 2)
            .expect("info");
        assert_eq!((info.limit, info.holders.len()), (Some(2), 2));
        release(&mut moved, "api", "b", 3);
        let err = moved.acquire(&sem("api", "d", 1, 2), 3).expect_err("2 held of 2");
        assert!(matches!(err, LockError::Conflict { .. }), "{err}");
    }
}
