//! Listing held locks page by page (`src/table/listing.rs`): the order, the cursor, the page
//! size cap, the scan budget, and paging while locks are granted and released between pages.
//!
//! The property: with grants and releases (plain and tree locks, shared keys with several
//! holders) interleaved between pages, the concatenated pages are in strictly increasing
//! (key, scope, owner) order (so nothing is listed twice), every lock held from before the
//! first page to after the last is listed, and nothing is listed that was not held at some
//! point during the listing. Without changes, the pages are exactly the full sorted list.

use crate::common;

use std::collections::BTreeSet;

use common::{grant, req, table, tree, try_grant};
use lock_core::{
    Config, ListCursor, ListFilter, LockTable, Mode, Partition, ReleaseRequest, Scope, LIST_CHUNK,
    SCAN_BUDGET,
};
use proptest::prelude::*;

type Entry = (String, Scope, String);

fn held(t: &LockTable) -> BTreeSet<Entry> {
    let mut all = BTreeSet::new();
    let mut after = None;
    loop {
        let p = t.list_page(&ListFilter { after, size: 1000, ..Default::default() });
        all.extend(p.locks.into_iter().map(|l| (l.key, l.scope, l.owner)));
        match p.next {
            Some(n) => after = Some(n),
            None => return all,
        }
    }
}

fn cursor(e: &Entry) -> ListCursor {
    ListCursor { key: e.0.clone(), scope: e.1, owner: e.2.clone() }
}

#[test]
fn pages_chain_through_every_lock_in_order() {
    let mut t = table();
    for i in 0..2500 {
        grant(&mut t, &req(&format!("k{i:05}"), &format!("o{}", i % 7), Mode::Exclusive), 0);
    }
    // Several shared holders on one key, and the same name as a tree node.
    for o in ["c", "a", "b"] {
        grant(&mut t, &req("k00010s", o, Mode::Shared), 0);
        grant(&mut t, &tree("/k/x", o, Mode::Shared), 0);
    }
    let mut pages = 0;
    let mut listed: Vec<Entry> = Vec::new();
    let mut after = None;
    loop {
        let p = t.list_page(&ListFilter { after, size: 1000, ..Default::default() });
        assert!(p.locks.len() <= 1000);
        pages += 1;
        listed.extend(p.locks.iter().map(|l| (l.key.clone(), l.scope, l.owner.clone())));
        match p.next {
            Some(n) => {
                assert_eq!(Some(&n), listed.last().map(cursor).as_ref(), "next = last listed");
                after = Some(n);
            }
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let mut sorted = listed.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(listed, sorted, "strictly increasing");
    assert_eq!(listed.len(), t.held_locks(), "a tree lock is listed once, on its node");
    let shared: Vec<&str> =
        listed.iter().filter(|e| e.0 == "k00010s").map(|e| e.2.as_str()).collect();
    assert!(shared.windows(2).all(|w| w[0] < w[1]), "holders of one key by owner: {shared:?}");
    assert!(!listed.iter().any(|e| e.0 == "/k"), "intention-only ancestors are not listed");
}

#[test]
fn a_page_starts_inside_a_key_with_several_holders() {
    let mut t = table();
    for o in ["a", "b", "c", "d"] {
        grant(&mut t, &req("k", o, Mode::Shared), 0);
    }
    let p = t.list_page(&ListFilter { size: 3, ..Default::default() });
    assert_eq!(p.locks.iter().map(|l| l.owner.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
    let p = t.list_page(&ListFilter { after: p.next, size: 3, ..Default::default() });
    assert_eq!(p.locks.iter().map(|l| l.owner.as_str()).collect::<Vec<_>>(), ["d"]);
    assert_eq!(p.next, None, "the last page says so");
}

#[test]
fn size_is_capped_and_zero_means_the_default() {
    let mut t = table();
    for i in 0..1500 {
        grant(&mut t, &req(&format!("k{i:05}"), "o", Mode::Exclusive), 0);
    }
    assert_eq!(t.list_page(&ListFilter { size: 5000, ..Default::default() }).locks.len(), 1000);
    assert_eq!(t.list_page(&ListFilter::default()).locks.len(), ListFilter::DEFAULT_SIZE);
}

#[test]
fn a_rare_owner_is_found_through_partial_pages_within_the_scan_budget() {
    let mut t = table();
    let n = 2 * SCAN_BUDGET + 500;
    for i in 0..n {
        grant(&mut t, &req(&format!("k{i:06}"), "many", Mode::Exclusive), 0);
    }
    grant(&mut t, &req("k~last", "rare", Mode::Exclusive), 0);
    let filter = ListFilter { owner: Some("rare".into()), size: 10, ..Default::default() };
    let mut after = None;
    let mut calls = 0;
    let found = loop {
        calls += 1;
        let p = t.list_page(&ListFilter { after, ..filter.clone() });
        if !p.locks.is_empty() {
            break p;
        }
        after = Some(p.next.expect("an empty page before the end names where to go on"));
    };
    assert_eq!(found.locks[0].key, "k~last");
    assert_eq!(found.next, None);
    // Each call examines at most the budget (here one entry per key and one per holder).
    assert!(calls >= n * 2 / SCAN_BUDGET, "{calls} calls for {n} keys");
    assert!(calls <= n * 2 / SCAN_BUDGET + 2, "{calls} calls for {n} keys");
}

/// Pages through `p` with `filter`, each page both as the partition builds it (in chunks, the
/// mutex released between them) and as one call on its table answers it: they must be equal.
fn page_both_ways(p: &Partition, filter: &ListFilter) -> usize {
    let mut after = None;
    let mut listed = 0;
    loop {
        let f = ListFilter { after, ..filter.clone() };
        let chunked = p.list_page(&f);
        assert_eq!(chunked, p.with_table(|t| t.list_page(&f)), "filter {f:?}");
        listed += chunked.locks.len();
        match chunked.next {
            Some(n) => after = Some(n),
            None => return listed,
        }
    }
}

#[test]
fn a_partition_builds_each_page_in_chunks_equal_to_one_call() {
    let p = Partition::with_config(1, Config::default()).expect("partition");
    p.with_table(|t| {
        for i in 0..2550 {
            grant(t, &req(&format!("k{i:05}"), &format!("o{}", i % 7), Mode::Exclusive), 0);
        }
        for o in ["c", "a", "b"] {
            grant(t, &req("k00010s", o, Mode::Shared), 0);
            grant(t, &tree("/k/x", o, Mode::Shared), 0);
        }
    });
    let all = ListFilter { size: 1000, ..Default::default() };
    assert_eq!(page_both_ways(&p, &all), 2550 + 6);
    // Sizes that are and are not multiples of a chunk, a prefix, an owner.
    assert_eq!(page_both_ways(&p, &ListFilter { size: 250, ..all.clone() }), 2556);
    assert_eq!(page_both_ways(&p, &ListFilter { size: 137, ..all.clone() }), 2556);
    let prefix = ListFilter { prefix: Some("k01".into()), ..all.clone() };
    assert_eq!(page_both_ways(&p, &prefix), 1000);
    let owner = ListFilter { owner: Some("o3".into()), ..all.clone() };
    assert_eq!(page_both_ways(&p, &owner), (0..2550).filter(|i| i % 7 == 3).count());
    assert_eq!(p.list_page(&all).locks.len(), 1000, "a full page is ten chunks");
    const { assert!(LIST_CHUNK < 1000) };
}

#[test]
fn the_chunks_of_a_page_share_its_scan_budget() {
    // One key in 50 held by "x": a page of 1000 for "x" would examine 100,000 entries if each
    // chunk had a budget of its own. Sharing one, a page stops near the budget.
    let p = Partition::with_config(1, Config::default()).expect("partition");
    let n = 2 * SCAN_BUDGET + 500;
    p.with_table(|t| {
        for i in 0..n {
            let owner = if i % 50 == 0 { "x" } else { "many" };
            grant(t, &req(&format!("k{i:06}"), owner, Mode::Exclusive), 0);
        }
    });
    let filter = ListFilter { owner: Some("x".into()), size: 1000, ..Default::default() };
    let (mut after, mut found, mut pages) = (None, 0, 0);
    loop {
        let page = p.list_page(&ListFilter { after, ..filter.clone() });
        pages += 1;
        // One entry per key and one per holder: the budget covers SCAN_BUDGET / 2 keys, of which
        // one in 50 matches; a chunk may finish the key it started.
        assert!(
            page.locks.len() <= SCAN_BUDGET / 2 / 50 + 1,
            "{} locks in a page",
            page.locks.len()
        );
        found += page.locks.len();
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(found, n.div_ceil(50));
    assert!(pages >= n * 2 / SCAN_BUDGET, "{pages} pages");
}

#[test]
fn prefix_and_cursor_combine() {
    let mut t = table();
    for k in ["a/1", "b/1", "b/2", "b/3", "c/1"] {
        grant(&mut t, &req(k, "o", Mode::Exclusive), 0);
    }
    let f = ListFilter { prefix: Some("b/".into()), size: 2, ..Default::default() };
    let p = t.list_page(&f);
    assert_eq!(p.locks.iter().map(|l| l.key.as_str()).collect::<Vec<_>>(), ["b/1", "b/2"]);
    let p = t.list_page(&ListFilter { after: p.next, ..f.clone() });
    assert_eq!(p.locks.iter().map(|l| l.key.as_str()).collect::<Vec<_>>(), ["b/3"]);
    assert_eq!(p.next, None);
    // A cursor before the prefix starts at the prefix.
    let early = ListCursor { key: "a".into(), scope: Scope::Key, owner: "o".into() };
    let p = t.list_page(&ListFilter { after: Some(early), ..f });
    assert_eq!(p.locks[0].key, "b/1");
}

#[derive(Debug, Clone)]
enum Change {
    Grant { key: u8, owner: u8, shared: bool, tree: bool },
    Release { key: u8, owner: u8, tree: bool },
}

/// Tree nodes, and plain keys half of which have the name of a tree node (a key and a tree node
/// of the same name are two entries, the plain key first).
fn name(key: u8, tree: bool) -> String {
    if tree || key % 2 == 0 {
        format!("/t{}/n{key}", key % 3)
    } else {
        format!("k{key:02}")
    }
}

fn apply(t: &mut LockTable, c: &Change) {
    match *c {
        Change::Grant { key, owner, shared, tree: is_tree } => {
            let mode = if shared { Mode::Shared } else { Mode::Exclusive };
            let (k, o) = (name(key, is_tree), format!("o{owner}"));
            let r = if is_tree { tree(&k, &o, mode) } else { req(&k, &o, mode) };
            let _ = try_grant(t, &r, 0);
        }
        Change::Release { key, owner, tree } => {
            let scope = if tree { Scope::Tree } else { Scope::Key };
            let r = ReleaseRequest {
                key: name(key, tree),
                owner: format!("o{owner}"),
                scope,
                ..Default::default()
            };
            let _ = t.release(&r, 0);
        }
    }
    t.check_invariants().expect("invariants");
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0u8..40, 0u8..5, any::<bool>(), any::<bool>())
            .prop_map(|(key, owner, shared, tree)| Change::Grant { key, owner, shared, tree }),
        (0u8..40, 0u8..5, any::<bool>()).prop_map(|(key, owner, tree)| Change::Release {
            key,
            owner,
            tree
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn paging_under_interleaved_changes(
        setup in prop::collection::vec(change(), 0..120),
        between in prop::collection::vec(prop::collection::vec(change(), 0..6), 0..40),
        size in 1usize..6,
    ) {
        let mut t = table();
        for c in &setup {
            apply(&mut t, c);
        }
        let before = held(&t);
        let mut ever = before.clone();
        let mut throughout = before.clone();
        let mut listed: Vec<Entry> = Vec::new();
        let mut after = None;
        let mut turn = between.iter();
        loop {
            let p = t.list_page(&ListFilter { after, size, ..Default::default() });
            prop_assert!(p.locks.len() <= size);
            listed.extend(p.locks.into_iter().map(|l| (l.key, l.scope, l.owner)));
            let Some(n) = p.next else { break };
            after = Some(n);
            for c in turn.next().into_iter().flatten() {
                apply(&mut t, c);
                let now = held(&t);
                throughout.retain(|e| now.contains(e));
                ever.extend(now);
            }
        }
        prop_assert!(listed.windows(2).all(|w| w[0] < w[1]), "not strictly increasing: {:?}", listed);
        let listed_set: BTreeSet<Entry> = listed.iter().cloned().collect();
        for e in &throughout {
            prop_assert!(listed_set.contains(e), "held throughout but missed: {:?}", e);
        }
        for e in &listed_set {
            prop_assert!(ever.contains(e), "listed but never held: {:?}", e);
        }
        if between.iter().all(Vec::is_empty) {
            prop_assert_eq!(listed_set, before, "without changes the pages are the full list");
        }
    }
}

#[test]
fn release_keeps_index_and_tree_nodes_consistent() {
    let mut t = table();
    grant(&mut t, &tree("/a/b", "x", Mode::Shared), 0);
    grant(&mut t, &tree("/a", "y", Mode::Shared), 0);
    t.check_invariants().expect("both indexed");
    let rel = |key: &str, owner: &str| ReleaseRequest {
        key: key.into(),
        owner: owner.into(),
        scope: Scope::Tree,
        ..Default::default()
    };
    t.release(&rel("/a/b", "x"), 0).expect("held");
    t.check_invariants().expect("after the node's release");
    let keys: Vec<String> = held(&t).into_iter().map(|e| e.0).collect();
    assert_eq!(keys, ["/a"]);
    t.release(&rel("/a", "y"), 0).expect("held");
    t.check_invariants().expect("after the last release");
    assert!(held(&t).is_empty());
}
