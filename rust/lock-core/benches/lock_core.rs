//! Criterion benchmarks of the lock core, in process (`cargo bench -p lock-core`).
//!
//! | bench | what one iteration is |
//! |---|---|
//! | `uncontended/table` | acquire + release of a free key on a bare `LockTable` |
//! | `uncontended/partition` | the same through `Partition` (mutex) |
//! | `uncontended/two_threads` | the same on two threads, each on its own partition |
//! | `handoff/{100,10000}` | release by the holder → the next of N exclusive waiters granted, its event drained, one new waiter queued (steady queue length N) |
//! | `tree/depth8` | acquire + release of an exclusive tree lock on a depth-8 path |
//! | `events/drain` | drain 1,000 wait-timeout events and serialise each to JSON |
//! | `history/{off,on,on_full}` | `uncontended/table` with the lock history off, on (drained every 4,096 pairs, the drain's freeing counted), and on with its buffer full (every record dropped and counted) |
//!
//! Memory per held lock is measured by `examples/memory.rs` with a counting allocator.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lock_core::{
    AcquireOutcome, AcquireRequest, Config, LockTable, Mode, Partition, ReleaseRequest, Scope,
};

fn requests(n: usize, owner: &str) -> Vec<(AcquireRequest, ReleaseRequest)> {
    (0..n)
        .map(|i| {
            let key = format!("key-{i}");
            (
                AcquireRequest::new(key.clone(), owner),
                ReleaseRequest { key, owner: owner.into(), ..Default::default() },
            )
        })
        .collect()
}

fn uncontended(c: &mut Criterion) {
    let mut g = c.benchmark_group("uncontended");
    g.throughput(Throughput::Elements(1));
    let reqs = requests(1024, "owner-1");

    let mut t = LockTable::new(1).expect("table");
    let mut i = 0usize;
    g.bench_function("table", |b| {
        b.iter(|| {
            let (a, r) = &reqs[i & 1023];
            i += 1;
            black_box(t.acquire(a, 0).expect("free"));
            black_box(t.release(r, 0).expect("held"));
        })
    });

    let p = Partition::with_config(1, Config::default()).expect("partition");
    g.bench_function("partition", |b| {
        b.iter(|| {
            let (a, r) = &reqs[i & 1023];
            i += 1;
            black_box(p.acquire(a, 0).expect("free"));
            black_box(p.release(r, 0).expect("held"));
        })
    });

    g.throughput(Throughput::Elements(2));
    g.bench_function("two_threads", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            std::thread::scope(|s| {
                for id in 0..2 {
                    s.spawn(move || {
                        let p = Partition::with_config(1, Config::default()).expect("partition");
                        let reqs = requests(1024, &format!("owner-{id}"));
                        for n in 0..iters as usize {
                            let (a, r) = &reqs[n & 1023];
                            black_box(p.acquire(a, 0).expect("free"));
                            black_box(p.release(r, 0).expect("held"));
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
    g.finish();
}

fn handoff(c: &mut Criterion) {
    let mut g = c.benchmark_group("handoff");
    g.throughput(Throughput::Elements(1));
    for n in [100usize, 10_000] {
        let cfg = Config { max_wait_ms: 86_400_000, max_lease_ms: 86_400_000, ..Config::default() };
        let mut t = LockTable::with_config(1, cfg).expect("table");
        let wait = |o: usize| AcquireRequest {
            wait_ms: Some(86_400_000),
            lease_ms: Some(86_400_000),
            ..AcquireRequest::new("hot", format!("w{o}"))
        };
        match t.acquire(&wait(0), 0).expect("first") {
            AcquireOutcome::Granted(_) => {}
            AcquireOutcome::Queued(_) => panic!("free key"),
        }
        for o in 1..=n {
            t.acquire(&wait(o), 0).expect("queue");
        }
        let mut holder = 0usize;
        let mut next = n + 1;
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                let rel = ReleaseRequest {
                    key: "hot".into(),
                    owner: format!("w{holder}"),
                    ..Default::default()
                };
                t.release(&rel, 1).expect("holder");
                let ev = t.drain_events();
                debug_assert_eq!(ev.len(), 1);
                holder += 1;
                black_box(ev);
                t.acquire(&wait(next), 1).expect("queue");
                next += 1;
            })
        });
        assert_eq!(t.waiting(), n, "steady queue length");
    }
    g.finish();
}

fn tree(c: &mut Criterion) {
    let mut g = c.benchmark_group("tree");
    g.throughput(Throughput::Elements(1));
    let mut t = LockTable::new(1).expect("table");
    let path = "/l1/l2/l3/l4/l5/l6/l7/l8";
    let a = AcquireRequest {
        scope: Scope::Tree,
        mode: Mode::Exclusive,
        ..AcquireRequest::new(path, "o")
    };
    let r = ReleaseRequest {
        key: path.into(),
        owner: "o".into(),
        scope: Scope::Tree,
        ..Default::default()
    };
    // A sibling holder keeps the upper levels busy, as in a real tree.
    let sib = AcquireRequest {
        scope: Scope::Tree,
        mode: Mode::Shared,
        lease_ms: Some(1_000_000),
        ..AcquireRequest::new("/l1/l2/l3/l4/l5/l6/l7/other", "p")
    };
    t.acquire(&sib, 0).expect("sibling");
    g.bench_function("depth8", |b| {
        b.iter(|| {
            black_box(t.acquire(&a, 0).expect("free"));
            black_box(t.release(&r, 0).expect("held"));
        })
    });
    g.finish();
}

fn events(c: &mut Criterion) {
    let mut g = c.benchmark_group("events");
    const N: usize = 1_000;
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("drain", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for it in 0..iters {
                let mut t = LockTable::new(1).expect("table");
                for k in 0..N / 10 {
                    let key = format!("k{k}");
                    t.acquire(
                        &AcquireRequest {
                            lease_ms: Some(1_000),
                            ..AcquireRequest::new(key.clone(), "h")
                        },
                        0,
                    )
                    .expect("holder");
                    for w in 0..10 {
                        let req = AcquireRequest {
                            wait_ms: Some(10),
                            ..AcquireRequest::new(key.clone(), format!("w{w}"))
                        };
                        t.acquire(&req, 0).expect("queue");
                    }
                }
                t.advance(10);
                let start = Instant::now();
                let ev = t.drain_events();
                assert_eq!(ev.len(), N, "iteration {it}");
                for e in &ev {
                    black_box(serde_json::to_string(e).expect("json"));
                }
                total += start.elapsed();
            }
            total
        })
    });
    g.finish();
}

/// The grant path with the lock history off and on, side by side in one run
/// (docs/LOCK_CORE.md "Lock history").
fn history(c: &mut Criterion) {
    let mut g = c.benchmark_group("history");
    g.throughput(Throughput::Elements(1));
    let reqs = requests(1024, "owner-1");
    let table = |capacity| {
        LockTable::with_config(1, Config { audit_capacity: capacity, ..Config::default() })
            .expect("table")
    };
    for (name, capacity, drain_every) in
        [("off", 0, 0), ("on", 10_000, 4096), ("on_full", 16, usize::MAX)]
    {
        let mut t = table(capacity);
        let mut i = 0usize;
        g.bench_function(name, |b| {
            b.iter(|| {
                let (a, r) = &reqs[i & 1023];
                i += 1;
                black_box(t.acquire(a, 0).expect("free"));
                black_box(t.release(r, 0).expect("held"));
                if drain_every != 0 && i % drain_every == 0 {
                    black_box(t.drain_audit(usize::MAX));
                }
            })
        });
        // Only when it ran: a filter (`cargo bench -- uncontended/...`) skips it.
        if capacity > 0 && i > 0 {
            assert!(t.stats().audit.recorded > 0, "{name} recorded nothing");
        }
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

criterion_group! { name = benches; config = config(); targets = uncontended, handoff, tree, events, history }
criterion_main!(benches);
