//! Seeded multi-thread stress test of [`Partition`]: threads hammer one partition (and a second
//! one) with acquires, waits, releases, cancels, renewals and clock advances; an invariant
//! checker runs under the partition's mutex as they go, and at the end every queued request
//! must have received exactly one final event.
//!
//! `STRESS_SEED` picks the seed (printed on failure); `STRESS_OPS` the operations per thread.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use lock_core::{
    AcquireOutcome, AcquireRequest, Config, Partition, PriorityValue, ReleaseRequest, RenewRequest,
    Scope, WaiterId, ALL_MODES,
};

/// xorshift64*: small, seedable, good enough to pick operations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const KEYS: [(Scope, &str); 6] = [
    (Scope::Key, "a"),
    (Scope::Key, "b"),
    (Scope::Key, "c"),
    (Scope::Tree, "/t"),
    (Scope::Tree, "/t/x"),
    (Scope::Tree, "/t/y"),
];

#[derive(Default)]
struct Ledger {
    /// (partition, waiter id) -> times handed out / times finished
    queued: HashMap<(usize, WaiterId), u32>,
    finished: HashMap<(usize, WaiterId), u32>,
}

fn drain(pi: usize, p: &Partition, ledger: &Mutex<Ledger>) {
    let events = p.drain_events();
    let mut l = ledger.lock().expect("ledger");
    for e in events {
        if let Some(id) = e.waiter_id() {
            *l.finished.entry((pi, id)).or_default() += 1;
        }
    }
}

fn worker(
    pi: usize,
    p: &Partition,
    clock: &AtomicU64,
    ledger: &Mutex<Ledger>,
    seed: u64,
    ops: usize,
) {
    let mut rng = Rng(seed | 1);
    let owner = format!("w{seed}");
    for i in 0..ops {
        let now = clock.fetch_add(rng.below(3), Ordering::SeqCst);
        let (scope, key) = KEYS[rng.below(KEYS.len() as u64) as usize];
        match rng.below(10) {
            0..=4 => {
                let req = AcquireRequest {
                    key: key.into(),
                    owner: owner.clone(),
                    mode: ALL_MODES[rng.below(5) as usize],
                    scope,
                    priority: Some(PriorityValue::Level(rng.below(10) as i64)),
                    wait_ms: Some(rng.below(50)),
                    lease_ms: Some(1 + rng.below(80)),
                    ..Default::default()
                };
                // Holding the mutex across the acquire and the ledger entry keeps the ledger
                // ahead of any event for this waiter.
                p.with_table(|t| {
                    if let Ok(AcquireOutcome::Queued(q)) = t.acquire(&req, now) {
                        *ledger
                            .lock()
                            .expect("ledger")
                            .queued
                            .entry((pi, q.waiter_id))
                            .or_default() += 1;
                    }
                });
            }
            5..=6 => {
                let _ = p.release(
                    &ReleaseRequest {
                        key: key.into(),
                        owner: owner.clone(),
                        fencing_token: None,
                        scope,
                        acquisition: None,
                    },
                    now,
                );
            }
            7 => {
                let _ = p.renew(
                    &RenewRequest {
                        key: key.into(),
                        owner: owner.clone(),
                        scope,
                        lease_ms: Some(40),
                        fencing_token: None,
                        acquisition: None,
                    },
                    now,
                );
            }
            8 => {
                let some = p.with_table(|t| t.oldest_waiters(3));
                if let Some(w) = some.get(rng.below(3) as usize) {
                    let _ = p.cancel(w.waiter_id, now);
                }
            }
            _ => p.advance(now),
        }
        drain(pi, p, ledger);
        if i % 32 == 0 {
            if let Err(e) = p.with_table(|t| t.check_invariants()) {
                panic!("seed {seed}: invariant broken after op {i}: {e}");
            }
        }
    }
}

#[test]
fn partitions_stay_consistent_under_concurrent_callers() {
    let seed: u64 =
        std::env::var("STRESS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    let ops: usize =
        std::env::var("STRESS_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(50_000);
    let cfg = Config { aging_ms: 20, idle_cache: 8, ..Config::default() };
    let parts = [
        Arc::new(Partition::with_config(1, cfg).expect("p0")),
        Arc::new(Partition::with_config(2, cfg).expect("p1")),
    ];
    let clock = Arc::new(AtomicU64::new(0));
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let handles: Vec<_> = (0..4u64)
        .map(|i| {
            let pi = (i % 2) as usize;
            let p = Arc::clone(&parts[pi]);
            let (clock, ledger) = (Arc::clone(&clock), Arc::clone(&ledger));
            std::thread::spawn(move || {
                worker(pi, &p, &clock, &ledger, seed.wrapping_mul(31) + i, ops)
            })
        })
        .collect();
    for h in handles {
        h.join().expect("worker thread panicked");
    }
    // Run out every wait and lease.
    let end = clock.load(Ordering::SeqCst) + 100_000;
    for (pi, p) in parts.iter().enumerate() {
        p.advance(end);
        p.advance(end * 2);
        drain(pi, p, &ledger);
        p.with_table(|t| {
            t.check_invariants().expect("final invariants");
            assert_eq!(t.waiting(), 0);
            assert_eq!(t.held_locks(), 0);
        });
    }
    let l = ledger.lock().expect("ledger");
    assert!(!l.queued.is_empty(), "the stress test should make requests wait");
    for (id, n) in &l.queued {
        assert_eq!(*n, 1, "waiter id {id:?} handed out twice");
        assert_eq!(
            l.finished.get(id),
            Some(&1),
            "seed {seed}: waiter {id:?} must end exactly once"
        );
    }
    assert_eq!(l.finished.len(), l.queued.len(), "events for unknown waiters");
}
