//! Helpers shared by the integration tests.
#![allow(dead_code)]

use lock_core::{
    AcquireOutcome, AcquireRequest, Config, Event, Grant, LockError, LockTable, Millis, Mode,
    PriorityValue, Queued, ReleaseRequest, Released, Scope, SessionId,
};

pub fn table() -> LockTable {
    LockTable::new(1).expect("table")
}

pub fn table_with(f: impl FnOnce(&mut Config)) -> LockTable {
    let mut c = Config::default();
    f(&mut c);
    LockTable::with_config(1, c).expect("table")
}

pub fn req(key: &str, owner: &str, mode: Mode) -> AcquireRequest {
    AcquireRequest { mode, ..AcquireRequest::new(key, owner) }
}

pub fn waiting(key: &str, owner: &str, mode: Mode, wait_ms: Millis) -> AcquireRequest {
    AcquireRequest { wait_ms: Some(wait_ms), ..req(key, owner, mode) }
}

pub fn tree(key: &str, owner: &str, mode: Mode) -> AcquireRequest {
    AcquireRequest { scope: Scope::Tree, ..req(key, owner, mode) }
}

/// `r` as the acquisition `id` (docs/API.md, "Acquisitions"): asked again, it gets its grant back.
pub fn acq(mut r: AcquireRequest, id: &str) -> AcquireRequest {
    r.acquisition = Some(id.into());
    r
}

pub fn with_priority(mut r: AcquireRequest, p: i64) -> AcquireRequest {
    r.priority = Some(PriorityValue::Level(p));
    r
}

pub fn grant(t: &mut LockTable, r: &AcquireRequest, now: Millis) -> Grant {
    match t.acquire(r, now) {
        Ok(AcquireOutcome::Granted(g)) => g,
        other => panic!("expected a grant for {} by {}, got {other:?}", r.key, r.owner),
    }
}

/// A try-lock of `r` (its `wait_ms` ignored): the grant, or why it was refused.
pub fn try_grant(t: &mut LockTable, r: &AcquireRequest, now: Millis) -> Result<Grant, LockError> {
    let r = AcquireRequest { wait_ms: Some(0), ..r.clone() };
    match t.acquire(&r, now)? {
        AcquireOutcome::Granted(g) => Ok(g),
        AcquireOutcome::Queued(q) => panic!("a try-lock of {} by {} queued: {q:?}", r.key, r.owner),
    }
}

pub fn queue(t: &mut LockTable, r: &AcquireRequest, now: Millis) -> Queued {
    match t.acquire(r, now) {
        Ok(AcquireOutcome::Queued(q)) => q,
        other => panic!("expected {} by {} to queue, got {other:?}", r.key, r.owner),
    }
}

pub fn conflict(t: &mut LockTable, r: &AcquireRequest, now: Millis) {
    match t.acquire(r, now) {
        Err(LockError::Conflict { .. }) => {}
        other => panic!("expected a conflict for {} by {}, got {other:?}", r.key, r.owner),
    }
}

pub fn release(t: &mut LockTable, key: &str, owner: &str, now: Millis) -> Released {
    t.release(&ReleaseRequest { key: key.into(), owner: owner.into(), ..Default::default() }, now)
        .unwrap_or_else(|e| panic!("release {key} by {owner}: {e}"))
}

pub fn release_tree(t: &mut LockTable, key: &str, owner: &str, now: Millis) -> Released {
    t.release(
        &ReleaseRequest {
            key: key.into(),
            owner: owner.into(),
            scope: Scope::Tree,
            ..Default::default()
        },
        now,
    )
    .unwrap_or_else(|e| panic!("release {key} by {owner}: {e}"))
}

/// The owners granted by `Granted` events, in event order.
pub fn granted_owners(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Granted { owner, .. } => Some(owner.clone()),
            _ => None,
        })
        .collect()
}

pub fn check(t: &LockTable) {
    if let Err(e) = t.check_invariants() {
        panic!("invariant broken: {e}");
    }
}

/// Cases per property test (the lock model and the replication model): `PROPTEST_CASES` if set,
/// else 10,000 in CI (`CI=true`) and 20,000 locally.
pub fn cases() -> u32 {
    if let Some(n) = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()) {
        return n;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        10_000
    } else {
        20_000
    }
}

/// A session id for tests: fixed per `n` (histories replay), spread over all 128 bits as the
/// bridge's random ids are.
pub fn sid(n: u64) -> SessionId {
    SessionId::from_u128(u128::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ 1)
}

/// The table configuration of the model tests (`model.rs`, `semaphore_model.rs`): short leases
/// and waits, so histories of a few hundred milliseconds see them run out.
pub fn model_config(aging_ms: Millis) -> Config {
    Config {
        aging_ms,
        default_lease_ms: 100,
        max_lease_ms: 1_000,
        max_wait_ms: 1_000,
        // Sweep unused keys and owners almost at once, so the sweep is exercised too.
        idle_cache: 1,
        ..Default::default()
    }
}
