//! A thread-safe partition: one [`LockTable`] behind a mutex.
//!
//! A node owns many partitions and serves each from many threads; every call takes the
//! partition's mutex for the duration of one table operation, which never blocks on anything
//! else (no I/O, no waiting for a lock — waiting is a queue entry, not a parked thread).
//! Partitions share nothing, so calls on different partitions never contend.

use parking_lot::{Mutex, MutexGuard};

use crate::answer::{
    AcquireOutcome, Grant, GroupInfo, GroupMember, KeyInfo, LimitChanged, MultiOutcome, Released,
    Renewed, SessionEnded, SessionInfo, WaiterInfo, WatchOutcome,
};
use crate::config::Config;
use crate::error::LockError;
use crate::event::Event;
use crate::request::{
    AcquireRequest, DowngradeRequest, ForceReleaseRequest, KeyInfoRequest, MultiAcquireRequest,
    MultiReleaseRequest, ReleaseRequest, RenewRequest, WatchRequest,
};
use crate::stats::{PartitionStats, SampleDrain, Telemetry};
use crate::table::{
    AuditRecord, FullState, ListFilter, ListPage, LockTable, PartitionDelta, PartitionSnapshot,
};
use crate::types::{Millis, SessionId, WaiterId};

/// Most locks a page takes per hold of the partition's mutex (see [`Partition::list_page`]).
pub const LIST_CHUNK: usize = 100;

/// One partition of the lock space, safe to share between threads.
#[derive(Debug)]
pub struct Partition {
    table: Mutex<LockTable>,
}

/// Writes the methods of [`Partition`] that are one table call: each takes the partition's
/// mutex, makes the call, and lets the mutex go, so no lock of the partition is held between two
/// calls and none is held while anything but the table runs. Each is documented by the table's
/// method it calls. Only what a caller outside the crate needs is mirrored (the bridge, the
/// benches); a caller that needs several steps at once takes the table with
/// [`Partition::with_table`].
macro_rules! one_call_each {
    ($(fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {
        $(
            #[doc = concat!("See [`LockTable::", stringify!($name), "`].")]
            pub fn $name(&self, $($arg: $ty),*) $(-> $ret)? {
                self.table.lock().$name($($arg),*)
            }
        )*
    };
}

impl Partition {
    /// A new, empty partition with the given settings.
    pub fn with_config(epoch: u64, config: Config) -> Result<Self, LockError> {
        Ok(Partition { table: Mutex::new(LockTable::with_config(epoch, config)?) })
    }

    /// A partition rebuilt from another node's snapshot (see [`LockTable::import`]).
    pub fn import(
        snapshot: &PartitionSnapshot,
        epoch: u64,
        config: Config,
        now: Millis,
    ) -> Result<Self, LockError> {
        Ok(Partition { table: Mutex::new(LockTable::import(snapshot, epoch, config, now)?) })
    }

    /// Runs `f` on the table under the partition's mutex (for callers that need several steps
    /// atomically, e.g. an acquire and the drain of its events).
    pub fn with_table<R>(&self, f: impl FnOnce(&mut LockTable) -> R) -> R {
        f(&mut self.table.lock())
    }

    one_call_each! {
        // Locks.
        fn acquire(req: &AcquireRequest, now: Millis) -> Result<AcquireOutcome, LockError>;
        fn acquire_many(req: &MultiAcquireRequest, now: Millis) -> Result<MultiOutcome, LockError>;
        fn cancel(waiter_id: WaiterId, now: Millis) -> Result<(), LockError>;
        fn watch(req: &WatchRequest, now: Millis) -> Result<WatchOutcome, LockError>;
        fn release(req: &ReleaseRequest, now: Millis) -> Result<Released, LockError>;
        fn release_many(req: &MultiReleaseRequest, now: Millis) -> Result<Vec<Released>, LockError>;
        fn force_release(req: &ForceReleaseRequest, now: Millis)
            -> Result<Vec<Released>, LockError>;
        fn change_semaphore_limit(name: &str, limit: u32, below_held: bool, now: Millis)
            -> Result<LimitChanged, LockError>;
        fn renew(req: &RenewRequest, now: Millis) -> Result<Renewed, LockError>;
        fn downgrade(req: &DowngradeRequest, now: Millis) -> Result<Grant, LockError>;
        // Sessions.
        fn create_session(owner: &str, ttl_ms: Option<Millis>, id: SessionId, now: Millis)
            -> Result<SessionInfo, LockError>;
        fn keepalive(session: &str, owner: &str, now: Millis) -> Result<SessionInfo, LockError>;
        fn end_session(session: &str, owner: &str, now: Millis) -> Result<SessionEnded, LockError>;
        // Groups.
        fn create_group(name: &str, now: Millis) -> Result<(), LockError>;
        fn delete_group(name: &str, now: Millis) -> Result<(), LockError>;
        fn update_member(name: &str, owner: &str, capabilities: Option<&str>, now: Millis)
            -> Result<GroupMember, LockError>;
        fn group_names() -> Vec<String>;
        fn group_info(name: &str) -> Result<GroupInfo, LockError>;
        // Time and events.
        fn advance(now: Millis);
        fn next_deadline() -> Option<Millis>;
        fn drain_events() -> Vec<Event>;
        fn drain_audit(max: usize) -> Vec<AuditRecord>;
        // Introspection (and `list_page` below).
        fn key_info(req: &KeyInfoRequest, now: Millis) -> Result<KeyInfo, LockError>;
        fn oldest_waiters(n: usize) -> Vec<WaiterInfo>;
        fn stats() -> PartitionStats;
        fn telemetry(samples: SampleDrain) -> Telemetry;
        fn held_keys() -> usize;
        // Replication (and `export` below), epochs and settings.
        fn set_change_tracking(on: bool);
        fn take_changes(now: Millis) -> Result<PartitionDelta, LockError>;
        fn export_full() -> FullState;
        fn begin_grace(until: Millis);
        fn epoch() -> u64;
        fn set_epoch(epoch: u64) -> Result<(), LockError>;
        fn set_config(config: Config) -> Result<(), LockError>;
    }

    /// See [`LockTable::list_page`]. The page is built [`LIST_CHUNK`] locks at a time, with the
    /// mutex released between chunks: a chunk holds it for some microseconds where a page of
    /// 1000 held it for ~0.2 ms, and an acquire arriving meanwhile no longer waits behind a
    /// whole page (bench/RESULTS.md, "Listing a million held locks"). The chunks share the
    /// page's [`SCAN_BUDGET`](crate::SCAN_BUDGET). A page built this way is what one call
    /// would answer with locks granted and released between its chunks — as between pages.
    pub fn list_page(&self, filter: &ListFilter) -> ListPage {
        let size = filter.page_size();
        let mut chunk = ListFilter { size: size.min(LIST_CHUNK), ..filter.clone() };
        let (mut page, mut examined) = self.chunk(&chunk, crate::SCAN_BUDGET);
        // A chunk short of its size stopped at the end, at the prefix's end or at the budget:
        // so does the page.
        let mut full = page.locks.len() == chunk.size;
        while full && page.locks.len() < size && examined < crate::SCAN_BUDGET {
            let Some(after) = page.next.take() else { break };
            chunk.after = Some(after);
            chunk.size = (size - page.locks.len()).min(LIST_CHUNK);
            let (more, seen) = self.chunk(&chunk, crate::SCAN_BUDGET - examined);
            examined += seen;
            full = more.locks.len() == chunk.size;
            page.locks.extend(more.locks);
            page.next = more.next;
        }
        page
    }

    /// One chunk of a page. The mutex is released fairly: a call that queued for it meanwhile
    /// gets it next, rather than the listing taking it again for its next chunk.
    fn chunk(&self, filter: &ListFilter, budget: usize) -> (ListPage, usize) {
        let table = self.table.lock();
        let chunk = table.list_page_within(filter, budget);
        MutexGuard::unlock_fair(table);
        chunk
    }

    /// The held state after advancing to `now` (see [`LockTable::export`]): one hold of the
    /// mutex, so nothing changes between the advance and the export.
    pub fn export(&self, now: Millis) -> PartitionSnapshot {
        let mut t = self.table.lock();
        t.advance(now);
        t.export()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn partition_is_send_and_sync_and_exclusive_across_threads() {
        let p = Arc::new(Partition::with_config(1, Config::default()).expect("epoch"));
        let winners: usize = (0..8)
            .map(|i| {
                let p = Arc::clone(&p);
                std::thread::spawn(move || {
                    let req = AcquireRequest::new("k", format!("o{i}"));
                    matches!(p.acquire(&req, 0), Ok(AcquireOutcome::Granted(_)))
                })
            })
            .map(|h| usize::from(h.join().expect("thread")))
            .sum();
        assert_eq!(winners, 1);
        assert_eq!(p.held_keys(), 1);
    }
}
