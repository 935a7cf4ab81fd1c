//! Lock-delay, rule by rule (docs/LOCK_CORE.md, "Lock-delay"): a lock granted with a delay that
//! ends without its holder's release keeps its keys from other owners, in its modes, for the
//! delay; its owner takes them back at once; a release leaves no delay; the delay survives a
//! snapshot, a delta and a standby; bad requests are refused naming the field.

use crate::common;

use common::{
    check, conflict, grant, granted_owners, queue, release, req, table, table_with, tree,
};
use lock_core::{
    AcquireRequest, Config, ForceReleaseRequest, KeyInfoRequest, LockError, LockTable, Mode,
    MultiAcquireRequest, Scope, Standby, MAX_LOCK_DELAY_MS,
};

/// `key` by `owner`, exclusive, with a 100 ms lease and a lock-delay of `delay` ms.
fn delayed(key: &str, owner: &str, delay: u64) -> AcquireRequest {
    AcquireRequest {
        lease_ms: Some(100),
        lock_delay_ms: Some(delay),
        ..req(key, owner, Mode::Exclusive)
    }
}

#[test]
fn an_expired_lock_keeps_its_key_from_others_for_the_delay_and_not_from_its_owner() {
    let mut t = table();
    let old = grant(&mut t, &delayed("k", "a", 500), 0);
    t.advance(100);
    let events = t.drain_events();
    assert!(matches!(events[..], [lock_core::Event::LeaseExpired { .. }]), "{events:?}");
    check(&t);
    conflict(&mut t, &req("k", "b", Mode::Exclusive), 100);
    let info = t.key_info(&KeyInfoRequest::new("k"), 100).expect("info");
    assert!(info.holders.is_empty());
    assert_eq!(info.lock_delays.len(), 1);
    assert_eq!((info.lock_delays[0].owner.as_str(), info.lock_delays[0].delay_left_ms), ("a", 500));
    let w = queue(&mut t, &common::waiting("k", "b", Mode::Exclusive, 10_000), 300);
    conflict(&mut t, &req("k", "c", Mode::Shared), 599);
    t.advance(599);
    assert!(t.drain_events().is_empty(), "still delayed at 599");
    t.advance(600);
    let events = t.drain_events();
    assert_eq!(granted_owners(&events), ["b"], "the waiter goes in when the delay ends");
    assert!(
        matches!(&events[0], lock_core::Event::Granted { waiter_id, .. } if *waiter_id == w.waiter_id)
    );
    check(&t);

    let mut t = table();
    grant(&mut t, &delayed("k", "a", 500), 0);
    t.advance(100);
    let back = grant(&mut t, &req("k", "a", Mode::Exclusive), 101);
    assert!(back.fencing_token > old.fencing_token && !back.reentrant, "its owner takes it back");
    check(&t);
}

#[test]
fn a_release_or_an_ended_session_leaves_no_delay_and_a_force_release_or_expired_session_does() {
    let mut t = table();
    grant(&mut t, &delayed("k", "a", 500), 0);
    release(&mut t, "k", "a", 10);
    grant(&mut t, &req("k", "b", Mode::Exclusive), 10);
    release(&mut t, "k", "b", 11);

    grant(&mut t, &delayed("k", "a", 500), 20);
    t.force_release(&ForceReleaseRequest::new("k"), 30).expect("forced");
    conflict(&mut t, &req("k", "b", Mode::Exclusive), 31);
    grant(&mut t, &req("k", "b", Mode::Exclusive), 530);
    release(&mut t, "k", "b", 531);

    let s = t.create_session("a", Some(1_000), common::sid(1), 600).expect("session").session;
    let with_session =
        |key: &str| AcquireRequest { session: Some(s.clone()), ..delayed(key, "a", 500) };
    grant(&mut t, &with_session("ended"), 600);
    grant(&mut t, &with_session("expired"), 600);
    t.end_session(&s, "a", 700).expect("ended");
    grant(&mut t, &req("ended", "b", Mode::Exclusive), 700);
    let s2 = t.create_session("a", Some(1_000), common::sid(2), 700).expect("session").session;
    let req2 = AcquireRequest { session: Some(s2), ..delayed("x", "a", 500) };
    grant(&mut t, &req2, 700);
    t.advance(1_700);
    t.drain_events();
    conflict(&mut t, &req("x", "b", Mode::Exclusive), 1_700);
    grant(&mut t, &req("x", "b", Mode::Exclusive), 2_200);
    check(&t);
}

#[test]
fn a_delay_keeps_the_modes_of_the_lock_a_shared_one_lets_readers_in_a_tree_one_its_ancestors() {
    let mut t = table();
    let shared = AcquireRequest { mode: Mode::Shared, ..delayed("k", "a", 500) };
    grant(&mut t, &shared, 0);
    t.advance(100);
    grant(&mut t, &req("k", "b", Mode::Shared), 100);
    conflict(&mut t, &req("k", "c", Mode::Exclusive), 100);

    let deep = AcquireRequest {
        lease_ms: Some(100),
        lock_delay_ms: Some(500),
        ..tree("/a/b", "a", Mode::Exclusive)
    };
    grant(&mut t, &deep, 200);
    t.advance(300);
    t.drain_events();
    conflict(&mut t, &tree("/a", "c", Mode::Exclusive), 300);
    conflict(&mut t, &tree("/a/b", "c", Mode::Shared), 300);
    grant(&mut t, &tree("/a/c", "c", Mode::Exclusive), 300);
    grant(&mut t, &tree("/a", "c", Mode::Exclusive), 800);
    check(&t);
}

#[test]
fn the_setting_applies_unless_a_request_says_otherwise_and_bad_delays_are_refused() {
    let mut t = table_with(|c| c.default_lock_delay_ms = 400);
    grant(&mut t, &AcquireRequest { lease_ms: Some(100), ..req("k", "a", Mode::Exclusive) }, 0);
    grant(&mut t, &AcquireRequest { lock_delay_ms: Some(0), ..delayed("off", "a", 0) }, 0);
    t.advance(100);
    conflict(&mut t, &req("k", "b", Mode::Exclusive), 100);
    grant(&mut t, &req("off", "b", Mode::Exclusive), 100);
    grant(&mut t, &req("k", "b", Mode::Exclusive), 500);

    let field = |e: LockError| match e {
        LockError::InvalidArgument { field, .. } => field,
        other => panic!("expected a 400, got {other:?}"),
    };
    let too_long = delayed("long", "a", MAX_LOCK_DELAY_MS + 1);
    assert_eq!(field(t.acquire(&too_long, 500).unwrap_err()), "lock_delay_ms");
    let sem = AcquireRequest { scope: Scope::Semaphore, limit: Some(2), ..delayed("s", "a", 100) };
    assert_eq!(field(t.acquire(&sem, 500).unwrap_err()), "lock_delay_ms");
    let sem_default = AcquireRequest { lock_delay_ms: None, ..sem };
    grant(&mut t, &sem_default, 500);
    let many = MultiAcquireRequest {
        owner: "m".into(),
        locks: vec![lock_core::LockItem {
            key: "m1".into(),
            mode: Mode::Exclusive,
            scope: Scope::Key,
        }],
        lease_ms: Some(100),
        lock_delay_ms: Some(300),
        ..Default::default()
    };
    t.acquire_many(&many, 500).expect("multi");
    t.advance(600);
    conflict(&mut t, &req("m1", "b", Mode::Exclusive), 600);
    assert!(Config { default_lock_delay_ms: MAX_LOCK_DELAY_MS + 1, ..Config::default() }
        .validate()
        .is_err());
    check(&t);
}

#[test]
fn delays_running_and_asked_for_survive_a_snapshot_a_delta_and_a_standby() {
    let mut t = table();
    t.set_change_tracking(true);
    let mut standby = Standby::from_full(&t.export_full(), 0);
    grant(&mut t, &delayed("running", "a", 10_000), 0);
    let asked = AcquireRequest { lease_ms: Some(60_000), ..delayed("asked", "a", 10_000) };
    grant(&mut t, &asked, 0);
    t.advance(100);
    t.drain_events();
    let delta = t.take_changes(100).expect("on");
    assert_eq!(delta.delays.len(), 1, "{delta:?}");
    assert_eq!(delta.locks.iter().map(|l| l.lock_delay_ms).collect::<Vec<_>>(), [Some(10_000)]);
    standby.apply(&delta, 100).expect("delta");
    for snapshot in [t.export(), standby.snapshot(1_100)] {
        let mut moved = LockTable::import(&snapshot, 2, *t.config(), 1_100).expect("import");
        check(&moved);
        conflict(&mut moved, &req("running", "b", Mode::Exclusive), 1_100);
        grant(&mut moved, &req("running", "a", Mode::Exclusive), 1_100);
        moved.force_release(&ForceReleaseRequest::new("asked"), 1_200).expect("forced");
        conflict(&mut moved, &req("asked", "b", Mode::Exclusive), 1_200);
        grant(&mut moved, &req("asked", "b", Mode::Exclusive), 11_200);
        check(&moved);
    }
    let gone = standby.snapshot(20_000);
    assert!(gone.delays.is_empty(), "a standby drops delays whose time ran out");
}

#[test]
fn a_state_written_for_format_2_readers_leaves_out_delays_and_priorities() {
    let mut t = table();
    t.set_change_tracking(true);
    let background = AcquireRequest {
        priority: Some(lock_core::PriorityValue::Level(2)),
        ..delayed("asked", "a", 1_000)
    };
    grant(&mut t, &AcquireRequest { lease_ms: Some(60_000), ..background }, 0);
    grant(&mut t, &delayed("running", "a", 1_000), 0);
    t.advance(100);
    let mut delta = t.take_changes(100).expect("on");
    let mut snapshot = t.export();
    assert!(!snapshot.delays.is_empty() && snapshot.locks[0].priority == Some(2));
    snapshot.set_format(2);
    delta.set_format(2);
    assert!(snapshot.delays.is_empty() && delta.delays.is_empty());
    for l in snapshot.locks.iter().chain(&delta.locks) {
        assert_eq!((l.lock_delay_ms, l.priority), (None, None), "{l:?}");
    }
    let text = serde_json::to_string(&snapshot).expect("json");
    assert!(
        !text.contains("lock_delay") && !text.contains("priority") && !text.contains("delays"),
        "{text}"
    );
    snapshot.set_format(3);
    assert_eq!(snapshot.format, 3);
}
