//! Acquisitions, rule by rule (docs/API.md, "Acquisitions"): the same acquisition id asked again
//! gets its grant back; any other acquire of a held lock by its owner is a new acquisition under
//! a newer token; a release, renew or downgrade that names an earlier acquisition (by id or by
//! token) never ends or changes a newer one — for locks, multi-locks, semaphores and elections,
//! through a queue, a snapshot, a delta and a standby, and for a copy of an older format.

use crate::common;

use common::*;
use lock_core::{
    AcquireRequest, FencingToken, KeyInfoRequest, LockError, LockItem, LockTable, Mode,
    MultiAcquireRequest, MultiOutcome, MultiReleaseRequest, ReleaseItem, ReleaseRequest,
    RenewRequest, Scope, Standby,
};
use Mode::Exclusive as X;

fn releasing(key: &str, token: Option<FencingToken>, acquisition: Option<&str>) -> ReleaseRequest {
    ReleaseRequest {
        key: key.into(),
        owner: "w".into(),
        fencing_token: token,
        acquisition: acquisition.map(str::to_owned),
        ..Default::default()
    }
}

fn renewing(key: &str, token: Option<FencingToken>, acquisition: Option<&str>) -> RenewRequest {
    RenewRequest {
        key: key.into(),
        owner: "w".into(),
        fencing_token: token,
        acquisition: acquisition.map(str::to_owned),
        ..Default::default()
    }
}

fn not_held<T: std::fmt::Debug>(r: Result<T, LockError>) {
    assert!(matches!(r, Err(LockError::NotHeld { .. })), "expected not held, got {r:?}");
}

#[test]
fn a_late_release_of_an_earlier_acquisition_never_ends_the_newer_one() {
    let mut t = table();
    let first = grant(&mut t, &acq(req("k", "w", X), "w-1"), 0);
    // The release of w-1 is held up somewhere; the worker acquires again as w-2.
    let second = grant(&mut t, &acq(req("k", "w", X), "w-2"), 10);
    assert!(!second.reentrant && second.fencing_token > first.fencing_token, "{second:?}");
    // The late release, whatever it names of w-1, ends nothing.
    not_held(t.release(&releasing("k", None, Some("w-1")), 20));
    not_held(t.release(&releasing("k", Some(first.fencing_token), None), 20));
    not_held(t.release(&releasing("k", Some(first.fencing_token), Some("w-1")), 20));
    not_held(t.renew(&renewing("k", None, Some("w-1")), 20));
    not_held(t.release(&releasing("k", Some(first.fencing_token), Some("w-2")), 20));
    conflict(&mut t, &req("k", "other", X), 20);
    // A retry of w-2 gets w-2's grant back; w-2 renews and releases.
    let retried = grant(&mut t, &acq(req("k", "w", X), "w-2"), 30);
    assert!(retried.reentrant && retried.fencing_token == second.fencing_token);
    t.renew(&renewing("k", None, Some("w-2")), 40).expect("w-2 renews");
    t.release(&releasing("k", Some(second.fencing_token), Some("w-2")), 50).expect("w-2");
    grant(&mut t, &req("k", "other", X), 60);
    check(&t);
}

#[test]
fn without_ids_every_acquire_is_new_and_only_its_token_names_it() {
    let mut t = table();
    let first = grant(&mut t, &req("k", "w", X), 0);
    let second = grant(&mut t, &req("k", "w", X), 10);
    assert!(!second.reentrant && second.fencing_token > first.fencing_token);
    not_held(t.release(&releasing("k", Some(first.fencing_token), None), 20));
    // An id names a lock acquired without one only together with its token.
    not_held(t.release(&releasing("k", None, Some("w-1")), 20));
    t.release(&releasing("k", Some(second.fencing_token), Some("w-1")), 20).expect("token");
    check(&t);
}

#[test]
fn an_acquisition_id_is_checked_like_an_owner() {
    let mut t = table();
    let long = "a".repeat(lock_core::MAX_ACQUISITION_BYTES + 1);
    for bad in ["", "  ", "a\u{7}b", long.as_str()] {
        let e = t.acquire(&acq(req("k", "w", X), bad), 0).expect_err("bad id");
        assert_eq!(e.field(), Some("acquisition"), "{bad:?}: {e}");
        let e = t.release(&releasing("k", None, Some(bad)), 0).expect_err("bad id");
        assert_eq!(e.field(), Some("acquisition"), "{bad:?}: {e}");
    }
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn a_queued_acquisition_is_granted_under_its_id() {
    let mut t = table();
    grant(&mut t, &req("k", "a", X), 0);
    queue(&mut t, &acq(waiting("k", "w", X, 10_000), "w-1"), 0);
    release(&mut t, "k", "a", 5);
    let granted = granted_owners(&t.drain_events());
    assert_eq!(granted, ["w"]);
    let retried = grant(&mut t, &acq(req("k", "w", X), "w-1"), 6);
    assert!(retried.reentrant, "the waiter's id came with its grant");
    t.release(&releasing("k", None, Some("w-1")), 7).expect("released by id");
    check(&t);
}

#[test]
fn a_multi_lock_is_one_acquisition() {
    let mut t = table();
    let locks = vec![
        LockItem { key: "{o}a".into(), mode: X, scope: Scope::Key },
        LockItem { key: "{o}b".into(), mode: X, scope: Scope::Key },
    ];
    let multi = |id: &str| MultiAcquireRequest {
        owner: "w".into(),
        locks: locks.clone(),
        acquisition: Some(id.into()),
        ..Default::default()
    };
    let MultiOutcome::Granted(first) = t.acquire_many(&multi("m-1"), 0).expect("grant") else {
        panic!("queued")
    };
    let MultiOutcome::Granted(again) = t.acquire_many(&multi("m-1"), 1).expect("grant") else {
        panic!("queued")
    };
    assert!(again.iter().all(|g| g.reentrant), "{again:?}");
    let MultiOutcome::Granted(newer) = t.acquire_many(&multi("m-2"), 2).expect("grant") else {
        panic!("queued")
    };
    assert!(newer.iter().zip(&first).all(|(n, f)| n.fencing_token > f.fencing_token));
    let items: Vec<ReleaseItem> = ["{o}a", "{o}b"]
        .iter()
        .map(|k| ReleaseItem { key: (*k).into(), scope: Scope::Key, fencing_token: None })
        .collect();
    let by = |id: &str| MultiReleaseRequest {
        owner: "w".into(),
        locks: items.clone(),
        acquisition: Some(id.into()),
        ..Default::default()
    };
    assert!(t.release_many(&by("m-1"), 3).expect("nothing of m-1").is_empty());
    assert_eq!(t.release_many(&by("m-2"), 3).expect("m-2").len(), 2);
    check(&t);
}

#[test]
fn a_semaphore_and_an_election_follow_the_same_rule() {
    let mut t = table();
    let permit = |id: &str| AcquireRequest {
        scope: Scope::Semaphore,
        permits: Some(2),
        limit: Some(3),
        acquisition: Some(id.into()),
        ..AcquireRequest::new("s", "w")
    };
    let first = grant(&mut t, &permit("w-1"), 0);
    let second = grant(&mut t, &permit("w-2"), 1);
    assert!(!second.reentrant && second.fencing_token > first.fencing_token);
    assert_eq!(t.held_locks(), 1, "still one grant");
    let late = ReleaseRequest { scope: Scope::Semaphore, ..releasing("s", None, Some("w-1")) };
    not_held(t.release(&late, 2));
    let lead = |id: &str| AcquireRequest {
        scope: Scope::Election,
        acquisition: Some(id.into()),
        ..AcquireRequest::new("e", "w")
    };
    let term1 = grant(&mut t, &lead("w-1"), 0).fencing_token;
    assert_eq!(grant(&mut t, &lead("w-1"), 1).fencing_token, term1, "a retry keeps the term");
    let with_value = AcquireRequest { value: Some("10.0.0.7".into()), ..lead("w-1") };
    assert_eq!(grant(&mut t, &with_value, 1).value.as_deref(), Some("10.0.0.7"));
    let term2 = grant(&mut t, &lead("w-2"), 2).fencing_token;
    assert!(term2 > term1, "a new campaign of the leader is a new term");
    let info = t
        .key_info(&KeyInfoRequest { scope: Scope::Election, ..KeyInfoRequest::new("e") }, 2)
        .expect("info");
    assert_eq!(info.holders[0].value, None, "the new leadership published no value");
    let resign = ReleaseRequest { scope: Scope::Election, ..releasing("e", Some(term1), None) };
    not_held(t.release(&resign, 3));
    check(&t);
}

#[test]
fn a_copy_keeps_the_acquisition_and_an_older_format_leaves_it_out() {
    let mut t = table();
    t.set_change_tracking(true);
    let mut standby = Standby::from_full(&t.export_full(), 0);
    let g = grant(&mut t, &acq(req("k", "w", X), "w-1"), 0);
    let delta = t.take_changes(10).expect("on");
    assert!(delta.locks.iter().all(|l| l.acquisition.is_some()), "{delta:?}");
    standby.apply(&delta, 10).expect("delta");
    for snapshot in [t.export(), standby.snapshot(10)] {
        let mut moved = LockTable::import(&snapshot, 2, *t.config(), 10).expect("import");
        let retried = grant(&mut moved, &acq(req("k", "w", X), "w-1"), 10);
        assert!(retried.reentrant && retried.fencing_token == g.fencing_token, "{retried:?}");
        not_held(moved.release(&releasing("k", None, Some("w-0")), 11));
        moved.release(&releasing("k", None, Some("w-1")), 11).expect("by id");
    }
    let listed = t.list_page(&Default::default()).locks;
    assert!(listed.iter().all(|l| l.acquisition.is_none()), "a listing shows no digest");
    // A copy of format 3 does not keep the id: the lock is then named by id and token together.
    let mut old = t.export();
    old.set_format(3);
    assert!(!serde_json::to_string(&old).expect("json").contains("acquisition"));
    let mut moved = LockTable::import(&old, 2, *t.config(), 10).expect("import");
    not_held(moved.release(&releasing("k", None, Some("w-1")), 11));
    moved.release(&releasing("k", Some(g.fencing_token), Some("w-1")), 11).expect("token");
}
