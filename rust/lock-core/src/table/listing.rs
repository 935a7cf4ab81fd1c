//! Listing held locks one page at a time, with bounded work under the partition's mutex.
//!
//! Why: a list call runs with the partition locked, so every acquire on the partition waits
//! for it. Building and sorting every lock for each call (what `GET /_locks?size=1` used to
//! do) makes that wait grow with the number of held locks: about a second with a million.
//! Here a page costs O(log n + examined), and a call examines at most [`SCAN_BUDGET`] entries.
//!
//! How: [`ListingIndex`] holds the names of the keys that are the target of at least one live
//! lock (tree ancestors held only in intention modes are not in it: they are not listed), in
//! one ordered set per scope, read merged in (key bytes, scope) order. Memory is what decided
//! the shape: an entry is the key's name shared with its
//! [`KeyState`](super::records::KeyState) (an `Arc<str>`, 16 bytes), not a copy of the name
//! nor a (name, scope, slab number) tuple (32 bytes with padding); the slab number is found
//! again through the key interner for the few keys a page visits. The index is kept by
//! [`LockTable::list_lock_added`] and [`LockTable::list_lock_removed`], called where locks are
//! created and removed (`grant.rs`, `release.rs`), and checked by `invariants.rs`;
//! rust/lock-core/examples/memory.rs measures what it costs per lock.
//!
//! Order and cursor: locks are listed by (key, scope, owner) — within a key every lock has a
//! different owner and the same scope, so this order is total and stable while locks come and
//! go. A page starts strictly after a [`ListCursor`]; [`ListPage::next`] is the cursor for the
//! following page. A lock held from before the first page to after the last is listed exactly
//! once; a lock granted or released meanwhile is listed at most once.
//!
//! Bounded work: a page ends early, with a cursor, when [`SCAN_BUDGET`] entries (keys and the
//! holders on them) were examined — so a page may hold fewer than `size` locks, even none,
//! while `next` is present (an `owner` filter matching few locks of a large partition). The
//! budget is checked between keys, so one key with more shared holders than the budget is
//! examined whole (its holders are one vector).

use std::collections::BTreeSet;
use std::iter::Peekable;
use std::ops::Bound;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::ids::{KeyIdx, LockIdx};
use super::LockTable;
use crate::answer::LockInfo;
use crate::types::Scope;

/// Most keys and holder entries one list call examines before it answers a partial page.
pub const SCAN_BUDGET: usize = 10_000;

/// The names of the keys targeted by a live lock, one ordered set per scope (in [`SCOPES`]
/// order).
#[derive(Debug, Default)]
pub(super) struct ListingIndex {
    sets: [BTreeSet<Arc<str>>; 5],
}

/// The scopes in listing order: for one name, a plain key, then the tree node, the semaphore,
/// the election and the group.
const SCOPES: [Scope; 5] =
    [Scope::Key, Scope::Tree, Scope::Semaphore, Scope::Election, Scope::Group];

/// The index of `scope`'s set.
fn slot(scope: Scope) -> usize {
    match scope {
        Scope::Key => 0,
        Scope::Tree => 1,
        Scope::Semaphore => 2,
        Scope::Election => 3,
        Scope::Group => 4,
    }
}

impl ListingIndex {
    fn set(&self, scope: Scope) -> &BTreeSet<Arc<str>> {
        &self.sets[slot(scope)]
    }

    fn set_mut(&mut self, scope: Scope) -> &mut BTreeSet<Arc<str>> {
        &mut self.sets[slot(scope)]
    }

    pub(super) fn len(&self) -> usize {
        self.sets.iter().map(BTreeSet::len).sum()
    }

    /// The indexed keys from `(name, scope)` on (inclusive), in listing order: the sets
    /// merged, for one name in [`SCOPES`] order.
    fn from(&self, start: Option<(&str, Scope)>) -> Merged<'_> {
        let ranges = SCOPES.map(|s| {
            let from = match start {
                None => Bound::Unbounded,
                // Scopes listed before the start's scope start after its name.
                Some((name, at)) if s < at => Bound::Excluded(name),
                Some((name, _)) => Bound::Included(name),
            };
            self.set(s).range::<str, _>((from, Bound::Unbounded)).peekable()
        });
        Merged { ranges }
    }
}

type Range<'a> = Peekable<std::collections::btree_set::Range<'a, Arc<str>>>;

/// The ranges of the index merged in listing order.
struct Merged<'a> {
    ranges: [Range<'a>; 5],
}

impl<'a> Iterator for Merged<'a> {
    type Item = (&'a Arc<str>, Scope);

    fn next(&mut self) -> Option<Self::Item> {
        // The smallest name; on a tie the first scope in SCOPES order.
        let mut best: Option<(usize, &Arc<str>)> = None;
        for (i, r) in self.ranges.iter_mut().enumerate() {
            if let Some(n) = r.peek() {
                if best.is_none_or(|(_, b)| *n < b) {
                    best = Some((i, n));
                }
            }
        }
        let (i, _) = best?;
        self.ranges[i].next().map(|n| (n, SCOPES[i]))
    }
}

/// A place in the listing order: a page starts strictly after it. Ordered by key bytes, then
/// scope (`key`, `tree`, `semaphore`), then owner bytes — the order of the listing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListCursor {
    pub key: String,
    pub scope: Scope,
    pub owner: String,
}

/// One page of held locks, in listing order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListPage {
    pub locks: Vec<LockInfo>,
    /// Where the next page starts; `None` when nothing after this page matches. Every held
    /// lock up to it (and after the request's cursor) that matches the filter is in `locks`.
    pub next: Option<ListCursor>,
}

/// What a page is asked for (the filter, made concrete).
pub(super) struct PageSpec<'a> {
    pub(super) owner: Option<&'a str>,
    pub(super) prefix: Option<&'a str>,
    pub(super) scope: Option<Scope>,
    pub(super) after: Option<&'a ListCursor>,
    pub(super) size: usize,
    /// Most keys and holder entries examined (see [`SCAN_BUDGET`]).
    pub(super) budget: usize,
}

impl LockTable {
    /// Indexes `k` for listing when a lock targeting it was just added (its first is).
    pub(super) fn list_lock_added(&mut self, k: KeyIdx) {
        let ks = self.keys.live(k);
        // A plain key has no intention holders: its first holder is its first listed lock. A
        // tree node may already be in the index, or held only in intention modes.
        if ks.scope != Scope::Tree && ks.holders.len() > 1 {
            return;
        }
        if !self.listing.set(ks.scope).contains(&*ks.name) {
            self.listing.set_mut(ks.scope).insert(ks.name.clone());
        }
    }

    /// Drops `k` from the listing index when no lock targets it any more (its holder entries
    /// for the removed lock are already gone).
    pub(super) fn list_lock_removed(&mut self, k: KeyIdx) {
        if self.targeted(k) {
            return;
        }
        let ks = self.keys.live(k);
        self.listing.set_mut(ks.scope).remove(&*ks.name);
    }

    /// Whether a live lock targets `k` (rather than only holding it in an intention mode).
    pub(super) fn targeted(&self, k: KeyIdx) -> bool {
        let ks = self.key_state(k);
        match ks.scope {
            Scope::Key | Scope::Semaphore | Scope::Election | Scope::Group => {
                !ks.holders.is_empty()
            }
            Scope::Tree => ks.holders.iter().any(|h| self.lock(h.lock).key == k),
        }
    }

    /// The work of [`LockTable::list_page_within`]: the page, and the entries examined.
    pub(super) fn page(&self, spec: &PageSpec<'_>) -> (ListPage, usize) {
        let mut page = ListPage { locks: Vec::new(), next: None };
        let owner = match spec.owner {
            Some(o) => match self.find_owner(o) {
                Some(o) => Some(o),
                None => return (page, 0),
            },
            None => None,
        };
        let mut examined = 0usize;
        let mut frontier: Option<ListCursor> = None;
        let mut on_key: Vec<(&str, LockIdx)> = Vec::new();
        for (name, scope) in self.listing.from(page_start(spec)) {
            if spec.prefix.is_some_and(|p| !name.starts_with(p)) {
                return (page, examined);
            }
            if examined >= spec.budget && frontier.is_some() {
                page.next = frontier;
                return (page, examined);
            }
            if spec.scope.is_some_and(|s| s != scope) {
                // Skipped, but scanned: a page over the budget may end here.
                examined += 1;
                frontier = Some(ListCursor { key: name.to_string(), scope, owner: String::new() });
                continue;
            }
            let k = self.find_key(scope, name).expect("a listed key is interned");
            let ks = self.key_state(k);
            examined += 1 + ks.holders.len();
            let after_owner = spec
                .after
                .filter(|c| *c.key == **name && c.scope == scope)
                .map(|c| c.owner.as_str());
            on_key.clear();
            for h in &ks.holders {
                let name = &*self.owners.live(h.owner).name;
                if self.lock(h.lock).key == k && after_owner.is_none_or(|a| name > a) {
                    on_key.push((name, h.lock));
                }
            }
            on_key.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for &(_, l) in &on_key {
                if owner.is_some_and(|want| self.lock(l).owner != want) {
                    continue;
                }
                if page.locks.len() == spec.size {
                    page.next = page.locks.last().map(cursor_of);
                    return (page, examined);
                }
                // The acquisition's digest stays inside the replicated state.
                let info = LockInfo { acquisition: None, ..self.lock_info(l, self.lock(l)) };
                page.locks.push(info);
            }
            if let Some(&(o, _)) = on_key.last() {
                frontier = Some(ListCursor { key: name.to_string(), scope, owner: o.into() });
            }
        }
        (page, examined)
    }

    /// Checks the listing index against the keys: exactly the targeted keys, each once.
    pub(super) fn check_listing(&self) -> Result<(), String> {
        let mut targeted = 0usize;
        for (k, ks) in self.keys.iter() {
            if !ks.holders.is_empty() && self.targeted(k) {
                targeted += 1;
                if !self.listing.set(ks.scope).contains(&*ks.name) {
                    return Err(format!("held key {} missing from the listing index", ks.name));
                }
            }
        }
        if targeted != self.listing.len() {
            return Err(format!(
                "listing index has {} keys, {targeted} are targeted by a lock",
                self.listing.len()
            ));
        }
        Ok(())
    }
}

/// The first index entry a page may take locks from: the cursor's key (later owners on it),
/// or the prefix, whichever comes later.
fn page_start<'a>(spec: &PageSpec<'a>) -> Option<(&'a str, Scope)> {
    let after = spec.after.map(|c| (c.key.as_str(), c.scope));
    let prefix = spec.prefix.map(|p| (p, Scope::Key));
    after.max(prefix)
}

/// The cursor just after a listed lock.
fn cursor_of(l: &LockInfo) -> ListCursor {
    ListCursor { key: l.key.clone(), scope: l.scope, owner: l.owner.clone() }
}
