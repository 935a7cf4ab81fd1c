//! Quick timing of uncontended acquire+release pairs on a bare `LockTable`, with the number of
//! heap allocations per pair: `cargo run --release -p lock-core --example pairs -- N`
//! (`acquire` / `release`, the calls the bridge makes). `-- N 2` runs two threads, each on its
//! own `Partition`.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to `System` unchanged, counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

use lock_core::{AcquireRequest, Config, LockTable, ReleaseRequest};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2_000_000);
    let threads: usize = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(0);
    if threads > 0 {
        let start = Instant::now();
        std::thread::scope(|s| {
            for id in 0..threads {
                s.spawn(move || {
                    let p =
                        lock_core::Partition::with_config(1, Config::default()).expect("partition");
                    let owner = format!("owner-{id}");
                    let reqs: Vec<(AcquireRequest, ReleaseRequest)> = (0..1024)
                        .map(|i| {
                            let key = format!("key-{i}");
                            (
                                AcquireRequest::new(key.clone(), owner.clone()),
                                ReleaseRequest { key, owner: owner.clone(), ..Default::default() },
                            )
                        })
                        .collect();
                    for i in 0..n {
                        let (a, r) = &reqs[i & 1023];
                        std::hint::black_box(p.acquire(a, 0).expect("free"));
                        std::hint::black_box(p.release(r, 0).expect("held"));
                    }
                });
            }
        });
        let el = start.elapsed();
        println!(
            "{threads} threads x {n} pairs (own partition each) in {el:?}: {:.0} pairs/s total",
            (threads * n) as f64 / el.as_secs_f64()
        );
        return;
    }
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
    let allocs = ALLOCS.load(Ordering::Relaxed);
    let start = Instant::now();
    for i in 0..n {
        let (a, r) = &reqs[i & 1023];
        std::hint::black_box(t.acquire(a, 0).expect("free"));
        std::hint::black_box(t.release(r, 0).expect("held"));
    }
    let el = start.elapsed();
    let allocs = ALLOCS.load(Ordering::Relaxed) - allocs;
    println!(
        "{n} pairs in {el:?}: {:.0} pairs/s, {:.2} allocations per pair",
        n as f64 / el.as_secs_f64(),
        allocs as f64 / n as f64
    );
}
