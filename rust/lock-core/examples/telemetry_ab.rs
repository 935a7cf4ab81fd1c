//! The grant path with the telemetry's time samples kept and not, interleaved in one run so that
//! a shared machine's load falls on both alike (docs/OPERATIONS.md "Metrics"; bench/RESULTS.md
//! "Lock metrics on the grant path"):
//! `cargo run --release -p lock-core --example telemetry_ab -- [per_round] [rounds]`.
//!
//! Two measures, each in two modes, `off` (no drain ever asked: a histogram keeps nothing for
//! one) and `on` (the samples kept per bucket for the telemetry, drained every 4,096 operations,
//! the drain counted), rounds of the two modes alternating:
//! - `pair`: uncontended acquire + release pairs on a bare `LockTable` (its clock moving 1 ms
//!   every 64 pairs): one hold-time sample per pair;
//! - `record`: `Histogram::record` alone, with values spread over 128 buckets (0 to ~5 s), the
//!   worst case of a sample's keeping.
//!
//! It prints the median and the best round per mode, in ns per pair or per record.
use std::hint::black_box;
use std::time::Instant;

use lock_core::{AcquireRequest, Histogram, LockTable, ReleaseRequest, SampleDrain};

fn pairs(
    t: &mut LockTable,
    reqs: &[(AcquireRequest, ReleaseRequest)],
    clock: &mut u64,
    n: usize,
    on: bool,
) -> f64 {
    let start = Instant::now();
    for i in 0..n {
        let (a, r) = &reqs[i & 1023];
        if i % 64 == 0 {
            *clock += 1;
        }
        black_box(t.acquire(a, *clock).expect("free"));
        black_box(t.release(r, *clock).expect("held"));
        if on && (i + 1) % 4096 == 0 {
            black_box(t.telemetry(SampleDrain::Take));
        }
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

fn records(h: &mut Histogram, values: &[u64], clock: &mut u64, n: usize, on: bool) -> f64 {
    let start = Instant::now();
    for i in 0..n {
        if i % 64 == 0 {
            *clock += 1;
        }
        h.record(values[i & 1023], *clock);
        if on && (i + 1) % 4096 == 0 {
            black_box(h.drain(true));
        }
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

fn report(what: &str, times: &mut [Vec<f64>; 2]) {
    for (name, t) in ["off", "on"].iter().zip(times.iter_mut()) {
        t.sort_by(f64::total_cmp);
        println!("{what:>6} {name:>3}: median {:.1} ns, best {:.1} ns", t[t.len() / 2], t[0]);
    }
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
    // 128 buckets: 0..63 exact, then every 40th ms up to ~5 s.
    let values: Vec<u64> =
        (0..1024u64).map(|i| if i % 2 == 0 { i % 64 } else { (i % 128) * 40 }).collect();
    let mut tables = [LockTable::new(1).expect("table"), LockTable::new(1).expect("table")];
    tables[1].telemetry(SampleDrain::Take); // the first drain starts the keeping
    let mut histograms = [Histogram::default(), Histogram::default()];
    histograms[1].drain(true);
    let (mut table_clocks, mut histogram_clocks) = ([0u64; 2], [0u64; 2]);
    let mut pair_times: [Vec<f64>; 2] = Default::default();
    let mut record_times: [Vec<f64>; 2] = Default::default();
    for _ in 0..rounds {
        for m in 0..2 {
            pair_times[m].push(pairs(&mut tables[m], &reqs, &mut table_clocks[m], n, m == 1));
            record_times[m].push(records(
                &mut histograms[m],
                &values,
                &mut histogram_clocks[m],
                n,
                m == 1,
            ));
        }
    }
    println!("{n} per round, {rounds} rounds, modes interleaved");
    report("pair", &mut pair_times);
    report("record", &mut record_times);
}
