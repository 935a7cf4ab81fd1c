//! Random histories of one election (docs/LOCK_CORE.md, "Elections") checked against the
//! rules it must keep whatever happens: at most one leader, terms that only grow, the leader's
//! value the one its campaign carried, and watches for the next holder that fire with the new
//! leader's term in the batch that elects it (never leaving one waiting beside a leader), or
//! time out; the table's invariants after every step.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::table_with;
use lock_core::{
    AcquireOutcome, AcquireRequest, Event, FencingToken, KeyInfoRequest, LockTable, ReleaseRequest,
    Scope, WaiterId, WatchOutcome, WatchReason, WatchRequest,
};
use proptest::prelude::*;

const NAME: &str = "e";
const CANDIDATES: [&str; 4] = ["a", "b", "c", "d"];

#[derive(Debug, Clone)]
enum Op {
    Campaign { who: usize, value: Option<u8>, wait: bool, lease: u64 },
    Resign { who: usize },
    Advance { ms: u64 },
    Observe { wait: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..CANDIDATES.len(), proptest::option::of(0u8..4), any::<bool>(), 20u64..300)
            .prop_map(|(who, value, wait, lease)| Op::Campaign { who, value, wait, lease }),
        2 => (0..CANDIDATES.len()).prop_map(|who| Op::Resign { who }),
        2 => (0u64..200).prop_map(|ms| Op::Advance { ms }),
        2 => (1u64..300).prop_map(|wait| Op::Observe { wait }),
    ]
}

/// What the checks remember between steps.
#[derive(Default)]
struct Seen {
    /// The value each candidate's latest campaign carried.
    values: BTreeMap<String, Option<String>>,
    last_term: Option<FencingToken>,
    /// Registered watches for the next holder, not yet ended.
    watches: BTreeSet<WaiterId>,
}

fn step(t: &mut LockTable, seen: &mut Seen, op: &Op, now: u64) -> Result<(), String> {
    let leader = |t: &LockTable| {
        let info = t
            .key_info(&KeyInfoRequest { scope: Scope::Election, ..KeyInfoRequest::new(NAME) }, now)
            .expect("info");
        if info.holders.len() > 1 {
            return Err(format!("{} leaders at once", info.holders.len()));
        }
        Ok(info.holders.first().map(|h| (h.owner.clone(), h.fencing_token, h.value.clone())))
    };
    let mut grants: Vec<(String, FencingToken)> = Vec::new();
    match op {
        Op::Campaign { who, value, wait, lease } => {
            let who = CANDIDATES[*who];
            // Campaigning again while leading or queued is a lock's reentrancy, not checked here.
            let info = t
                .key_info(
                    &KeyInfoRequest { scope: Scope::Election, ..KeyInfoRequest::new(NAME) },
                    now,
                )
                .expect("info");
            if info.holders.iter().any(|h| h.owner == who)
                || info.waiters.iter().any(|w| w.owner == who)
            {
                return t.check_invariants();
            }
            let value = value.map(|v| format!("v{v}"));
            let r = AcquireRequest {
                scope: Scope::Election,
                value: value.clone(),
                lease_ms: Some(*lease),
                wait_ms: Some(if *wait { 150 } else { 0 }),
                ..AcquireRequest::new(NAME, who)
            };
            match t.acquire(&r, now) {
                Ok(AcquireOutcome::Granted(g)) => {
                    seen.values.insert(who.into(), value);
                    grants.push((g.owner, g.fencing_token));
                }
                Ok(AcquireOutcome::Queued(_)) => {
                    seen.values.insert(who.into(), value);
                }
                Err(_) => {}
            }
        }
        Op::Resign { who } => {
            let r = ReleaseRequest {
                key: NAME.into(),
                owner: CANDIDATES[*who].into(),
                scope: Scope::Election,
                ..Default::default()
            };
            let _ = t.release(&r, now);
        }
        Op::Advance { .. } => t.advance(now),
        Op::Observe { wait } => {
            let w = WatchRequest {
                key: NAME.into(),
                scope: Scope::Election,
                fencing_token: FencingToken(0),
                wait_ms: Some(*wait),
                request_id: 0,
                revoke: false,
            };
            t.advance(now);
            match t.watch(&w, now).map_err(|e| e.to_string())? {
                WatchOutcome::Watching(q) => {
                    if leader(t)?.is_some() {
                        return Err("a watch for the next holder waits beside a leader".into());
                    }
                    seen.watches.insert(q.waiter_id);
                }
                WatchOutcome::Answered(a) => {
                    let l = leader(t)?.ok_or("answered at once with no leader")?;
                    if (a.reason, a.fencing_token) != (Some(WatchReason::Held), l.1) {
                        return Err(format!("answered {a:?}, leader {l:?}"));
                    }
                }
            }
        }
    }
    let mut fired = Vec::new();
    for e in t.drain_events() {
        match e {
            Event::Granted { grants: gs, .. } => {
                // A candidate's second queued campaign is granted reentrant: same term.
                let new = gs.into_iter().filter(|g| !g.reentrant);
                grants.extend(new.map(|g| (g.owner, g.fencing_token)));
            }
            Event::WatchFired { watch_id, fencing_token, reason, .. } => {
                if !seen.watches.remove(&watch_id) || reason != WatchReason::Held {
                    return Err(format!("watch {watch_id} fired unexpectedly ({reason:?})"));
                }
                fired.push(fencing_token);
            }
            Event::WatchTimedOut { watch_id, .. } if !seen.watches.remove(&watch_id) => {
                return Err(format!("watch {watch_id} timed out unexpectedly"));
            }
            _ => {}
        }
    }
    for (_, term) in &grants {
        if seen.last_term.is_some_and(|last| *term <= last) {
            return Err(format!("term {term:?} after {:?}", seen.last_term));
        }
        seen.last_term = Some(*term);
    }
    if let Some(f) = fired.iter().find(|f| grants.first().map(|g| g.1) != Some(**f)) {
        return Err(format!("a watch fired with {f:?}, the batch elected {grants:?}"));
    }
    if let Some((owner, _, value)) = leader(t)? {
        if !seen.watches.is_empty() {
            return Err(format!("{owner} leads while watches wait: {:?}", seen.watches));
        }
        let expected = seen.values.get(&owner).cloned().flatten();
        if value != expected {
            return Err(format!("{owner} leads with {value:?}, campaigned with {expected:?}"));
        }
    }
    t.check_invariants()
}

fn run(ops: Vec<(u64, Op)>) -> Result<(), String> {
    let mut t = table_with(|c| c.max_lease_ms = 600_000);
    let mut seen = Seen::default();
    let mut now = 0;
    for (i, (dt, op)) in ops.iter().enumerate() {
        now += dt + if let Op::Advance { ms } = op { *ms } else { 0 };
        step(&mut t, &mut seen, op, now).map_err(|e| format!("step {i} ({op:?}): {e}"))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(), max_shrink_iters: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn elections_keep_their_rules(ops in proptest::collection::vec((0u64..10, op()), 1..60)) {
        if let Err(e) = run(ops) {
            prop_assert!(false, "{}", e);
        }
    }
}
