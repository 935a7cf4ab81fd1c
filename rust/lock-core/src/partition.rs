//! A thread-safe partition: one [`LockTable`] behind a mutex.
//!
//! A node owns many partitions and serves each from many threads; every call takes the
//! partition's mutex for the duration of one table operation, which never blocks on anything
//! else (no I/O, no waiting for a lock — waiting is a queue entry, not a parked thread).

use parking_lot::Mutex;

use crate::error::LockError;
use crate::table::LockTable;
use crate::types::{AcquireRequest, Grant, KeyInfo, Millis, ReleaseRequest, Released};

/// One partition of the lock space, safe to share between threads.
#[derive(Debug)]
pub struct Partition {
    table: Mutex<LockTable>,
}

impl Partition {
    /// A new, empty partition issuing tokens in `epoch`.
    pub fn new(epoch: u64) -> Result<Self, LockError> {
        Ok(Partition { table: Mutex::new(LockTable::new(epoch)?) })
    }

    /// See [`LockTable::try_acquire`].
    pub fn try_acquire(&self, req: &AcquireRequest, now: Millis) -> Result<Grant, LockError> {
        self.table.lock().try_acquire(req, now)
    }

    /// See [`LockTable::release`].
    pub fn release(&self, req: &ReleaseRequest) -> Result<Released, LockError> {
        self.table.lock().release(req)
    }

    /// See [`LockTable::key_info`].
    pub fn key_info(&self, key: &str, now: Millis) -> Result<KeyInfo, LockError> {
        self.table.lock().key_info(key, now)
    }

    /// Number of keys held in this partition.
    pub fn held_keys(&self) -> usize {
        self.table.lock().held_keys()
    }

    /// The partition's epoch.
    pub fn epoch(&self) -> u64 {
        self.table.lock().epoch()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Mode;
    use std::sync::Arc;

    #[test]
    fn partition_is_send_and_sync_and_exclusive_across_threads() {
        let p = Arc::new(Partition::new(1).expect("epoch"));
        let winners: usize = (0..8)
            .map(|i| {
                let p = Arc::clone(&p);
                std::thread::spawn(move || {
                    let req = AcquireRequest {
                        key: "k".into(),
                        owner: format!("o{i}"),
                        mode: Mode::Exclusive,
                    };
                    p.try_acquire(&req, 0).is_ok()
                })
            })
            .map(|h| usize::from(h.join().expect("thread")))
            .sum();
        assert_eq!(winners, 1);
        assert_eq!(p.held_keys(), 1);
    }
}
