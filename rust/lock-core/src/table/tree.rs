//! Tree locks: a lock on `/a/b/c` also holds the intention mode of its mode on `/a` and
//! `/a/b` (docs/LOCK_CORE.md, "Scopes and tree locks"). These helpers find a tree key's
//! interned ancestors, which exist while a lock or waiter below them uses them.

use smallvec::SmallVec;

use super::ids::KeyIdx;
use super::LockTable;
use crate::types::Scope;
use crate::validate::tree_ancestors;

/// Ancestor keys inline before spilling to the heap: tree paths are rarely deeper.
pub(super) type Ancestors = SmallVec<[KeyIdx; 8]>;

impl LockTable {
    /// The interned ancestors of a tree key (they exist while a lock or waiter below uses them).
    pub(super) fn ancestor_keys(&self, k: KeyIdx) -> Ancestors {
        let name = &self.key_state(k).name;
        let mut out = Ancestors::new();
        for a in tree_ancestors(name) {
            if let Some(k) = self.find_key(Scope::Tree, a) {
                out.push(k);
            }
        }
        out
    }

    /// A key and, for a tree key, its interned ancestors (the ancestors first).
    pub(super) fn key_and_ancestors(&self, k: KeyIdx) -> Ancestors {
        let mut v = self.ancestor_keys_if_tree(k);
        v.push(k);
        v
    }

    /// The interned ancestors of a tree key; none for a plain key.
    pub(super) fn ancestor_keys_if_tree(&self, k: KeyIdx) -> Ancestors {
        if self.key_state(k).scope == Scope::Tree {
            self.ancestor_keys(k)
        } else {
            Ancestors::new()
        }
    }
}
