//! Fuzz target: decodes request bytes and drives a `LockTable`, checking every invariant after
//! every call. Two decoders share the input:
//!
//! - first byte even: a compact op-sequence decoder (opcode + operand bytes) over a small key
//!   and owner pool, so deep histories with real contention are reached quickly;
//! - first byte odd: the rest is JSON — an array of calls whose bodies are the bridge's own
//!   request records (`AcquireRequest`, `MultiAcquireRequest`, ... with `deny_unknown_fields`),
//!   so the decoders the bridge uses see arbitrary bytes too.
//!
//! Any panic, or an invariant reported broken, is a finding. Run:
//! `cd rust/lock-core/fuzz && cargo +nightly fuzz run table_ops -- -max_total_time=300`
#![no_main]

use libfuzzer_sys::fuzz_target;
use lock_core::{
    AcquireRequest, Config, DowngradeRequest, FencingToken, KeyInfoRequest, LockItem, LockTable, Mode,
    MultiAcquireRequest, MultiReleaseRequest, PriorityValue, ReleaseRequest, RenewRequest, Scope,
    SessionId, WatchRequest, ALL_MODES,
};
use serde::Deserialize;

const KEYS: [(Scope, &str); 8] = [
    (Scope::Key, "a"),
    (Scope::Key, "b"),
    (Scope::Key, "ü/ñ"),
    (Scope::Tree, "/r"),
    (Scope::Tree, "/r/x"),
    (Scope::Tree, "/r/x/y"),
    (Scope::Tree, "/r/z"),
    (Scope::Tree, "/s/1/2/3/4/5/6/7"),
];
const OWNERS: [&str; 4] = ["o0", "o1", "o2", "o3"];

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Call {
    Acquire(AcquireRequest),
    AcquireMany(MultiAcquireRequest),
    Release(ReleaseRequest),
    ReleaseMany(MultiReleaseRequest),
    Renew(RenewRequest),
    Downgrade(DowngradeRequest),
    Cancel(u64),
    Advance(u64),
    Session { owner: String, ttl_ms: Option<u64>, id: u64 },
    Keepalive { session: String, owner: String },
    EndSession { session: String, owner: String },
    Info { key: String, scope: Scope },
    Watch(WatchRequest),
}

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*b)
    }
}

fn check(t: &LockTable) {
    if let Err(e) = t.check_invariants() {
        panic!("invariant broken: {e}");
    }
}

fn run_ops(data: &[u8]) {
    let cfg = Config { aging_ms: 7, default_lease_ms: 50, max_lease_ms: 200, max_wait_ms: 200, ..Config::default() };
    let Ok(mut t) = LockTable::with_config(1, cfg) else { return };
    let mut b = Bytes(data);
    let mut now = 0u64;
    let mut sessions: Vec<String> = Vec::new();
    while let Some(op) = b.u8() {
        let x = b.u8().unwrap_or(0);
        let y = b.u8().unwrap_or(0);
        let (scope, key) = KEYS[usize::from(x % 8)];
        let owner = OWNERS[usize::from(x >> 6)];
        let mode = ALL_MODES[usize::from(y % 5)];
        now += u64::from(op >> 4);
        match op % 12 {
            0..=2 => {
                // Now and then a plain key is asked for as a semaphore (of limit 2 or 3).
                let sem = scope == Scope::Key && x & 0x20 != 0;
                // ... and now and then as an election, with a value.
                let elect = !sem && scope == Scope::Key && x & 0x40 != 0;
                let req = AcquireRequest {
                    key: key.into(),
                    owner: owner.into(),
                    mode: if sem || elect { Mode::Exclusive } else { mode },
                    scope: match (sem, elect) {
                        (true, _) => Scope::Semaphore,
                        (_, true) => Scope::Election,
                        _ => scope,
                    },
                    permits: sem.then_some(u32::from(y % 3) + 1),
                    limit: sem.then_some(2 + u32::from(x & 1)),
                    value: elect.then(|| format!("v{y}")),
                    priority: Some(PriorityValue::Level(i64::from(y >> 4) - 3)),
                    wait_ms: Some(u64::from(y >> 3) * 4),
                    lease_ms: Some(u64::from(y)),
                    session: if y & 0x80 != 0 { sessions.last().cloned() } else { None },
                    request_id: u64::from(op),
                    // Now and then a lock-delay (docs/LOCK_CORE.md "Lock-delay"), refused on
                    // semaphores, so that delays run, block, end and are checked by the invariants.
                    lock_delay_ms: (x & 0x4 != 0).then_some(u64::from(y % 64)),
                    // and a preempting waiter (docs/LOCK_CORE.md "Preemption").
                    preempt_ms: (x & 0x8 != 0).then_some(u64::from(y % 32) + 1),
                    // and one of two acquisition ids, or none (docs/API.md "Acquisitions").
                    acquisition: (x & 0x10 != 0).then(|| format!("{owner}-{}", y & 1)),
                };
                let _ = t.acquire(&req, now);
            }
            3 => {
                let (s2, k2) = KEYS[usize::from(y % 8)];
                let req = MultiAcquireRequest {
                    owner: owner.into(),
                    locks: vec![
                        LockItem { key: key.into(), mode, scope },
                        LockItem { key: k2.into(), mode: ALL_MODES[usize::from(op % 5)], scope: s2 },
                    ],
                    wait_ms: Some(u64::from(y)),
                    ..Default::default()
                };
                let _ = t.acquire_many(&req, now);
            }
            4 | 5 => {
                let _ = t.release(&ReleaseRequest { key: key.into(), owner: owner.into(), scope, fencing_token: None, acquisition: (y & 1 != 0).then(|| format!("{owner}-{}", x & 1)) }, now);
            }
            6 => {
                let _ = t.renew(&RenewRequest { key: key.into(), owner: owner.into(), scope, lease_ms: Some(u64::from(y)), fencing_token: None, acquisition: None }, now);
            }
            7 => {
                let _ = t.downgrade(&DowngradeRequest { key: key.into(), owner: owner.into(), scope, mode, fencing_token: None, acquisition: None }, now);
            }
            8 => {
                let _ = t.cancel(u64::from(y % 32), now);
            }
            9 => match y % 4 {
                0 => {
                    // Ids from the input: a repeated one exercises the "in use" refusal.
                    let id = SessionId::from_u128(u128::from(x) << 64 | u128::from(y));
                    if let Ok(s) = t.create_session(owner, Some(u64::from(x) + 1), id, now) {
                        sessions.push(s.session);
                    }
                }
                1 => {
                    if let Some(s) = sessions.last() {
                        // Any owner of the pool: a wrong one must change nothing.
                        let _ = t.keepalive(s, owner, now);
                    }
                }
                2 => {
                    if let Some(s) = sessions.pop() {
                        let _ = t.end_session(&s, owner, now);
                    }
                }
                _ => {
                    let _ = t.release_many(&MultiReleaseRequest { owner: owner.into(), all: true, ..Default::default() }, now);
                }
            },
            10 => {
                // Tokens of epoch 1 with a small counter: often a held lock's, sometimes not.
                let req = WatchRequest {
                    key: key.into(),
                    scope,
                    fencing_token: FencingToken::new(1, u64::from(y % 16) + 1),
                    wait_ms: Some(u64::from(y >> 2) * 8),
                    request_id: u64::from(op),
                    revoke: y & 1 == 1,
                };
                let _ = t.watch(&req, now);
            }
            _ => t.advance(now + u64::from(y)),
        }
        let _ = t.drain_events();
        check(&t);
    }
    // Export/import round trip of whatever is held.
    let snap = t.export();
    if let Ok(n) = LockTable::import(&snap, 2, cfg, now) {
        check(&n);
    }
}

fn run_json(data: &[u8]) {
    let Ok(calls) = serde_json::from_slice::<Vec<Call>>(data) else { return };
    let Ok(mut t) = LockTable::new(1) else { return };
    let mut now = 0u64;
    for c in calls {
        now = now.saturating_add(1);
        match c {
            Call::Acquire(r) => drop(t.acquire(&r, now)),
            Call::AcquireMany(r) => drop(t.acquire_many(&r, now)),
            Call::Release(r) => drop(t.release(&r, now)),
            Call::ReleaseMany(r) => drop(t.release_many(&r, now)),
            Call::Renew(r) => drop(t.renew(&r, now)),
            Call::Downgrade(r) => drop(t.downgrade(&r, now)),
            Call::Cancel(id) => drop(t.cancel(id, now)),
            Call::Advance(dt) => {
                now = now.saturating_add(dt);
                t.advance(now);
            }
            Call::Session { owner, ttl_ms, id } => {
                drop(t.create_session(&owner, ttl_ms, SessionId::from_u128(id.into()), now))
            }
            Call::Keepalive { session, owner } => drop(t.keepalive(&session, &owner, now)),
            Call::EndSession { session, owner } => drop(t.end_session(&session, &owner, now)),
            Call::Info { key, scope } => drop(t.key_info(&KeyInfoRequest { key, scope }, now)),
            Call::Watch(r) => drop(t.watch(&r, now)),
        }
        for e in t.drain_events() {
            let _ = serde_json::to_string(&e);
        }
        check(&t);
    }
}

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((b, rest)) if b & 1 == 1 => run_json(rest),
        Some((_, rest)) => run_ops(rest),
        None => {}
    }
});
