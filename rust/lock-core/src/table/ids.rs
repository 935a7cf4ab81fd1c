//! The index types every file of the table refers to records by, and the size rule of a hash
//! table slot: a leaf that imports nothing from the table, so that `records`, `interner` and
//! `memory` can all use them without importing each other in a circle (`tests/structure.rs`
//! checks the files of `table/` too).

/// A slab number. `u32` keeps holder entries and queue records small.
pub(super) type Idx = u32;
/// Slab number of a `KeyState` (records.rs).
pub(super) type KeyIdx = Idx;
/// Slab number of an `OwnerState` (records.rs).
pub(super) type OwnerIdx = Idx;
/// Index of a `Lock` in the lock vector (records.rs).
pub(super) type LockIdx = Idx;
/// Slab number of a `Session` (records.rs).
pub(super) type SessIdx = Idx;

/// "No session" in a `u32` session slot.
pub(super) const NO_SESSION: SessIdx = u32::MAX;
/// "No owner" where an owner slab number is expected: the requester of an acquire that is not
/// interned yet, which therefore holds nothing and waits for nothing.
pub(super) const NO_OWNER: OwnerIdx = u32::MAX;

/// Bytes per element of a hash table whose elements are `slot` bytes: the element and its
/// control byte over hashbrown's average load of about 2/3 (it doubles when 7/8 full).
pub(super) const fn hashed(slot: usize) -> usize {
    (slot + 1) * 3 / 2
}
