//! One generic slab and one generic interner (slab + hash index), used for keys, owners and
//! sessions.
//!
//! Keys and owners are interned: the name lives once, in its slab entry, and everything else
//! (holder entries, queue records, waiters) refers to it by a `u32` slab number. That keeps a
//! held lock within the memory budget of docs/LOCK_CORE.md and makes owner compares cheap.
//! The hash index stores only slab numbers; a lookup hashes the name and compares against the
//! entry it points at.
//!
//! An entry nobody uses any more is not freed at once: it is marked idle and listed, and the
//! list is swept when it outgrows [`crate::Config::idle_cache`]. A key that is locked and
//! released in a loop therefore keeps its slab entry (no allocation on the hot path).

use std::hash::{BuildHasher, Hash};

use hashbrown::hash_table::{Entry, HashTable};
use hashbrown::DefaultHashBuilder;

use super::ids::{hashed, Idx, KeyIdx, OwnerIdx};
use super::LockTable;
use crate::types::Scope;

/// A vector of optional entries with a free list: a number stays valid while its entry lives
/// and is reused (last freed, first reused) after.
#[derive(Debug)]
pub(super) struct Slab<T> {
    slots: Vec<Option<T>>,
    free: Vec<Idx>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { slots: Vec::new(), free: Vec::new() }
    }
}

impl<T> Slab<T> {
    /// Stores `value` in a free slot (or a new one) and answers its number.
    pub(super) fn insert(&mut self, value: T) -> Idx {
        match self.free.pop() {
            Some(i) => {
                if let Some(slot) = self.slots.get_mut(i as usize) {
                    *slot = Some(value);
                }
                i
            }
            None => {
                self.slots.push(Some(value));
                (self.slots.len() - 1) as Idx
            }
        }
    }

    /// Takes an entry out; its number goes to the free list.
    pub(super) fn remove(&mut self, i: Idx) -> Option<T> {
        let value = self.slots.get_mut(i as usize).and_then(Option::take);
        if value.is_some() {
            self.free.push(i);
        }
        value
    }

    /// The entry at `i`, if it lives.
    #[inline]
    pub(super) fn get(&self, i: Idx) -> Option<&T> {
        self.slots.get(i as usize).and_then(Option::as_ref)
    }

    /// The entry at `i`, if it lives.
    #[inline]
    pub(super) fn get_mut(&mut self, i: Idx) -> Option<&mut T> {
        self.slots.get_mut(i as usize).and_then(Option::as_mut)
    }

    /// The entry at `i`, which the caller knows to be live (a number taken from a live
    /// structure); a dead one is a broken invariant.
    #[inline]
    pub(super) fn live(&self, i: Idx) -> &T {
        self.get(i).expect("slab index refers to a live entry")
    }

    /// [`Slab::live`], mutable.
    #[inline]
    pub(super) fn live_mut(&mut self, i: Idx) -> &mut T {
        self.get_mut(i).expect("slab index refers to a live entry")
    }

    /// Whether slot `i` exists and is live.
    pub(super) fn contains(&self, i: Idx) -> bool {
        self.get(i).is_some()
    }

    /// The live entries with their numbers, in slot order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (Idx, &T)> {
        self.slots.iter().enumerate().filter_map(|(i, e)| e.as_ref().map(|e| (i as Idx, e)))
    }

    /// The live entries, in slot order.
    pub(super) fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().flatten()
    }
}

/// An entry that can be interned: it carries its own name and knows when it is unused.
pub(super) trait Interned {
    /// What the entry is looked up by: `(scope, name)` for a key, the name for an owner.
    type Name<'a>: Copy + Hash;

    /// This entry's name.
    fn name(&self) -> Self::Name<'_>;
    /// Whether this entry is the one called `name`. (Not a default `self.name() == name`: the
    /// compiler cannot shorten a generic `Name<'a>` to the other name's lifetime.)
    fn is_named(&self, name: Self::Name<'_>) -> bool;
    /// The hash of a name (the index is keyed by it); the same for every kind of entry.
    #[inline]
    fn hash_name(hasher: &DefaultHashBuilder, name: Self::Name<'_>) -> u64 {
        hasher.hash_one(name)
    }
    /// A fresh, unused entry called `name`.
    fn create(name: Self::Name<'_>) -> Self;
    /// Whether anything still refers to the entry (then a sweep keeps it).
    fn in_use(&self) -> bool;
    /// The "listed as idle" flag, so an entry is listed once.
    fn idle_flag(&mut self) -> &mut bool;
    /// Heap bytes the entry owns outside its slab slot (its name).
    fn name_bytes(&self) -> usize;
}

/// Estimated bytes one interned entry costs: its slab slot, its name, and its slot in the hash
/// index (a `u32` and a control byte, over hashbrown's average load of about 2/3 — the table
/// doubles when 7/8 full). Calibrated by `examples/memory.rs` (docs/RELIABILITY.md, "Memory
/// bounds").
fn entry_bytes<T: Interned>(e: &T) -> usize {
    std::mem::size_of::<Option<T>>() + e.name_bytes() + hashed(size_of::<Idx>())
}

/// A [`Slab`] with a hash index by name and a list of idle entries to sweep.
#[derive(Debug)]
pub(super) struct Interner<T> {
    hasher: DefaultHashBuilder,
    index: HashTable<Idx>,
    slab: Slab<T>,
    idle: Vec<Idx>,
    /// Estimated bytes of the live entries ([`entry_bytes`]), kept up to date on every insert
    /// and sweep so reading it is O(1).
    bytes: usize,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            hasher: DefaultHashBuilder::default(),
            index: HashTable::new(),
            slab: Slab::default(),
            idle: Vec::new(),
            bytes: 0,
        }
    }
}

impl<T: Interned> Interner<T> {
    /// The number of the entry called `name`, if interned.
    #[inline]
    pub(super) fn find(&self, name: T::Name<'_>) -> Option<Idx> {
        let h = T::hash_name(&self.hasher, name);
        let slab = &self.slab;
        self.index.find(h, |&i| slab.get(i).is_some_and(|e| e.is_named(name))).copied()
    }

    /// The number of the entry called `name`, created (unused) when missing.
    pub(super) fn intern(&mut self, name: T::Name<'_>) -> Idx {
        let h = T::hash_name(&self.hasher, name);
        let slab = &mut self.slab;
        let hasher = &self.hasher;
        let entry = self.index.entry(
            h,
            |&i| slab.get(i).is_some_and(|e| e.is_named(name)),
            |&i| T::hash_name(hasher, slab.live(i).name()),
        );
        match entry {
            Entry::Occupied(o) => *o.get(),
            Entry::Vacant(v) => {
                let created = T::create(name);
                self.bytes += entry_bytes(&created);
                let idx = slab.insert(created);
                v.insert(idx);
                idx
            }
        }
    }

    /// Lists entry `i` as idle when nothing uses it (once). Answers whether the idle list now
    /// holds more than `cap` entries, i.e. whether the caller should sweep.
    pub(super) fn mark_idle_if_unused(&mut self, i: Idx, cap: usize) -> bool {
        let Some(e) = self.slab.get_mut(i) else { return false };
        if e.in_use() || *e.idle_flag() {
            return false;
        }
        *e.idle_flag() = true;
        self.idle.push(i);
        self.idle.len() > cap
    }

    /// Frees every listed entry that is still unused; entries in use again just leave the list.
    pub(super) fn sweep(&mut self) {
        let mut idle = std::mem::take(&mut self.idle);
        for i in idle.drain(..) {
            let Some(e) = self.slab.get_mut(i) else { continue };
            *e.idle_flag() = false;
            if e.in_use() {
                continue;
            }
            let h = T::hash_name(&self.hasher, e.name());
            self.bytes = self.bytes.saturating_sub(entry_bytes(&*e));
            if let Ok(found) = self.index.find_entry(h, |&j| j == i) {
                found.remove();
            }
            self.slab.remove(i);
        }
        self.idle = idle;
    }

    /// Whether any entry is listed as idle (a sweep could free something).
    pub(super) fn has_idle(&self) -> bool {
        !self.idle.is_empty()
    }

    /// Estimated bytes of the live entries, idle ones included (O(1)).
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }
}

/// Reading an interner is reading its slab.
impl<T> std::ops::Deref for Interner<T> {
    type Target = Slab<T>;

    fn deref(&self) -> &Slab<T> {
        &self.slab
    }
}

impl<T> Interner<T> {
    /// [`Slab::live_mut`]; the slab itself is not handed out mutably, so nothing can insert
    /// or remove an entry behind the index's back.
    #[inline]
    pub(super) fn live_mut(&mut self, i: Idx) -> &mut T {
        self.slab.live_mut(i)
    }

    /// [`Slab::get_mut`].
    #[inline]
    pub(super) fn get_mut(&mut self, i: Idx) -> Option<&mut T> {
        self.slab.get_mut(i)
    }
}

/// How the table uses its two interners: keys are interned by (scope, name), owners by name
/// with a reference count (locks + waiters + sessions).
impl LockTable {
    /// The slab number of an interned key.
    #[inline]
    pub(super) fn find_key(&self, scope: Scope, name: &str) -> Option<KeyIdx> {
        self.keys.find((scope, name))
    }

    /// The slab number of a key, interned when missing.
    pub(super) fn intern_key(&mut self, scope: Scope, name: &str) -> KeyIdx {
        self.keys.intern((scope, name))
    }

    /// Lists a key nobody holds or waits for as idle (freed by the next sweep).
    pub(super) fn free_key_if_unused(&mut self, k: KeyIdx) {
        if self.keys.mark_idle_if_unused(k, self.config.idle_cache) {
            self.sweep_idle();
        }
    }

    /// Frees every idle key and owner that is still unused.
    pub(super) fn sweep_idle(&mut self) {
        self.keys.sweep();
        self.owners.sweep();
    }

    /// The slab number of an interned owner.
    #[inline]
    pub(super) fn find_owner(&self, name: &str) -> Option<OwnerIdx> {
        self.owners.find(name)
    }

    /// Interns an owner with one extra reference that the caller must hand over to a lock,
    /// waiter or session, or give back with [`Self::owner_unref`].
    pub(super) fn intern_owner(&mut self, name: &str) -> OwnerIdx {
        let idx = self.owners.intern(name);
        self.owners.live_mut(idx).refs += 1;
        idx
    }

    /// Drops one reference to an owner; at zero it is listed as idle (freed by the next sweep).
    pub(super) fn owner_unref(&mut self, owner: OwnerIdx) {
        let Some(o) = self.owners.get_mut(owner) else { return };
        o.refs = o.refs.saturating_sub(1);
        if self.owners.mark_idle_if_unused(owner, self.config.idle_cache) {
            self.sweep_idle();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Name {
        name: Box<str>,
        refs: u32,
        idle: bool,
    }

    impl Interned for Name {
        type Name<'a> = &'a str;

        fn name(&self) -> &str {
            &self.name
        }
        fn is_named(&self, name: &str) -> bool {
            &*self.name == name
        }
        fn create(name: &str) -> Self {
            Name { name: name.into(), refs: 0, idle: false }
        }
        fn in_use(&self) -> bool {
            self.refs > 0
        }
        fn idle_flag(&mut self) -> &mut bool {
            &mut self.idle
        }
        fn name_bytes(&self) -> usize {
            self.name.len()
        }
    }

    #[test]
    fn interning_is_idempotent_and_sweeping_frees_only_unused_entries() {
        let mut t: Interner<Name> = Interner::default();
        let a = t.intern("a");
        let b = t.intern("b");
        assert_eq!(t.intern("a"), a);
        assert_eq!(t.find("b"), Some(b));
        assert_eq!(t.find("c"), None);
        t.live_mut(b).refs = 1;
        assert!(!t.mark_idle_if_unused(b, 0), "an entry in use is not listed");
        assert!(t.mark_idle_if_unused(a, 0), "over the cap: sweep");
        assert!(!t.mark_idle_if_unused(a, 0), "listed once");
        t.sweep();
        assert_eq!(t.find("a"), None);
        assert_eq!(t.find("b"), Some(b));
        assert_eq!(t.intern("c"), a, "a freed number is reused");
    }

    #[test]
    fn bytes_follow_inserts_and_sweeps() {
        let mut t: Interner<Name> = Interner::default();
        assert_eq!(t.bytes(), 0);
        let a = t.intern("abc");
        let one = t.bytes();
        assert!(one > 3, "slot, index and name: {one}");
        t.intern("abc");
        assert_eq!(t.bytes(), one, "interning again costs nothing");
        let b = t.intern("abcdef");
        assert_eq!(t.bytes(), 2 * one + 3, "a longer name costs its extra bytes");
        t.mark_idle_if_unused(a, 0);
        t.mark_idle_if_unused(b, 0);
        assert!(t.has_idle());
        t.sweep();
        assert_eq!(t.bytes(), 0, "back to nothing once swept");
    }
}
