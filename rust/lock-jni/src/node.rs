//! What one Elasticsearch node owns on the native side: its partitions and its clock.
//!
//! For now a node serves a single partition; the partition map arrives with cluster routing.
//! The clock lives here, not in `lock-core`: the core only ever sees milliseconds handed to it.

use std::time::Instant;

use lock_core::{LockError, Partition};

/// The native state of one node, behind one handle.
#[derive(Debug)]
pub struct NodeCore {
    started: Instant,
    partition: Partition,
}

impl NodeCore {
    /// A node core whose partition issues tokens in `epoch`.
    pub fn new(epoch: u64) -> Result<Self, LockError> {
        let partition = Partition::new(epoch)?;
        tracing::info!(epoch, core_version = lock_core::VERSION, "lock core created");
        Ok(NodeCore { started: Instant::now(), partition })
    }

    /// Monotonic milliseconds since this core was created.
    pub fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The partition serving every key (until partitions are routed).
    pub fn partition(&self) -> &Partition {
        &self.partition
    }
}

impl Drop for NodeCore {
    fn drop(&mut self) {
        tracing::info!(held_keys = self.partition.held_keys(), "lock core closed");
    }
}
