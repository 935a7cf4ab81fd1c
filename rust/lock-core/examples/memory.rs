//! Memory per held lock: holds 1,000,000 locks in one `LockTable` and counts the heap bytes the
//! table owns, with a counting global allocator; then compares the table's own estimate
//! (`LockTable::memory`, what `locks.limits.max_memory` is checked against) with those bytes,
//! for held locks, for queued waiters and for sessions, and checks that the estimate returns to
//! its baseline once everything is released.
//!
//! `cargo run --release -p lock-core --example memory [-- locks owners]`
//! (defaults: 1,000,000 locks by 1,000 owners; pass `1000000 1000000` for one owner per lock).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use lock_core::{AcquireOutcome, AcquireRequest, Config, LockTable, ReleaseRequest, SessionId};

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
    let mut t = LockTable::with_config(1, unlimited()).expect("table");
    let baseline = t.memory().total;
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
    compare("held locks", t.memory().total - baseline, bytes, locks);
    waiters_and_sessions(&mut t, &reqs);
    for r in &reqs {
        let release =
            ReleaseRequest { key: r.key.clone(), owner: r.owner.clone(), ..Default::default() };
        t.release(&release, t.now()).expect("held");
    }
    let left = t.memory().total;
    println!("after releasing everything: estimate={left} bytes (baseline {baseline}; idle keys/owners kept for reuse: {} bytes)", left - baseline);
}

/// Every limit out of the way: this example measures, it does not enforce.
fn unlimited() -> Config {
    let mut c = Config { idle_cache: 0, ..Config::default() };
    c.limits.max_locks = usize::MAX;
    c.limits.max_locks_per_owner = usize::MAX;
    c.limits.max_waiters = usize::MAX;
    c.limits.max_waiters_per_owner = usize::MAX;
    c.limits.max_sessions = usize::MAX;
    c.limits.max_sessions_per_owner = usize::MAX;
    c.limits.max_memory_bytes = u64::MAX;
    c
}

/// One waiter on each of a tenth of the held locks (another owner each), then as many
/// sessions, each measured; then all of them are cancelled and ended again.
fn waiters_and_sessions(t: &mut LockTable, reqs: &[AcquireRequest]) {
    let n = reqs.len() / 10;
    let (est0, live0) = (t.memory().total, LIVE.load(Ordering::SeqCst));
    let mut waiters = Vec::with_capacity(n);
    for (i, r) in reqs.iter().take(n).enumerate() {
        let w = AcquireRequest {
            wait_ms: Some(60_000),
            ..AcquireRequest::new(r.key.clone(), format!("waiter-{i:07}"))
        };
        match t.acquire(&w, 0).expect("queued") {
            AcquireOutcome::Queued(q) => waiters.push(q.waiter_id),
            AcquireOutcome::Granted(_) => panic!("the key is held"),
        }
    }
    let (est, live) = (t.memory().total - est0, LIVE.load(Ordering::SeqCst) - live0);
    compare("queued waiters", est, live - (waiters.capacity() * 8) as isize, n);
    let (est1, live1) = (t.memory().total, LIVE.load(Ordering::SeqCst));
    let mut sessions = Vec::with_capacity(n);
    for i in 0..n {
        let id = SessionId::from_u128(i as u128 + 1);
        sessions
            .push(t.create_session(&format!("s-{i:07}"), None, id, 0).expect("session").session);
    }
    let session_ids: isize = sessions.iter().map(|s| s.capacity() as isize).sum();
    let live = LIVE.load(Ordering::SeqCst) - live1 - session_ids - (n * 24) as isize;
    compare("sessions", t.memory().total - est1, live, n);
    for w in waiters {
        t.cancel(w, 0).expect("queued");
    }
    for (i, s) in sessions.iter().enumerate() {
        t.end_session(s, &format!("s-{i:07}"), 0).expect("open");
    }
    t.drain_events();
}

/// Prints the estimate next to the measured allocation for `n` items.
fn compare(what: &str, estimate: u64, measured: isize, n: usize) {
    println!(
        "{what}: n={n} estimate_bytes_per_item={:.1} allocated_bytes_per_item={:.1} estimate/allocated={:.2}",
        estimate as f64 / n as f64,
        measured as f64 / n as f64,
        estimate as f64 / measured.max(1) as f64
    );
}

/// Resident set size from `/proc/self/statm` (Linux), 0 elsewhere.
fn rss_bytes() -> i64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<i64>().ok()))
        .map_or(0, |pages| pages * 4096)
}
