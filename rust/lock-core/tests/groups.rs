//! Groups (docs/LOCK_CORE.md, "Groups"): created and deleted explicitly, members as shared holds
//! of scope `group` with their capabilities, leaving with their lease or session, watched by
//! version, and carried by snapshots and deltas to a standby that is promoted.

use crate::common;

use common::{check, sid, table_with, try_grant};
use lock_core::{
    AcquireOutcome, AcquireRequest, Event, LockError, LockTable, Mode, ReleaseRequest, Scope,
    Standby, WatchOutcome, WatchRequest,
};

fn join(group: &str, member: &str, caps: Option<&str>) -> AcquireRequest {
    AcquireRequest {
        scope: Scope::Group,
        mode: Mode::Shared,
        value: caps.map(str::to_owned),
        lease_ms: Some(10_000),
        ..AcquireRequest::new(group, member)
    }
}

fn leave(group: &str, member: &str) -> ReleaseRequest {
    ReleaseRequest {
        key: group.into(),
        owner: member.into(),
        scope: Scope::Group,
        ..Default::default()
    }
}

fn members(t: &LockTable, group: &str) -> Vec<(String, Option<String>)> {
    let info = t.group_info(group).expect("group");
    info.members.into_iter().map(|m| (m.member, m.capabilities)).collect()
}

fn table() -> LockTable {
    table_with(|c| c.max_lease_ms = 600_000)
}

#[test]
fn a_group_is_created_joined_left_and_deleted_with_the_errors_tooz_expects() {
    let mut t = table();
    let missing = t.acquire(&join("g", "a", None), 0).expect_err("no group yet");
    assert!(matches!(missing, LockError::GroupNotFound { .. }), "{missing}");
    t.create_group("g", 0).expect("create");
    let again = t.create_group("g", 0).expect_err("exists");
    assert!(matches!(again, LockError::GroupExists { .. }), "{again}");
    t.acquire(&join("g", "a", Some("{\"role\":\"x\"}")), 1).expect("join a");
    t.acquire(&join("g", "b", None), 1).expect("join b");
    let twice = t.acquire(&join("g", "a", None), 2).expect_err("a twice");
    assert!(matches!(twice, LockError::MemberExists { .. }), "{twice}");
    assert_eq!(
        members(&t, "g"),
        vec![("a".into(), Some("{\"role\":\"x\"}".into())), ("b".into(), None)]
    );
    let busy = t.delete_group("g", 2).expect_err("has members");
    assert!(matches!(busy, LockError::GroupNotEmpty { members: 2, .. }), "{busy}");
    t.release(&leave("g", "a"), 3).expect("a leaves");
    let gone = t.release(&leave("g", "a"), 3).expect_err("not a member");
    assert!(matches!(gone, LockError::NotHeld { .. }), "{gone}");
    t.release(&leave("g", "b"), 3).expect("b leaves");
    t.delete_group("g", 3).expect("empty: deleted");
    assert!(matches!(t.group_info("g"), Err(LockError::GroupNotFound { .. })));
    let left = t.release(&leave("g", "a"), 4).expect_err("no group");
    assert!(matches!(left, LockError::GroupNotFound { .. }), "{left}");
    assert!(t.group_names().is_empty());
    check(&t);
}

#[test]
fn a_retried_join_of_the_same_acquisition_gets_its_membership_back() {
    let mut t = table();
    t.create_group("g", 0).expect("create");
    let first = AcquireRequest { acquisition: Some("j-1".into()), ..join("g", "a", None) };
    let g1 = try_grant(&mut t, &first, 0).expect("join");
    let g2 = try_grant(&mut t, &first, 1).expect("retry");
    assert_eq!(g1.fencing_token, g2.fencing_token);
    assert!(g2.reentrant);
}

#[test]
fn a_member_whose_lease_or_session_runs_out_leaves_by_itself() {
    let mut t = table();
    t.create_group("g", 0).expect("create");
    t.acquire(&join("g", "leased", None), 0).expect("join");
    let s = t.create_session("sessioned", Some(3_000), sid(1), 0).expect("session");
    let by_session =
        AcquireRequest { session: Some(s.session.clone()), ..join("g", "sessioned", None) };
    t.acquire(&by_session, 0).expect("join under the session");
    t.advance(3_001);
    assert_eq!(members(&t, "g"), vec![("leased".into(), None)], "the session's member left");
    t.advance(10_001);
    assert!(members(&t, "g").is_empty(), "the lease's member left");
    t.delete_group("g", 10_001).expect("empty");
    check(&t);
}

#[test]
fn capabilities_are_updated_bounded_and_only_for_members() {
    let mut t = table();
    t.create_group("g", 0).expect("create");
    t.acquire(&join("g", "a", Some("1")), 0).expect("join");
    let m = t.update_member("g", "a", Some("2"), 0).expect("update");
    assert_eq!(m.capabilities.as_deref(), Some("2"));
    assert_eq!(members(&t, "g"), vec![("a".into(), Some("2".into()))]);
    assert!(matches!(t.update_member("g", "b", Some("x"), 0), Err(LockError::NotHeld { .. })));
    assert!(matches!(t.update_member("h", "a", None, 0), Err(LockError::GroupNotFound { .. })));
    let long = "x".repeat(1025);
    let err = t.update_member("g", "a", Some(&long), 0).expect_err("too long");
    assert!(matches!(err, LockError::InvalidArgument { field: "capabilities", .. }), "{err}");
    let exclusive = AcquireRequest { mode: Mode::Exclusive, ..join("g", "c", None) };
    assert!(matches!(
        t.acquire(&exclusive, 1),
        Err(LockError::InvalidArgument { field: "mode", .. })
    ));
    check(&t);
}

/// A watch of the group at `version`, waiting up to 60 s.
fn watch(t: &mut LockTable, version: u64, now: u64) -> WatchOutcome {
    let w = WatchRequest {
        key: "g".into(),
        scope: Scope::Group,
        fencing_token: lock_core::FencingToken(version),
        wait_ms: Some(60_000),
        request_id: 9,
        revoke: false,
    };
    t.watch(&w, now).expect("watch")
}

fn fired(t: &mut LockTable) -> Vec<u64> {
    t.drain_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::WatchFired { fencing_token, .. } => Some(fencing_token.0),
            _ => None,
        })
        .collect()
}

#[test]
fn a_watch_answers_when_the_version_is_not_the_one_it_knows() {
    let mut t = table();
    t.create_group("g", 0).expect("create");
    let empty = t.group_info("g").expect("g").version;
    assert!(matches!(watch(&mut t, empty + 1, 0), WatchOutcome::Answered(_)), "stale: at once");
    assert!(matches!(watch(&mut t, empty, 0), WatchOutcome::Watching(_)));
    let AcquireOutcome::Granted(_) = t.acquire(&join("g", "a", None), 1).expect("join") else {
        panic!("a join never queues");
    };
    let joined = t.group_info("g").expect("g").version;
    assert_ne!(joined, empty);
    assert_eq!(fired(&mut t), vec![joined], "the join fired the watch with the new version");
    assert!(matches!(watch(&mut t, joined, 2), WatchOutcome::Watching(_)));
    t.update_member("g", "a", Some("c"), 2).expect("update");
    let updated = t.group_info("g").expect("g").version;
    assert_eq!(fired(&mut t), vec![updated]);
    assert!(matches!(watch(&mut t, updated, 3), WatchOutcome::Watching(_)));
    t.release(&leave("g", "a"), 4).expect("leave");
    assert_eq!(fired(&mut t), vec![empty], "back to the empty group's version");
    assert!(matches!(watch(&mut t, empty, 5), WatchOutcome::Watching(_)));
    t.delete_group("g", 5).expect("delete");
    assert_eq!(fired(&mut t), vec![0], "a deleted group's version is 0");
    check(&t);
}

#[test]
fn groups_and_members_reach_a_standby_and_survive_its_promotion() {
    let mut t = table();
    t.set_change_tracking(true);
    let mut s = Standby::from_full(&t.export_full(), 0);
    t.create_group("g", 0).expect("create");
    t.create_group("empty", 0).expect("create");
    t.acquire(&join("g", "a", Some("caps")), 0).expect("join");
    let d = t.take_changes(1).expect("delta");
    assert_eq!(d.groups.as_deref(), Some(&["empty".to_owned(), "g".to_owned()][..]));
    s.apply(&d, 1).expect("apply");
    t.delete_group("empty", 1).expect("delete");
    let d = t.take_changes(2).expect("delta");
    s.apply(&d, 2).expect("apply");
    let no_change = t.take_changes(3).expect("delta");
    assert!(no_change.groups.is_none(), "unchanged groups are not sent again");
    let promoted = LockTable::import(&s.snapshot(3), 2, *t.config(), 3).expect("promote");
    assert_eq!(promoted.group_names(), vec!["g".to_owned()]);
    assert_eq!(members(&promoted, "g"), vec![("a".into(), Some("caps".into()))]);
    check(&promoted);
}

#[test]
fn a_snapshot_with_a_member_of_a_group_it_does_not_list_is_refused() {
    let mut t = table();
    t.create_group("g", 0).expect("create");
    t.acquire(&join("g", "a", None), 0).expect("join");
    let mut snap = t.export();
    assert_eq!(snap.groups, vec!["g".to_owned()]);
    LockTable::import(&snap, 2, *t.config(), 1).expect("as exported");
    snap.groups.clear();
    let err = LockTable::import(&snap, 2, *t.config(), 1).expect_err("member of no group");
    assert!(matches!(err, LockError::InvalidArgument { field: "snapshot", .. }), "{err}");
}

#[test]
fn a_group_is_joined_alone_never_in_a_multi_lock() {
    let mut t = table();
    t.create_group("g", 0).expect("create");
    let multi = lock_core::MultiAcquireRequest {
        owner: "a".into(),
        locks: vec![lock_core::LockItem {
            key: "g".into(),
            mode: Mode::Exclusive,
            scope: Scope::Group,
        }],
        ..Default::default()
    };
    let err = t.acquire_many(&multi, 0).expect_err("refused");
    assert!(matches!(err, LockError::InvalidArgument { field: "locks", .. }), "{err}");
}
