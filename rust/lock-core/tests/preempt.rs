//! Preemption with notice, rule by rule (docs/LOCK_CORE.md, "Preemption"): a waiter that asks
//! for it makes every holder of lower priority in its way be told (a watch that asked for notices
//! ends with `revoke_requested` and the grace), and takes the lock when the grace ends if the
//! holder still holds it; a holder that releases in time is not preempted; a holder of equal or
//! higher priority is not asked; a preempted holder's renewal says it was preempted; the
//! grant's priority survives a snapshot.

use crate::common;

use common::{check, grant, granted_owners, queue, release, req, table, with_priority};
use lock_core::{
    AcquireRequest, Event, FencingToken, LockError, LockTable, Mode, RenewRequest, Scope,
    WatchOutcome, WatchReason, WatchRequest,
};

/// `owner`'s try-lock of `key` at `priority` with a 60 s lease.
fn held_at(key: &str, owner: &str, priority: i64) -> AcquireRequest {
    AcquireRequest {
        lease_ms: Some(60_000),
        ..with_priority(req(key, owner, Mode::Exclusive), priority)
    }
}

/// `owner` waits for `key` at `priority`, preempting with `grace` ms.
fn preempting(key: &str, owner: &str, priority: i64, grace: u64) -> AcquireRequest {
    AcquireRequest {
        wait_ms: Some(60_000),
        preempt_ms: Some(grace),
        ..held_at(key, owner, priority)
    }
}

fn notice_watch(key: &str, token: FencingToken) -> WatchRequest {
    WatchRequest {
        key: key.into(),
        scope: Scope::Key,
        fencing_token: token,
        wait_ms: Some(60_000),
        request_id: 5,
        revoke: true,
    }
}

fn renew(t: &mut LockTable, key: &str, owner: &str, now: u64) -> Result<(), LockError> {
    let r = RenewRequest { key: key.into(), owner: owner.into(), ..Default::default() };
    t.renew(&r, now).map(|_| ())
}

#[test]
fn a_holder_of_lower_priority_is_told_and_preempted_when_its_grace_ends() {
    let mut t = table();
    let old = grant(&mut t, &held_at("k", "batch", 2), 0);
    let watching =
        matches!(t.watch(&notice_watch("k", old.fencing_token), 0), Ok(WatchOutcome::Watching(_)));
    let plain =
        WatchRequest { revoke: false, request_id: 6, ..notice_watch("k", old.fencing_token) };
    t.watch(&plain, 0).expect("plain watch");
    assert!(watching);
    let w = queue(&mut t, &preempting("k", "ui", 7, 500), 10);
    let events = t.drain_events();
    match &events[..] {
        [Event::WatchFired {
            reason: WatchReason::RevokeRequested,
            grace_ms: Some(500),
            request_id: 5,
            ..
        }] => {}
        other => panic!("expected the notice to the watch that asked, got {other:?}"),
    }
    let late = t.watch(&notice_watch("k", old.fencing_token), 200).expect("watch");
    match late {
        WatchOutcome::Answered(a) => {
            assert_eq!((a.reason, a.grace_ms), (Some(WatchReason::RevokeRequested), Some(310)));
        }
        other => panic!("a watch after the notice is answered at once: {other:?}"),
    }
    renew(&mut t, "k", "batch", 300).expect("the holder keeps its lock through the grace");
    t.advance(509);
    assert!(t.drain_events().is_empty());
    check(&t);
    t.advance(510);
    let events = t.drain_events();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::WatchFired { reason: WatchReason::Preempted, request_id: 6, .. }
        )),
        "{events:?}"
    );
    assert_eq!(granted_owners(&events), ["ui"]);
    let granted = events.iter().find_map(|e| match e {
        Event::Granted { waiter_id, grants, .. } if *waiter_id == w.waiter_id => {
            Some(grants[0].fencing_token)
        }
        _ => None,
    });
    assert!(granted.expect("granted") > old.fencing_token);
    match renew(&mut t, "k", "batch", 520) {
        Err(e @ LockError::Preempted { .. }) => assert!(e.to_string().contains("preempted"), "{e}"),
        other => panic!("a renewal after the preemption: {other:?}"),
    }
    assert_eq!(t.stats().counters.preemptions, 1);
    assert_eq!(t.stats().counters.revokes_requested, 1);
    check(&t);
}

#[test]
fn a_holder_that_releases_within_the_grace_is_not_preempted() {
    let mut t = table();
    grant(&mut t, &held_at("k", "batch", 2), 0);
    queue(&mut t, &preempting("k", "ui", 7, 500), 0);
    release(&mut t, "k", "batch", 100);
    assert_eq!(granted_owners(&t.drain_events()), ["ui"]);
    t.advance(1_000);
    assert!(t.drain_events().is_empty(), "nothing left to preempt");
    assert_eq!(t.stats().counters.preemptions, 0);
    match renew(&mut t, "k", "batch", 1_000) {
        Err(LockError::NotHeld { .. }) => {}
        other => panic!("a released lock is plainly not held: {other:?}"),
    }
    check(&t);
}

#[test]
fn holders_of_equal_or_higher_priority_and_waiters_without_preempt_take_nothing() {
    let mut t = table();
    grant(&mut t, &held_at("same", "a", 7), 0);
    grant(&mut t, &held_at("plain", "a", 2), 0);
    queue(&mut t, &preempting("same", "b", 7, 100), 0);
    queue(&mut t, &AcquireRequest { wait_ms: Some(60_000), ..held_at("plain", "b", 9) }, 0);
    t.advance(1_000);
    assert!(granted_owners(&t.drain_events()).is_empty());
    assert_eq!(t.stats().counters.revokes_requested, 0);
    check(&t);
}

#[test]
fn a_revoke_lapses_when_its_preempter_stops_waiting() {
    let mut t = table();
    grant(&mut t, &held_at("k", "batch", 2), 0);
    let short = AcquireRequest { wait_ms: Some(100), ..preempting("k", "ui", 7, 500) };
    queue(&mut t, &short, 0);
    t.advance(600);
    let events = t.drain_events();
    assert!(events.iter().any(|e| matches!(e, Event::WaitTimedOut { .. })), "{events:?}");
    assert_eq!(t.stats().counters.preemptions, 0, "nobody waits for it any more");
    renew(&mut t, "k", "batch", 600).expect("still held");
    check(&t);
}

#[test]
fn bad_preemptions_are_refused_and_a_grants_priority_survives_a_snapshot() {
    let mut t = table();
    let field = |e: LockError| match e {
        LockError::InvalidArgument { field, .. } => field,
        other => panic!("expected a 400, got {other:?}"),
    };
    let no_wait = AcquireRequest { wait_ms: None, ..preempting("k", "ui", 7, 100) };
    grant(&mut t, &held_at("k", "batch", 2), 0);
    assert_eq!(field(t.acquire(&no_wait, 0).unwrap_err()), "preempt_ms");
    let sem =
        AcquireRequest { scope: Scope::Semaphore, limit: Some(1), ..preempting("s", "ui", 7, 100) };
    assert_eq!(field(t.acquire(&sem, 0).unwrap_err()), "preempt_ms");
    let mut moved = LockTable::import(&t.export(), 2, *t.config(), 0).expect("import");
    assert_eq!(moved.export().locks[0].priority, Some(2));
    queue(&mut moved, &preempting("k", "ui", 7, 100), 0);
    moved.advance(100);
    assert_eq!(granted_owners(&moved.drain_events()), ["ui"], "preempted on the new owner");
    check(&moved);
}
