//! Replication support, piece by piece: change tracking on the primary
//! ([`LockTable::take_changes`]), the replica's [`Standby`] and promotion with
//! [`LockTable::import`]. The random histories are in `tests/replication_model.rs`.

use crate::common;

use common::{grant, queue, release, req, sid, table_with, waiting};
use lock_core::{
    AcquireRequest, KeyInfoRequest, LockError, LockItem, LockTable, Mode, MultiAcquireRequest,
    MultiOutcome, PartitionSnapshot, ReleaseRequest, RenewRequest, Scope, Standby,
};

/// A primary with tracking on and a standby started from its full state at `now`.
fn pair(now: u64) -> (LockTable, Standby) {
    let mut t = table_with(|c| c.max_lease_ms = 600_000);
    t.set_change_tracking(true);
    let s = Standby::from_full(&t.export_full(), now);
    (t, s)
}

/// Takes the primary's changes and applies them at the same `now`.
fn sync(t: &mut LockTable, s: &mut Standby, now: u64) {
    let d = t.take_changes(now).expect("tracking is on");
    s.apply(&d, now).expect("delta follows");
}

/// A snapshot with its locks in one canonical order (a multi-key grant shares a token).
fn canon(mut p: PartitionSnapshot) -> PartitionSnapshot {
    p.locks.sort_by(|a, b| {
        (a.fencing_token, a.scope, &a.key).cmp(&(b.fencing_token, b.scope, &b.key))
    });
    p
}

fn assert_in_sync(t: &LockTable, s: &Standby, now: u64) {
    assert_eq!(canon(s.snapshot(now)), canon(t.export()));
}

#[test]
fn tracking_is_off_by_default_and_take_refuses_then() {
    let mut t = table_with(|_| {});
    assert!(!t.change_tracking());
    grant(&mut t, &req("k", "a", Mode::Exclusive), 0);
    let err = t.take_changes(1).expect_err("off");
    assert!(matches!(err, LockError::InvalidArgument { field: "change_tracking", .. }), "{err}");
    assert_eq!(t.now(), 0, "a refused take does not advance time");
    let imported = LockTable::import(&t.export(), 2, *t.config(), 5).expect("import");
    assert!(!imported.change_tracking(), "an imported table starts with tracking off too");
}

#[test]
fn a_take_lists_grants_releases_sessions_and_the_counter() {
    let (mut t, mut s) = pair(0);
    let g = grant(&mut t, &req("k", "a", Mode::Exclusive), 10);
    let sess = t.create_session("b", Some(5_000), sid(1), 10).expect("session");
    let d = t.take_changes(20).expect("on");
    assert_eq!((d.seq, d.epoch, d.counter), (1, 1, 1));
    assert_eq!(d.locks.len(), 1);
    assert_eq!(d.locks[0].fencing_token, g.fencing_token);
    assert_eq!(d.locks[0].lease_ms, g.lease_ms - 10, "time left at the take");
    assert_eq!(d.sessions.len(), 1);
    assert_eq!(d.sessions[0].expires_in_ms, 4_990);
    s.apply(&d, 20).expect("apply");
    assert_in_sync(&t, &s, 20);

    release(&mut t, "k", "a", 30);
    t.end_session(&sess.session, "b", 30).expect("end");
    let d = t.take_changes(30).expect("on");
    assert_eq!(d.seq, 2);
    assert!(d.locks.is_empty() && d.sessions.is_empty());
    assert_eq!(d.released.len(), 1);
    assert_eq!(d.released[0].fencing_token, g.fencing_token);
    assert_eq!(d.ended_sessions, vec![sess.session.clone()]);
    s.apply(&d, 30).expect("apply");
    assert_eq!((s.held_locks(), s.sessions(), s.counter()), (0, 0, 1));
    assert_in_sync(&t, &s, 30);
    let empty = t.take_changes(40).expect("on");
    assert_eq!(empty.seq, 2, "an empty take keeps the seq: nothing to send");
    assert!(empty.is_empty());
    release_nothing_then_grant(&mut t, &mut s);
}

#[test]
fn a_seq_gap_is_refused_and_asks_for_a_full_state() {
    let (mut t, mut s) = pair(0);
    grant(&mut t, &req("k", "a", Mode::Exclusive), 1);
    let _lost = t.take_changes(1).expect("on");
    grant(&mut t, &req("j", "a", Mode::Exclusive), 2);
    let d2 = t.take_changes(2).expect("on");
    let err = s.apply(&d2, 2).expect_err("gap");
    assert!(err.to_string().contains("send a full state"), "{err}");
    assert_eq!((s.seq(), s.held_locks()), (0, 0), "nothing applied");
    let mut s = Standby::from_full(&t.export_full(), 2);
    assert_eq!(s.seq(), 2);
    assert_in_sync(&t, &s, 2);
    grant(&mut t, &req("m", "a", Mode::Exclusive), 3);
    sync(&mut t, &mut s, 3);
    assert_in_sync(&t, &s, 3);
}

#[test]
fn another_epoch_is_refused() {
    let (mut t, mut s) = pair(0);
    t.set_epoch(2).expect("epoch");
    grant(&mut t, &req("k", "a", Mode::Exclusive), 1);
    let d = t.take_changes(1).expect("on");
    let err = s.apply(&d, 1).expect_err("epoch");
    assert!(err.to_string().contains("epoch 2"), "{err}");
    let older = PartitionSnapshot { epoch: 0, ..t.export() };
    let mut old = Standby::from_full(&lock_core::FullState { seq: 0, snapshot: older }, 1);
    assert!(old.apply(&d, 1).is_err());
}

#[test]
fn the_same_delta_twice_is_a_no_op() {
    let (mut t, mut s) = pair(0);
    grant(&mut t, &req("k", "a", Mode::Exclusive), 1);
    let d1 = t.take_changes(1).expect("on");
    s.apply(&d1, 1).expect("apply");
    release(&mut t, "k", "a", 2);
    let d2 = t.take_changes(2).expect("on");
    s.apply(&d2, 2).expect("apply");
    s.apply(&d1, 3).expect("a repeated older delta is ignored");
    s.apply(&d2, 3).expect("a repeated delta is ignored");
    assert_eq!((s.seq(), s.held_locks()), (2, 0));
}

#[test]
fn removing_an_unknown_token_is_fine() {
    let (mut t, mut s) = pair(0);
    // Granted and released between two takes: the replica only hears of the removal.
    grant(&mut t, &req("k", "a", Mode::Exclusive), 1);
    release(&mut t, "k", "a", 2);
    let d = t.take_changes(3).expect("on");
    assert!(d.locks.is_empty());
    assert_eq!(d.released.len(), 1);
    s.apply(&d, 3).expect("apply");
    assert_in_sync(&t, &s, 3);
}

#[test]
fn ending_a_session_removes_its_locks_on_the_standby() {
    let (mut t, mut s) = pair(0);
    let sess = t.create_session("a", Some(1_000), sid(1), 0).expect("session");
    let r = AcquireRequest { session: Some(sess.session.clone()), ..req("k", "a", Mode::Shared) };
    grant(&mut t, &r, 1);
    sync(&mut t, &mut s, 1);
    assert_eq!(s.held_locks(), 1);
    // A delta that names only the ended session still takes its locks on the standby.
    let mut d = t.take_changes(2).expect("on");
    d.ended_sessions.push(sess.session.clone());
    d.seq = s.seq() + 1; // an empty take keeps the seq; this one is made to carry the end
    s.apply(&d, 2).expect("apply");
    assert_eq!((s.held_locks(), s.sessions()), (0, 0));
    // And the session's expiry on the primary reaches the standby.
    let (mut t, mut s) = pair(0);
    let sess = t.create_session("a", Some(1_000), sid(1), 0).expect("session");
    let r = AcquireRequest { session: Some(sess.session.clone()), ..req("k", "a", Mode::Shared) };
    grant(&mut t, &r, 1);
    sync(&mut t, &mut s, 1);
    let d = t.take_changes(1_500).expect("on");
    assert_eq!(d.ended_sessions, vec![sess.session]);
    s.apply(&d, 1_500).expect("apply");
    assert_eq!((s.held_locks(), s.sessions()), (0, 0));
    assert_in_sync(&t, &s, 1_500);
}

#[test]
fn leases_count_down_on_the_standby_from_the_apply() {
    let (mut t, mut s) = pair(0);
    grant(&mut t, &AcquireRequest { lease_ms: Some(1_000), ..req("k", "a", Mode::Exclusive) }, 0);
    let sess = t.create_session("b", Some(2_000), sid(1), 0).expect("session");
    let r =
        AcquireRequest { session: Some(sess.session.clone()), ..req("j", "b", Mode::Exclusive) };
    grant(&mut t, &r, 0);
    let d = t.take_changes(100).expect("on");
    // Applied 50 ms after the take (the transport's delay): the standby counts from there.
    s.apply(&d, 150).expect("apply");
    let at =
        |p: &PartitionSnapshot, k: &str| p.locks.iter().find(|l| l.key == k).map(|l| l.lease_ms);
    let p = s.snapshot(150);
    assert_eq!((at(&p, "k"), at(&p, "j")), (Some(900), Some(1_900)));
    assert_eq!(p.sessions[0].expires_in_ms, 1_900);
    let p = s.snapshot(650);
    assert_eq!((at(&p, "k"), at(&p, "j")), (Some(400), Some(1_400)));
    assert!(at(&p, "k") >= Some(t.export().locks[0].lease_ms.saturating_sub(550)));
    let p = s.snapshot(5_000);
    assert_eq!((at(&p, "k"), at(&p, "j")), (Some(0), Some(0)), "saturating");
    assert_eq!(p.locks[0].held_ms, 100 + 4_850);
}

#[test]
fn renew_keepalive_upgrade_and_downgrade_reach_the_standby() {
    let (mut t, mut s) = pair(0);
    let g = grant(&mut t, &req("k", "a", Mode::Shared), 0);
    let sess = t.create_session("b", Some(1_000), sid(1), 0).expect("session");
    sync(&mut t, &mut s, 0);
    let renew = RenewRequest {
        key: "k".into(),
        owner: "a".into(),
        lease_ms: Some(50_000),
        ..Default::default()
    };
    t.renew(&renew, 10).expect("renew");
    t.keepalive(&sess.session, "b", 10).expect("keepalive");
    let d = t.take_changes(10).expect("on");
    assert_eq!((d.locks.len(), d.sessions.len()), (1, 1));
    s.apply(&d, 10).expect("apply");
    assert_in_sync(&t, &s, 10);
    // An upgrade replaces the token: the old one is released on the standby.
    let up = grant(&mut t, &req("k", "a", Mode::Exclusive), 20);
    assert!(up.fencing_token > g.fencing_token);
    let d = t.take_changes(20).expect("on");
    assert_eq!(d.released[0].fencing_token, g.fencing_token);
    s.apply(&d, 20).expect("apply");
    assert_eq!(s.held_locks(), 1);
    assert_in_sync(&t, &s, 20);
    let down = lock_core::DowngradeRequest {
        key: "k".into(),
        owner: "a".into(),
        mode: Mode::Shared,
        ..Default::default()
    };
    t.downgrade(&down, 30).expect("downgrade");
    sync(&mut t, &mut s, 30);
    assert_in_sync(&t, &s, 30);
}

#[test]
fn a_multi_key_grant_shares_a_token_and_each_key_is_released_alone() {
    let (mut t, mut s) = pair(0);
    let m = MultiAcquireRequest {
        owner: "a".into(),
        locks: vec![
            LockItem { key: "x".into(), mode: Mode::Exclusive, scope: Scope::Key },
            LockItem { key: "/p/q".into(), mode: Mode::Exclusive, scope: Scope::Tree },
        ],
        ..Default::default()
    };
    let MultiOutcome::Granted(gs) = t.acquire_many(&m, 0).expect("multi") else { panic!("queued") };
    assert_eq!(gs[0].fencing_token, gs[1].fencing_token);
    sync(&mut t, &mut s, 0);
    assert_eq!(s.held_locks(), 2);
    release(&mut t, "x", "a", 1);
    sync(&mut t, &mut s, 1);
    assert_eq!(s.held_locks(), 1);
    assert_in_sync(&t, &s, 1);
}

#[test]
fn a_promoted_standby_has_every_holder_no_grace_and_larger_tokens() {
    let (mut t, mut s) = pair(0);
    let a = grant(&mut t, &req("k", "a", Mode::Exclusive), 0);
    queue(&mut t, &waiting("k", "w", Mode::Exclusive, 10_000), 0);
    let sess = t.create_session("b", Some(60_000), sid(1), 0).expect("session");
    let r =
        AcquireRequest { session: Some(sess.session.clone()), ..req("j", "b", Mode::Exclusive) };
    let b = grant(&mut t, &r, 0);
    sync(&mut t, &mut s, 5);
    let mut p =
        LockTable::import(&s.snapshot(1_000), t.epoch() + 1, *t.config(), 1_000).expect("promote");
    p.check_invariants().expect("invariants");
    assert_eq!(p.held_locks(), 2);
    assert_eq!(p.waiting(), 0, "waiters are not replicated");
    let info = p.key_info(&KeyInfoRequest::new("k"), 1_000).expect("info");
    assert_eq!(info.holders[0].fencing_token, a.fencing_token);
    p.keepalive(&sess.session, "b", 1_000).expect("the session survives");
    let release_b = ReleaseRequest {
        key: "j".into(),
        owner: "b".into(),
        fencing_token: Some(b.fencing_token),
        ..Default::default()
    };
    p.release(&release_b, 1_000).expect("release with the old token");
    let n = grant(&mut p, &req("new", "c", Mode::Exclusive), 1_000);
    assert!(n.fencing_token > b.fencing_token && n.fencing_token > a.fencing_token);
}

#[test]
fn turning_tracking_off_makes_the_standby_see_a_gap() {
    let (mut t, mut s) = pair(0);
    sync(&mut t, &mut s, 0);
    t.set_change_tracking(false);
    grant(&mut t, &req("k", "a", Mode::Exclusive), 1);
    t.set_change_tracking(true);
    let d = t.take_changes(2).expect("on");
    assert!(s.apply(&d, 2).is_err(), "a change made while off must not be skipped silently");
}

#[test]
fn a_delta_round_trips_through_json() {
    let (mut t, _) = pair(0);
    grant(&mut t, &req("k", "a", Mode::Exclusive), 0);
    release(&mut t, "k", "a", 1);
    grant(&mut t, &req("/a/b", "a", Mode::Shared).clone(), 1);
    let d = t.take_changes(2).expect("on");
    let json = serde_json::to_string(&d).expect("json");
    assert_eq!(serde_json::from_str::<lock_core::PartitionDelta>(&json).expect("parse"), d);
    let full = t.export_full();
    let json = serde_json::to_string(&full).expect("json");
    assert_eq!(serde_json::from_str::<lock_core::FullState>(&json).expect("parse"), full);
}

/// After empty takes that were never sent, the next real delta follows the standby with no gap.
fn release_nothing_then_grant(t: &mut LockTable, s: &mut Standby) {
    let _unsent = t.take_changes(50).expect("on");
    grant(t, &req("k2", "b", Mode::Exclusive), 60);
    let d = t.take_changes(60).expect("on");
    assert_eq!(d.seq, s.seq() + 1);
    s.apply(&d, 60).expect("no gap after empty takes");
    assert_eq!(s.held_locks(), 1);
}

#[test]
fn a_partition_in_grace_stays_in_grace_through_a_hand_over_and_a_standby() {
    let mut t = table_with(|c| c.max_lease_ms = 600_000);
    t.set_change_tracking(true);
    t.advance(1_000);
    t.begin_grace(11_000);
    let s = Standby::from_full(&t.export_full(), 1_000);

    let handed = t.export();
    assert_eq!(handed.grace_ms, 10_000, "grace left at the export");
    let mut moved = LockTable::import(&handed, 1, *t.config(), 5_000).expect("import");
    let refused = moved.acquire(&req("k", "a", Mode::Exclusive), 14_000);
    assert!(
        matches!(refused, Err(LockError::PartitionUnavailable { retry_after_ms: 1_000 })),
        "{refused:?}"
    );
    grant(&mut moved, &req("k", "a", Mode::Exclusive), 15_000);

    let promoted = s.snapshot(4_000);
    assert_eq!(promoted.grace_ms, 7_000, "the standby counts the grace down from its arrival");
    let mut p = LockTable::import(&promoted, 2, *t.config(), 0).expect("import");
    assert!(p.acquire(&req("k", "a", Mode::Exclusive), 6_999).is_err());
    grant(&mut p, &req("k", "a", Mode::Exclusive), 7_000);
}

#[test]
fn a_copy_that_missed_a_delta_catches_up_with_the_live_state_read_while_the_delta_is_in_flight() {
    let (mut t, mut s) = pair(0);
    grant(&mut t, &req("k", "a", Mode::Exclusive), 1);
    let missed = t.take_changes(1).expect("on"); // in flight; this copy never applies it
    grant(&mut t, &req("j", "b", Mode::Exclusive), 2); // decided, in no batch yet
    let live = t.export_full(); // what the owner answers a copy catching up
    assert_eq!(live.seq, missed.seq, "labelled with the last batch taken");
    assert!(s.older_than(&live), "the copy's standby is behind");
    let mut caught_up = Standby::from_full(&live, 2);
    assert!(!caught_up.older_than(&live), "installed: as new as the state");
    caught_up.apply(&missed, 2).expect("the missed delta is in the state: ignored");
    let next = t.take_changes(2).expect("on");
    caught_up.apply(&next, 2).expect("the next delta follows the state");
    assert_in_sync(&t, &caught_up, 2);
    s.apply(&next, 2).expect_err("without the catch-up the gap shows");
}
