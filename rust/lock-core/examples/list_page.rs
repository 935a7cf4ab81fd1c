//! How long one list page holds the table (issue 13): 1,000,000 held locks in one
//! `LockTable`, then the time of `list_page` (size 1000) from the start, from the middle, and
//! with an `owner` filter that matches nothing (a page that spends its whole scan budget), and
//! of a full pass over every lock, page after page. This is the time the partition's mutex is
//! held per page.
//!
//! `cargo run --release -p lock-core --example list_page [-- locks]`

use std::time::Instant;

use lock_core::{AcquireRequest, ListCursor, ListFilter, LockTable, Scope};

fn main() {
    let locks = std::env::args().nth(1).and_then(|a| a.parse::<usize>().ok()).unwrap_or(1_000_000);
    let mut t = LockTable::new(1).expect("table");
    for i in 0..locks {
        let r = AcquireRequest::new(format!("key-{i:07}"), format!("owner-{:03}", i % 1000));
        t.acquire(&r, 0).expect("free key");
    }
    let page = |f: &ListFilter| {
        let mut best = f64::MAX;
        for _ in 0..20 {
            let started = Instant::now();
            std::hint::black_box(t.list_page(f));
            best = best.min(started.elapsed().as_secs_f64() * 1e3);
        }
        best
    };
    let middle = ListCursor {
        key: format!("key-{:07}", locks / 2),
        scope: Scope::Key,
        owner: format!("owner-{:03}", locks / 2 % 1000),
    };
    let first = page(&ListFilter { size: 1000, ..Default::default() });
    let mid = page(&ListFilter { size: 1000, after: Some(middle), ..Default::default() });
    let none =
        page(&ListFilter { owner: Some("owner-000-x".into()), size: 1000, ..Default::default() });
    let budget =
        page(&ListFilter { owner: Some("owner-000".into()), size: 1000, ..Default::default() });
    let started = Instant::now();
    let (mut after, mut pages, mut listed) = (None, 0, 0);
    loop {
        let p = t.list_page(&ListFilter { after, size: 1000, ..Default::default() });
        pages += 1;
        listed += p.locks.len();
        match p.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    let pass = started.elapsed().as_secs_f64();
    assert_eq!(listed, locks);
    println!(
        "locks={locks} page_ms(first)={first:.3} page_ms(middle)={mid:.3} page_ms(owner filter, scan budget spent)={budget:.3} page_ms(unknown owner)={none:.3} full_pass={pages} pages in {pass:.2} s ({:.3} ms a page)",
        pass * 1e3 / pages as f64
    );
}
