//! Memory per held lock: holds 1,000,000 locks in one `LockTable` and counts the heap bytes the
//! table owns, with a counting global allocator.
//!
//! `cargo run --release -p lock-core --example memory [-- locks owners]`
//! (defaults: 1,000,000 locks by 1,000 owners; pass `1000000 1000000` for one owner per lock).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use lock_core::{AcquireRequest, LockTable};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every method forwards to `System` with the same arguments and only adds bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged; `ptr` came from `alloc` with this `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().unwrap_or(0));
    let locks = args.next().filter(|n| *n > 0).unwrap_or(1_000_000);
    let owners = args.next().filter(|n| *n > 0).unwrap_or(1_000);
    let reqs: Vec<AcquireRequest> = (0..locks)
        .map(|i| AcquireRequest::new(format!("key-{i:07}"), format!("owner-{:07}", i % owners)))
        .collect();
    let rss_before = rss_bytes();
    let before = LIVE.load(Ordering::SeqCst);
    let mut t = LockTable::new(1).expect("table");
    for r in &reqs {
        std::hint::black_box(t.acquire(r, 0).expect("free key"));
    }
    let after = LIVE.load(Ordering::SeqCst);
    let rss_after = rss_bytes();
    assert_eq!(t.held_locks(), locks);
    let bytes = after - before;
    println!(
        "locks={locks} owners={owners} key_len=11 heap_bytes_per_lock={:.1} (bytes requested from the allocator) rss_bytes_per_lock={:.1} (resident set growth, allocator overhead included)",
        bytes as f64 / locks as f64,
        (rss_after - rss_before) as f64 / locks as f64
    );
}

/// Resident set size from `/proc/self/statm` (Linux), 0 elsewhere.
fn rss_bytes() -> i64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<i64>().ok()))
        .map_or(0, |pages| pages * 4096)
}
