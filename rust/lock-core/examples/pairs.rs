//! Quick timing of uncontended acquire+release pairs (a profiling aid; the figures in
//! bench/RESULTS.md come from `cargo bench`).
use std::time::Instant;

use lock_core::{AcquireRequest, LockTable, ReleaseRequest};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2_000_000);
    let reqs: Vec<(AcquireRequest, ReleaseRequest)> = (0..1024)
        .map(|i| {
            let key = format!("key-{i}");
            (
                AcquireRequest::new(key.clone(), "owner-1"),
                ReleaseRequest { key, owner: "owner-1".into(), ..Default::default() },
            )
        })
        .collect();
    let mut t = LockTable::new(1).expect("table");
    let start = Instant::now();
    for i in 0..n {
        let (a, r) = &reqs[i & 1023];
        std::hint::black_box(t.acquire(a, 0).expect("free"));
        std::hint::black_box(t.release_at(r, 0).expect("held"));
    }
    let el = start.elapsed();
    println!("{n} pairs in {el:?}: {:.0} pairs/s", n as f64 / el.as_secs_f64());
}
