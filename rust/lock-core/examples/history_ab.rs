//! The grant path with the lock history off and on, interleaved in one run so that a shared
//! machine's load falls on every mode alike (docs/LOCK_CORE.md "Lock history"; bench/RESULTS.md):
//! `cargo run --release -p lock-core --example history_ab -- [pairs_per_round] [rounds]`.
//!
//! Each round times `pairs_per_round` uncontended acquire + release pairs (bare `LockTable`) in each mode: `off` (no history), `on` (every grant and release recorded, the
//! buffer drained every 4,096 pairs as the plugin's drain would, the drain's freeing counted) and
//! `full` (history on, buffer full: every record dropped and counted). It prints the median and
//! the best round per mode, in ns per pair.
use std::hint::black_box;
use std::time::Instant;

use lock_core::{AcquireRequest, Config, LockTable, ReleaseRequest};

const MODES: [(&str, usize, usize); 3] = [("off", 0, 0), ("on", 10_000, 4096), ("full", 16, 0)];

fn round(
    t: &mut LockTable,
    reqs: &[(AcquireRequest, ReleaseRequest)],
    n: usize,
    drain: usize,
) -> f64 {
    let start = Instant::now();
    for i in 0..n {
        let (a, r) = &reqs[i & 1023];
        black_box(t.acquire(a, 0).expect("free"));
        black_box(t.release(r, 0).expect("held"));
        if drain != 0 && (i + 1) % drain == 0 {
            black_box(t.drain_audit(usize::MAX));
        }
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(15);
    let reqs: Vec<(AcquireRequest, ReleaseRequest)> = (0..1024)
        .map(|i| {
            let key = format!("key-{i}");
            let release =
                ReleaseRequest { key: key.clone(), owner: "owner-1".into(), ..Default::default() };
            (AcquireRequest::new(key, "owner-1"), release)
        })
        .collect();
    let mut tables: Vec<LockTable> = MODES
        .iter()
        .map(|(_, capacity, _)| {
            let config = Config { audit_capacity: *capacity, ..Config::default() };
            LockTable::with_config(1, config).expect("table")
        })
        .collect();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
    for _ in 0..rounds {
        for (m, (_, _, drain)) in MODES.iter().enumerate() {
            times[m].push(round(&mut tables[m], &reqs, n, *drain));
        }
    }
    println!("{n} pairs per round, {rounds} rounds, modes interleaved");
    for (m, (name, _, _)) in MODES.iter().enumerate() {
        let t = &mut times[m];
        t.sort_by(f64::total_cmp);
        let audit = tables[m].stats().audit;
        println!(
            "{name:>4}: median {:.1} ns/pair, best {:.1} ns/pair; recorded {}, dropped {}",
            t[t.len() / 2],
            t[0],
            audit.recorded,
            audit.dropped
        );
    }
}
