//! Watches on locks, one scenario per way a lock ends (docs/LOCK_CORE.md, "Watches"); the
//! random histories are in `model.rs`.

use crate::common;

use common::{check, grant, release, req, sid, table, table_with};
use lock_core::{
    AcquireRequest, ErrorCode, Event, FencingToken, ForceReleaseRequest, LockTable, Millis, Mode,
    Scope, WatchOutcome, WatchReason, WatchRequest,
};

const X: Mode = Mode::Exclusive;

fn watch_req(key: &str, token: FencingToken, wait_ms: Millis) -> WatchRequest {
    WatchRequest {
        key: key.into(),
        scope: Scope::Key,
        fencing_token: token,
        wait_ms: Some(wait_ms),
        request_id: 9,
        revoke: false,
    }
}

/// Registers a watch on `token`, answering its id.
fn watching(t: &mut LockTable, key: &str, token: FencingToken, now: Millis) -> u64 {
    match t.watch(&watch_req(key, token, 10_000), now).expect("watch") {
        WatchOutcome::Watching(q) => {
            assert_eq!(q.request_id, 9);
            q.waiter_id
        }
        other => panic!("expected a registered watch, got {other:?}"),
    }
}

/// The one watch event among `events`: (id, reason; `None` = timed out).
fn fired(events: &[Event]) -> Vec<(u64, Option<WatchReason>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::WatchFired { watch_id, reason, .. } => Some((*watch_id, Some(*reason))),
            Event::WatchTimedOut { watch_id, .. } => Some((*watch_id, None)),
            _ => None,
        })
        .collect()
}

/// Ends `a`'s lock on `k` (held since 0 with a 500 ms lease) the way `reason` says.
fn end_lock(t: &mut LockTable, reason: WatchReason) {
    match reason {
        WatchReason::Released => {
            release(t, "k", "a", 10);
        }
        WatchReason::Expired => t.advance(1_000),
        WatchReason::ForceReleased => {
            t.force_release(&ForceReleaseRequest::new("k"), 10).expect("force");
        }
        _ => {
            grant(t, &AcquireRequest { lease_ms: Some(500), ..req("k", "a", X) }, 5);
        }
    }
}

#[test]
fn a_watch_fires_once_with_the_reason_its_lock_ended() {
    use WatchReason::{Expired, ForceReleased, Released, Upgraded};
    for reason in [Released, Expired, ForceReleased, Upgraded] {
        let mut t = table();
        let mode = if reason == Upgraded { Mode::Shared } else { X };
        let g = grant(&mut t, &AcquireRequest { lease_ms: Some(500), ..req("k", "a", mode) }, 0);
        let id = watching(&mut t, "k", g.fencing_token, 1);
        assert_eq!(t.watching(), 1);
        end_lock(&mut t, reason);
        assert_eq!(fired(&t.drain_events()), vec![(id, Some(reason))], "{reason:?}");
        assert_eq!(t.watching(), 0);
        t.advance(100_000);
        assert!(fired(&t.drain_events()).is_empty(), "fires exactly once");
        check(&t);
    }
}

#[test]
fn a_session_end_or_expiry_fires_its_locks_watches() {
    for (reason, end_it) in
        [(WatchReason::SessionEnded, true), (WatchReason::SessionExpired, false)]
    {
        let mut t = table();
        let s = t.create_session("a", Some(1_000), sid(1), 0).expect("session");
        let g = grant(
            &mut t,
            &AcquireRequest { session: Some(s.session.clone()), ..req("k", "a", X) },
            0,
        );
        let id = watching(&mut t, "k", g.fencing_token, 0);
        if end_it {
            t.end_session(&s.session, "a", 10).expect("end");
        } else {
            t.advance(5_000);
        }
        assert_eq!(fired(&t.drain_events()), vec![(id, Some(reason))]);
        check(&t);
    }
}

#[test]
fn a_stale_token_answers_not_held_and_a_try_watch_answers_held() {
    let mut t = table();
    let g = grant(&mut t, &req("k", "a", X), 0);
    let stale = FencingToken(g.fencing_token.0 - 1);
    let out = t.watch(&watch_req("k", stale, 1_000), 1).expect("watch");
    assert!(
        matches!(out, WatchOutcome::Answered(ref a) if a.reason == Some(WatchReason::NotHeld)),
        "{out:?}"
    );
    let out = t.watch(&watch_req("nobody", g.fencing_token, 1_000), 1).expect("watch");
    assert!(
        matches!(out, WatchOutcome::Answered(ref a) if a.reason == Some(WatchReason::NotHeld)),
        "{out:?}"
    );
    let out = t.watch(&watch_req("k", g.fencing_token, 0), 1).expect("watch");
    assert!(matches!(out, WatchOutcome::Answered(ref a) if a.reason.is_none()), "{out:?}");
    assert_eq!(t.watching(), 0, "nothing was registered");
    check(&t);
}

#[test]
fn a_watch_times_out_while_the_lock_is_held_and_a_cancelled_one_ends_silently() {
    let mut t = table();
    let g = grant(&mut t, &AcquireRequest { lease_ms: Some(60_000), ..req("k", "a", X) }, 0);
    let timed = match t.watch(&watch_req("k", g.fencing_token, 200), 0).expect("watch") {
        WatchOutcome::Watching(q) => q.waiter_id,
        other => panic!("{other:?}"),
    };
    let cancelled = watching(&mut t, "k", g.fencing_token, 0);
    t.cancel(cancelled, 50).expect("cancel");
    t.advance(199);
    assert!(fired(&t.drain_events()).is_empty());
    t.advance(200);
    let events = t.drain_events();
    assert_eq!(fired(&events), vec![(timed, None)]);
    assert!(matches!(&events[0], Event::WatchTimedOut { waited_ms: 200, .. }), "{events:?}");
    release(&mut t, "k", "a", 300);
    assert!(fired(&t.drain_events()).is_empty(), "the cancelled watch is gone");
    check(&t);
}

#[test]
fn watches_are_capped_per_partition_and_counted_in_memory() {
    let mut t = table_with(|c| c.limits.max_watches = 2);
    let g = grant(&mut t, &req("k", "a", X), 0);
    let before = t.memory().waiters;
    watching(&mut t, "k", g.fencing_token, 0);
    assert!(t.memory().waiters > before, "a watch costs memory");
    watching(&mut t, "k", g.fencing_token, 0);
    let e = t.watch(&watch_req("k", g.fencing_token, 1_000), 0).expect_err("capped");
    assert_eq!(e.code(), ErrorCode::LimitExceeded);
    assert!(e.to_string().contains("max_watches"), "{e}");
    release(&mut t, "k", "a", 1);
    assert_eq!(fired(&t.drain_events()).len(), 2, "both watches of one lock fire");
    check(&t);
}

#[test]
fn watches_are_not_exported() {
    let mut t = table();
    let g = grant(&mut t, &req("k", "a", X), 0);
    watching(&mut t, "k", g.fencing_token, 0);
    let snap = t.export();
    let json = serde_json::to_string(&snap).expect("json");
    assert!(!json.contains("watch"), "{json}");
    let mut moved = LockTable::import(&snap, 2, *t.config(), 0).expect("import");
    assert_eq!(moved.watching(), 0);
    // The coordinator re-sends the watch; the replicated lock keeps its token.
    watching(&mut moved, "k", g.fencing_token, 1);
    check(&moved);
}
