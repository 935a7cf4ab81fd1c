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

impl Partition {
    /// A new, empty partition issuing tokens in `epoch`, with the default [`Config`].
    pub fn new(epoch: u64) -> Result<Self, LockError> {
        Ok(Partition { table: Mutex::new(LockTable::new(epoch)?) })
    }

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

    /// See [`LockTable::acquire`].
    pub fn acquire(&self, req: &AcquireRequest, now: Millis) -> Result<AcquireOutcome, LockError> {
        self.table.lock().acquire(req, now)
    }

    /// See [`LockTable::acquire_many`].
    pub fn acquire_many(
        &self,
        req: &MultiAcquireRequest,
        now: Millis,
    ) -> Result<MultiOutcome, LockError> {
        self.table.lock().acquire_many(req, now)
    }

    /// See [`LockTable::release`].
    pub fn release(&self, req: &ReleaseRequest, now: Millis) -> Result<Released, LockError> {
        self.table.lock().release(req, now)
    }

    /// See [`LockTable::release_many`].
    pub fn release_many(
        &self,
        req: &MultiReleaseRequest,
        now: Millis,
    ) -> Result<Vec<Released>, LockError> {
        self.table.lock().release_many(req, now)
    }

    /// See [`LockTable::force_release`].
    pub fn force_release(
        &self,
        req: &ForceReleaseRequest,
        now: Millis,
    ) -> Result<Vec<Released>, LockError> {
        self.table.lock().force_release(req, now)
    }

    /// See [`LockTable::change_semaphore_limit`].
    pub fn change_semaphore_limit(
        &self,
        name: &str,
        limit: u32,
        below_held: bool,
        now: Millis,
    ) -> Result<LimitChanged, LockError> {
        self.table.lock().change_semaphore_limit(name, limit, below_held, now)
    }

    /// See [`LockTable::telemetry`].
    pub fn telemetry(&self, samples: SampleDrain) -> Telemetry {
        self.table.lock().telemetry(samples)
    }

    /// See [`LockTable::drain_audit`].
    pub fn drain_audit(&self, max: usize) -> Vec<AuditRecord> {
        self.table.lock().drain_audit(max)
    }

    /// See [`LockTable::renew`].
    pub fn renew(&self, req: &RenewRequest, now: Millis) -> Result<Renewed, LockError> {
        self.table.lock().renew(req, now)
    }

    /// See [`LockTable::downgrade`].
    pub fn downgrade(&self, req: &DowngradeRequest, now: Millis) -> Result<Grant, LockError> {
        self.table.lock().downgrade(req, now)
    }

    /// See [`LockTable::cancel`].
    pub fn cancel(&self, waiter_id: WaiterId, now: Millis) -> Result<(), LockError> {
        self.table.lock().cancel(waiter_id, now)
    }

    /// See [`LockTable::watch`].
    pub fn watch(&self, req: &WatchRequest, now: Millis) -> Result<WatchOutcome, LockError> {
        self.table.lock().watch(req, now)
    }

    /// See [`LockTable::create_session`].
    pub fn create_session(
        &self,
        owner: &str,
        ttl_ms: Option<Millis>,
        id: SessionId,
        now: Millis,
    ) -> Result<SessionInfo, LockError> {
        self.table.lock().create_session(owner, ttl_ms, id, now)
    }

    /// See [`LockTable::keepalive`].
    pub fn keepalive(
        &self,
        session: &str,
        owner: &str,
        now: Millis,
    ) -> Result<SessionInfo, LockError> {
        self.table.lock().keepalive(session, owner, now)
    }

    /// See [`LockTable::end_session`].
    pub fn end_session(
        &self,
        session: &str,
        owner: &str,
        now: Millis,
    ) -> Result<SessionEnded, LockError> {
        self.table.lock().end_session(session, owner, now)
    }

    /// See [`LockTable::create_group`].
    pub fn create_group(&self, name: &str, now: Millis) -> Result<(), LockError> {
        self.table.lock().create_group(name, now)
    }

    /// See [`LockTable::delete_group`].
    pub fn delete_group(&self, name: &str, now: Millis) -> Result<(), LockError> {
        self.table.lock().delete_group(name, now)
    }

    /// See [`LockTable::update_member`].
    pub fn update_member(
        &self,
        name: &str,
        owner: &str,
        capabilities: Option<&str>,
        now: Millis,
    ) -> Result<GroupMember, LockError> {
        self.table.lock().update_member(name, owner, capabilities, now)
    }

    /// See [`LockTable::group_names`].
    pub fn group_names(&self) -> Vec<String> {
        self.table.lock().group_names()
    }

    /// See [`LockTable::group_info`].
    pub fn group_info(&self, name: &str) -> Result<GroupInfo, LockError> {
        self.table.lock().group_info(name)
    }

    /// See [`LockTable::advance`].
    pub fn advance(&self, now: Millis) {
        self.table.lock().advance(now)
    }

    /// See [`LockTable::next_deadline`].
    pub fn next_deadline(&self) -> Option<Millis> {
        self.table.lock().next_deadline()
    }

    /// See [`LockTable::drain_events`].
    pub fn drain_events(&self) -> Vec<Event> {
        self.table.lock().drain_events()
    }

    /// See [`LockTable::key_info`].
    pub fn key_info(&self, req: &KeyInfoRequest, now: Millis) -> Result<KeyInfo, LockError> {
        self.table.lock().key_info(req, now)
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

    /// See [`LockTable::oldest_waiters`].
    pub fn oldest_waiters(&self, n: usize) -> Vec<WaiterInfo> {
        self.table.lock().oldest_waiters(n)
    }

    /// See [`LockTable::stats`].
    pub fn stats(&self) -> PartitionStats {
        self.table.lock().stats()
    }

    /// See [`LockTable::export`].
    pub fn export(&self, now: Millis) -> PartitionSnapshot {
        let mut t = self.table.lock();
        t.advance(now);
        t.export()
    }

    /// Turns change tracking for replicas on or off (see [`LockTable::set_change_tracking`]).
    pub fn set_change_tracking(&self, on: bool) {
        self.table.lock().set_change_tracking(on)
    }

    /// What changed since the previous take, after advancing to `now` (see
    /// [`LockTable::take_changes`]).
    pub fn take_changes(&self, now: Millis) -> Result<PartitionDelta, LockError> {
        self.table.lock().take_changes(now)
    }

    /// The held state with the `seq` of the latest take (see [`LockTable::export_full`]).
    pub fn export_full(&self) -> FullState {
        self.table.lock().export_full()
    }

    /// See [`LockTable::begin_grace`].
    pub fn begin_grace(&self, until: Millis) {
        self.table.lock().begin_grace(until)
    }

    /// See [`LockTable::set_epoch`].
    pub fn set_epoch(&self, epoch: u64) -> Result<(), LockError> {
        self.table.lock().set_epoch(epoch)
    }

    /// Number of keys held in this partition.
    pub fn held_keys(&self) -> usize {
        self.table.lock().held_keys()
    }

    /// The partition's epoch.
    pub fn epoch(&self) -> u64 {
        self.table.lock().epoch()
    }

    /// See [`LockTable::set_config`].
    pub fn set_config(&self, config: Config) -> Result<(), LockError> {
        self.table.lock().set_config(config)
    }

    /// The partition's settings.
    pub fn config(&self) -> Config {
        *self.table.lock().config()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn partition_is_send_and_sync_and_exclusive_across_threads() {
        let p = Arc::new(Partition::new(1).expect("epoch"));
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
