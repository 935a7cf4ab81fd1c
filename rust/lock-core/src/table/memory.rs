//! Memory accounting: an estimate of the heap bytes one table holds, kept up to date in O(1)
//! per change (never a walk), so it can be read on every acquire and gate new work against
//! `Limits::max_memory_bytes` (docs/RELIABILITY.md, "Memory bounds").
//!
//! The estimate is built from counts the table keeps anyway (live locks, waiters, sessions,
//! deadline entries) plus counters kept for it: the interners' bytes (each entry's slot, name
//! and index slot, added when interned and taken off when swept), holder entries, queue
//! entries and keys with a queue. Each count is weighted with the size of the records it stands for and an
//! allowance for the hash tables' spare capacity. `examples/memory.rs` compares the estimate
//! with the bytes actually requested from the allocator.
//!
//! Not counted: spare capacity of vectors that grew and were not shrunk (the lock vector, the
//! free lists; bounded by the peak live count, itself bounded by the limits), pending events
//! and replication changes (drained after every call) and the bounded hottest-keys sketch.

use std::cmp::Reverse;
use std::mem::size_of;

use serde::{Deserialize, Serialize};

use super::deadline::Deadline;
use super::ids::{hashed, KeyIdx, LockIdx, SessIdx};
use super::records::{HolderEntry, Lock, QueueKey, Session, Target, WaitQueue, Waiter};
use super::LockTable;
use crate::mode::Mode;
use crate::types::WaiterId;

/// The estimated heap bytes of one partition's table, by what holds them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryUsage {
    /// Interned keys: slot, name bytes, index slot (idle keys kept for reuse included).
    pub keys: u64,
    /// Interned owners, the same way.
    pub owners: u64,
    /// Lock records, their holder entries (one per key a lock touches) and the listing index.
    pub locks: u64,
    /// Queued requests, their queue entries (one per key a waiter queues on) and the queues,
    /// and registered watches.
    pub waiters: u64,
    /// Session records and their index.
    pub sessions: u64,
    /// The deadline heap (leases, waits, sessions; stale entries until pruned).
    pub deadlines: u64,
    /// The sum: what `max_memory_bytes` is compared with.
    pub total: u64,
}

/// A live lock: its record, and its slot in its session's lock set when held under one
/// (counted for every lock: most locks of a busy node are session locks or cheap anyway).
const LOCK_BYTES: usize = size_of::<Lock>() + hashed(size_of::<LockIdx>());
/// One holder entry on a key (inline in the key's record for its first holder).
const HOLDER_BYTES: usize = size_of::<HolderEntry>();
/// A queued request: its record in the waiter map, its id in its owner's list (a vector
/// allocates room for four at first, and most owners queue few requests) and in its
/// session's waiter set.
const WAITER_BYTES: usize = hashed(size_of::<(WaiterId, Waiter)>())
    + 4 * size_of::<WaiterId>()
    + hashed(size_of::<WaiterId>());
/// One queue entry of a waiter on one key: the B-tree entry (nodes about 2/3 full) and the
/// key in the waiter's own lists.
const QUEUE_ENTRY_BYTES: usize = (size_of::<QueueKey>() + size_of::<WaiterId>()) * 3 / 2
    + size_of::<(KeyIdx, Mode)>()
    + size_of::<Target>();
/// A key's wait queue itself: its box and its first B-tree leaf node (room for 11 entries,
/// allocated whole for the first waiter; a B-tree leaf holds up to 11 keys and values, a
/// parent pointer and two `u16`s).
const QUEUE_BYTES: usize = size_of::<WaitQueue>()
    + 11 * (size_of::<QueueKey>() + size_of::<WaiterId>())
    + size_of::<usize>()
    + 2 * size_of::<u16>();
/// A watch (`watch.rs`): its record by id and its id in its lock's list.
const WATCH_BYTES: usize =
    hashed(size_of::<(WaiterId, super::watch::Watch)>()) + hashed(size_of::<(LockIdx, WaiterId)>());
/// An open session: its slab slot and its index entry.
const SESSION_BYTES: usize = size_of::<Option<Session>>() + hashed(size_of::<(u64, SessIdx)>());
/// One key in the listing index (`listing.rs`): a pointer to the key's shared name in a B-tree
/// leaf (nodes about 2/3 full, plus their parent pointers and lengths).
const LISTING_ENTRY_BYTES: usize = size_of::<std::sync::Arc<str>>() * 3 / 2 + 4;
/// One entry of the deadline heap.
const DEADLINE_BYTES: usize = size_of::<Reverse<Deadline>>();

impl LockTable {
    /// The estimate, by part (O(1)).
    pub(super) fn memory_usage(&self) -> MemoryUsage {
        let keys = self.keys.bytes() as u64;
        let owners = self.owners.bytes() as u64;
        let locks = (self.live_locks * LOCK_BYTES
            + self.holder_entries * HOLDER_BYTES
            + self.listing.len() * LISTING_ENTRY_BYTES
            + self.election_values.bytes
            + self.groups.bytes) as u64;
        let waiters = (self.waiters.len() * WAITER_BYTES
            + self.queue_entries * QUEUE_ENTRY_BYTES
            + self.queues * QUEUE_BYTES
            + self.watches.len() * WATCH_BYTES) as u64;
        let sessions = (self.live_sessions * SESSION_BYTES) as u64;
        let deadlines = (self.deadlines.len() * DEADLINE_BYTES) as u64;
        MemoryUsage {
            keys,
            owners,
            locks,
            waiters,
            sessions,
            deadlines,
            total: keys + owners + locks + waiters + sessions + deadlines,
        }
    }

    /// Whether the table is at its memory cap: new locks, waiters and sessions are refused.
    /// Idle keys and owners (kept only to spare allocations) are freed first when that could
    /// bring it back under. Call only where no slab number of an idle entry is held.
    pub(super) fn at_memory_cap(&mut self) -> bool {
        let cap = self.config.limits.max_memory_bytes;
        if self.memory_usage().total < cap {
            return false;
        }
        if self.keys.has_idle() || self.owners.has_idle() {
            self.sweep_idle();
        }
        self.memory_usage().total >= cap
    }
}
