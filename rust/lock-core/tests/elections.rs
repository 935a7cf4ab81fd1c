//! Leader elections, rule by rule (docs/LOCK_CORE.md, "Elections"): one exclusive leader per
//! election, the grant's token as the term, and the grant's `value` kept with it through
//! queueing, snapshot, delta and standby, and gone with the lock.

use crate::common;

use common::table_with;
use lock_core::{
    AcquireOutcome, AcquireRequest, Event, FencingToken, Grant, KeyInfoRequest, LockError,
    LockTable, Mode, ReleaseRequest, Scope, Standby, WatchOutcome, WatchReason, WatchRequest,
};

fn campaign(name: &str, candidate: &str, value: Option<&str>) -> AcquireRequest {
    AcquireRequest {
        scope: Scope::Election,
        value: value.map(str::to_owned),
        lease_ms: Some(60_000),
        wait_ms: Some(10_000),
        ..AcquireRequest::new(name, candidate)
    }
}

fn table() -> LockTable {
    table_with(|c| c.max_lease_ms = 600_000)
}

fn elected(t: &mut LockTable, r: &AcquireRequest, now: u64) -> Grant {
    match t.acquire(r, now) {
        Ok(AcquireOutcome::Granted(g)) => g,
        other => panic!("expected {} elected, got {other:?}", r.owner),
    }
}

fn resign(t: &mut LockTable, name: &str, candidate: &str, now: u64) {
    let req = ReleaseRequest {
        key: name.into(),
        owner: candidate.into(),
        scope: Scope::Election,
        ..Default::default()
    };
    t.release(&req, now).expect("leader");
}

fn leader_value(t: &LockTable, name: &str) -> Option<String> {
    let info = t
        .key_info(&KeyInfoRequest { scope: Scope::Election, ..KeyInfoRequest::new(name) }, 0)
        .expect("info");
    info.holders.first().and_then(|h| h.value.clone())
}

#[test]
fn the_value_follows_the_grant_and_goes_with_it() {
    let mut t = table();
    let g = elected(&mut t, &campaign("db", "a", Some("10.0.0.1")), 0);
    assert_eq!(g.value.as_deref(), Some("10.0.0.1"));
    assert!(matches!(
        t.acquire(&campaign("db", "b", Some("10.0.0.2")), 1),
        Ok(AcquireOutcome::Queued(_))
    ));
    assert_eq!(leader_value(&t, "db").as_deref(), Some("10.0.0.1"));
    resign(&mut t, "db", "a", 2);
    let promoted = t.drain_events().into_iter().find_map(|e| match e {
        Event::Granted { grants, .. } => grants.into_iter().next(),
        _ => None,
    });
    let promoted = promoted.expect("b elected");
    assert_eq!((promoted.owner.as_str(), promoted.value.as_deref()), ("b", Some("10.0.0.2")));
    assert!(promoted.fencing_token > g.fencing_token, "terms increase");
    resign(&mut t, "db", "b", 3);
    let g = elected(&mut t, &campaign("db", "c", None), 4);
    assert_eq!(g.value, None, "a value does not outlive its grant");
    t.check_invariants().expect("invariants");
}

#[test]
fn a_waiting_campaign_that_gives_up_leaves_no_value() {
    let mut t = table();
    elected(&mut t, &campaign("db", "a", None), 0);
    let r = AcquireRequest { wait_ms: Some(10), ..campaign("db", "b", Some("late")) };
    assert!(matches!(t.acquire(&r, 0), Ok(AcquireOutcome::Queued(_))));
    t.advance(20);
    resign(&mut t, "db", "a", 21);
    let g = elected(&mut t, &campaign("db", "c", None), 22);
    assert_eq!(g.value, None);
}

#[test]
fn values_survive_snapshot_delta_and_standby() {
    let mut t = table();
    t.set_change_tracking(true);
    let mut standby = Standby::from_full(&t.export_full(), 0);
    elected(&mut t, &campaign("db", "a", Some("primary")), 0);
    standby.apply(&t.take_changes(1).expect("on"), 1).expect("delta");
    for snapshot in [t.export(), standby.snapshot(1)] {
        let moved = LockTable::import(&snapshot, 2, *t.config(), 1).expect("import");
        moved.check_invariants().expect("invariants");
        assert_eq!(leader_value(&moved, "db").as_deref(), Some("primary"));
    }
    let mut bad = t.export();
    bad.locks[0].value = Some("x".repeat(1025));
    let err = LockTable::import(&bad, 2, *t.config(), 1).expect_err("too long");
    assert!(matches!(err, LockError::InvalidArgument { field: "value", .. }), "{err}");
}

#[test]
fn bad_campaigns_are_refused_naming_the_field() {
    let mut t = table();
    let long = campaign("db", "a", Some(&"v".repeat(1025)));
    let err = t.acquire(&long, 0).expect_err("too long");
    assert!(matches!(err, LockError::InvalidArgument { field: "value", .. }), "{err}");
    let exactly = campaign("db", "a", Some(&"v".repeat(1024)));
    elected(&mut t, &exactly, 0);
    let shared = AcquireRequest { mode: Mode::Shared, ..campaign("db2", "a", None) };
    let err = t.acquire(&shared, 0).expect_err("shared");
    assert!(matches!(err, LockError::InvalidArgument { field: "mode", .. }), "{err}");
    let on_key = AcquireRequest { value: Some("v".into()), ..AcquireRequest::new("k", "a") };
    let err = t.acquire(&on_key, 0).expect_err("value on a lock");
    assert!(matches!(err, LockError::InvalidArgument { field: "value", .. }), "{err}");
}

fn next_holder_watch(name: &str, wait_ms: u64) -> WatchRequest {
    WatchRequest {
        key: name.into(),
        scope: Scope::Election,
        fencing_token: FencingToken(0),
        wait_ms: Some(wait_ms),
        request_id: 7,
        revoke: false,
    }
}

#[test]
fn a_watch_for_the_next_holder_fires_when_someone_is_elected() {
    let mut t = table();
    let WatchOutcome::Watching(q) = t.watch(&next_holder_watch("db", 10_000), 0).expect("w") else {
        panic!("no leader yet: the watch waits")
    };
    t.check_invariants().expect("invariants");
    let g = elected(&mut t, &campaign("db", "a", None), 5);
    let fired: Vec<_> = t
        .drain_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::WatchFired { watch_id, fencing_token, reason, waited_ms, .. } => {
                Some((watch_id, fencing_token, reason, waited_ms))
            }
            _ => None,
        })
        .collect();
    assert_eq!(fired, [(q.waiter_id, g.fencing_token, WatchReason::Held, 5)]);
    t.check_invariants().expect("invariants");
    match t.watch(&next_holder_watch("db", 10_000), 6).expect("w") {
        WatchOutcome::Answered(w) => {
            assert_eq!((w.fencing_token, w.reason), (g.fencing_token, Some(WatchReason::Held)));
        }
        other => panic!("a leader is there: answered at once, got {other:?}"),
    }
}

#[test]
fn a_watch_for_the_next_holder_times_out_and_leaves_nothing() {
    let mut t = table();
    assert!(matches!(t.watch(&next_holder_watch("db", 100), 0), Ok(WatchOutcome::Watching(_))));
    t.advance(100);
    let timed_out = t.drain_events().into_iter().any(|e| {
        matches!(e, Event::WatchTimedOut { ref key, scope: Scope::Election, .. } if key == "db")
    });
    assert!(timed_out);
    t.check_invariants().expect("invariants");
    elected(&mut t, &campaign("db", "a", None), 101);
    assert!(t.drain_events().iter().all(|e| !matches!(e, Event::WatchFired { .. })));
    let on_lock = WatchRequest { scope: Scope::Key, ..next_holder_watch("k", 100) };
    match t.watch(&on_lock, 102).expect("w") {
        WatchOutcome::Answered(w) => assert_eq!(w.reason, Some(WatchReason::NotHeld)),
        other => panic!("token 0 on a lock is not held, got {other:?}"),
    }
}
