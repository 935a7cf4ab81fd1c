//! What one Elasticsearch node owns on the native side: its partitions, their settings and the
//! clock.
//!
//! The clock lives here, not in `lock-core`: the core only ever sees the milliseconds handed to
//! it. Partitions are numbered like the shards of the lock index (DESIGN.md §3); a single-node
//! set-up serves everything from partition 0.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use lock_core::{Config, LockError, Partition};
use parking_lot::RwLock;
use serde::Deserialize;

/// How a node core starts: its settings and the partitions it owns from the start.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    #[serde(default)]
    pub config: Config,
    /// `(partition id, epoch)` pairs; empty means partition 0 in epoch 1.
    #[serde(default)]
    pub partitions: Vec<PartitionSpec>,
}

/// A partition to open, with the epoch its tokens carry.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionSpec {
    pub id: u32,
    pub epoch: u64,
}

/// The native state of one node, behind one handle.
#[derive(Debug)]
pub struct NodeCore {
    started: Instant,
    config: RwLock<Config>,
    partitions: RwLock<BTreeMap<u32, Arc<Partition>>>,
}

impl NodeCore {
    /// A node core with the given settings and partitions.
    pub fn new(node: NodeConfig) -> Result<Self, LockError> {
        node.config.validate()?;
        let specs = if node.partitions.is_empty() {
            vec![PartitionSpec { id: 0, epoch: 1 }]
        } else {
            node.partitions
        };
        let mut partitions = BTreeMap::new();
        for spec in &specs {
            let partition = Partition::with_config(spec.epoch, node.config)?;
            partitions.insert(spec.id, Arc::new(partition));
        }
        tracing::info!(
            partitions = specs.len(),
            core_version = lock_core::VERSION,
            "lock core created"
        );
        Ok(NodeCore {
            started: Instant::now(),
            config: RwLock::new(node.config),
            partitions: RwLock::new(partitions),
        })
    }

    /// Monotonic milliseconds since this core was created.
    pub fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The partition `id`.
    pub fn partition(&self, id: u32) -> Result<Arc<Partition>, LockError> {
        self.partitions.read().get(&id).cloned().ok_or_else(|| {
            LockError::invalid("partition", format!("partition [{id}] is not open on this node"))
        })
    }

    /// Every open partition with its id, in id order.
    pub fn partitions(&self) -> Vec<(u32, Arc<Partition>)> {
        self.partitions.read().iter().map(|(id, p)| (*id, Arc::clone(p))).collect()
    }

    /// The settings every partition runs with.
    pub fn config(&self) -> Config {
        *self.config.read()
    }

    /// Applies new settings to every partition (dynamic settings changed).
    pub fn set_config(&self, config: Config) -> Result<(), LockError> {
        config.validate()?;
        let mut current = self.config.write();
        for (_, partition) in self.partitions() {
            partition.set_config(config)?;
        }
        *current = config;
        tracing::info!(?config, "lock settings updated");
        Ok(())
    }

    /// Milliseconds from now until the earliest deadline of any partition, if there is one.
    pub fn next_deadline_in(&self) -> Option<u64> {
        let now = self.now();
        self.partitions()
            .iter()
            .filter_map(|(_, p)| p.next_deadline())
            .min()
            .map(|deadline| deadline.saturating_sub(now))
    }
}

impl Drop for NodeCore {
    fn drop(&mut self) {
        let held: usize = self.partitions.read().values().map(|p| p.held_keys()).sum();
        tracing::info!(held_keys = held, "lock core closed");
    }
}
