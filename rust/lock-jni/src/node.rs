//! What one Elasticsearch node owns on the native side: its partitions, their settings and the
//! clock.
//!
//! The clock lives here, not in `lock-core`: the core only ever sees the milliseconds handed to
//! it. Partitions are numbered like the shards of the lock index (docs/ARCHITECTURE.md,
//! "Partitions, owners, epochs"); a single-node set-up serves everything from partition 0.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use lock_core::ownership::{Micros, Ownership, Verdict};
use lock_core::{
    Config, Counters, FullState, LockError, Partition, PartitionDelta, PartitionSnapshot,
    SampleDrain, Standby, STATE_FORMAT_LOCK_DELAY,
};
use parking_lot::{Mutex, RwLock};
use serde::Deserialize;

/// How a node core starts: its settings and the partitions it owns from the start.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    #[serde(default)]
    pub config: Config,
    /// Partitions open from the start; absent means partition 0 in epoch 1 (a standalone
    /// core). The plugin passes `[]` and opens partitions as the cluster assigns them.
    #[serde(default)]
    pub partitions: Option<Vec<PartitionSpec>>,
    /// The Elasticsearch node's name, shown as the `node` of each holder a key's answer lists
    /// (docs/API.md "Reading"); absent outside a node (the C ABI, tests).
    #[serde(default)]
    pub node_name: Option<String>,
    /// A node of a cluster: a partition serves only while its owner's lease is current
    /// (`lock_core::ownership`, docs/ARCHITECTURE.md "Silent owners"). Absent, a standalone core
    /// (the C ABI, tests, benchmarks in process) serves every partition it opened.
    #[serde(default)]
    pub leases: bool,
}

/// A partition to open, with the epoch its tokens carry.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionSpec {
    pub id: u32,
    pub epoch: u64,
}

/// How to open a partition (see [`NodeCore::open_partition`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenSpec<'a> {
    /// The epoch its tokens carry (the shard's primary term).
    pub epoch: u64,
    /// Recovery grace: no grants for this long (no copy of the previous owner's state exists).
    pub grace_ms: u64,
    /// The previous owner's state, handed over.
    pub snapshot: Option<&'a PartitionSnapshot>,
    /// Start from this node's standby (its replica became the primary).
    pub from_standby: bool,
    /// Record changes for replicas (`locks.durability: replicated`).
    pub replicated: bool,
    /// Opened from the cluster state the elected master just published, which confirms this
    /// owner; `false` when reopened from this node's own state, which may be stale.
    pub confirmed: bool,
}

/// The native state of one node, behind one handle.
#[derive(Debug)]
pub struct NodeCore {
    started: Instant,
    /// See [`NodeConfig::node_name`].
    node_name: Option<String>,
    config: RwLock<Config>,
    partitions: RwLock<BTreeMap<u32, Arc<Partition>>>,
    /// When each partition's recovery grace ends (core clock); absent = never in grace.
    grace_until: RwLock<BTreeMap<u32, u64>>,
    /// The standby tables of the partitions this node holds a replica of (docs/ARCHITECTURE.md,
    /// "Replication"): kept current by the primary's batches, opened as the live partition when
    /// this copy becomes the primary.
    standbys: RwLock<BTreeMap<u32, Standby>>,
    /// Partitions in which the core panicked (docs/RELIABILITY.md, "A panic in the core"): out
    /// of [`NodeCore::partitions`], since their tables may be inconsistent, and refused until
    /// they are opened again (or closed).
    failed: RwLock<BTreeMap<u32, FailedPartition>>,
    /// The state format every node of the cluster reads, as the plugin last said
    /// ([`NodeCore::set_peer_format`]); this build's until told. What the oldest peer cannot read
    /// is refused, never written (docs/ARCHITECTURE.md, "Formats and versions").
    peer_format: AtomicU32,
    /// Who may serve which partition: this node's part in the ownership protocol, fed by the
    /// plugin's events, asked before every operation that changes or shows a table.
    ownership: Mutex<Ownership>,
    /// See [`NodeConfig::leases`].
    leases: bool,
    /// Whether the partitions' histograms keep their samples for the telemetry's drains
    /// (`ops/telemetry.rs`): a partition opened while this is on records from its opening.
    time_samples: AtomicBool,
    /// The counters of the partitions this node closed or replaced, so that the telemetry's
    /// counters of the node only grow (a partition that moves away keeps counting here). Changed
    /// only under the `partitions` write lock, and read with the list under its read lock
    /// ([`NodeCore::counted_partitions`]): each partition is in one or the other.
    retired: Mutex<Counters>,
}

/// A partition in which the core panicked: the epoch it served in and the panic's message.
#[derive(Debug, Clone)]
pub struct FailedPartition {
    pub epoch: u64,
    pub message: String,
}

impl NodeCore {
    /// A node core with the given settings and partitions.
    pub fn new(node: NodeConfig) -> Result<Self, LockError> {
        node.config.validate()?;
        let specs = node.partitions.unwrap_or_else(|| vec![PartitionSpec { id: 0, epoch: 1 }]);
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
            node_name: node.node_name,
            config: RwLock::new(node.config),
            partitions: RwLock::new(partitions),
            grace_until: RwLock::new(BTreeMap::new()),
            standbys: RwLock::new(BTreeMap::new()),
            failed: RwLock::new(BTreeMap::new()),
            peer_format: AtomicU32::new(lock_core::STATE_FORMAT),
            ownership: Mutex::new(new_ownership()),
            leases: node.leases,
            time_samples: AtomicBool::new(false),
            retired: Mutex::new(Counters::default()),
        })
    }

    /// The node's name, if the plugin gave it (see [`NodeConfig::node_name`]).
    pub fn node_name(&self) -> Option<&str> {
        self.node_name.as_deref()
    }

    /// The state format every node of the cluster reads (see [`NodeCore::peer_format`]).
    pub fn peer_format(&self) -> u32 {
        self.peer_format.load(Ordering::Relaxed)
    }

    /// Records the state format every node of the cluster reads (the plugin's `PeerFormats`),
    /// and applies the settings again when that turns the default lock-delay on or off.
    pub fn set_peer_format(&self, format: u32) -> Result<(), LockError> {
        lock_core::check_state_format(format)?;
        let current = self.config.write();
        let before = self.peer_format.swap(format, Ordering::Relaxed);
        if (before >= STATE_FORMAT_LOCK_DELAY) != (format >= STATE_FORMAT_LOCK_DELAY) {
            for (_, partition) in self.partitions() {
                partition.set_config(self.table_config(*current))?;
            }
        }
        Ok(())
    }

    /// The settings a partition's table runs with: the node's, without a default lock-delay
    /// while a node of the cluster cannot read one (docs/LOCK_CORE.md, "Lock-delay").
    fn table_config(&self, config: Config) -> Config {
        if self.peer_format() >= STATE_FORMAT_LOCK_DELAY {
            config
        } else {
            Config { default_lock_delay_ms: 0, ..config }
        }
    }

    /// Monotonic milliseconds since this core was created.
    pub fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Monotonic microseconds since this core was created: the ownership protocol's clock.
    pub fn now_us(&self) -> Micros {
        u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Runs `f` on this node's part of the ownership protocol.
    pub fn ownership<R>(&self, f: impl FnOnce(&mut Ownership) -> R) -> R {
        f(&mut self.ownership.lock())
    }

    /// Whether this node may serve partition `id` now: always in a standalone core, else while
    /// its lease is current.
    pub fn verdict(&self, id: u32, now: Micros) -> Verdict {
        if !self.leases {
            return Verdict::Serve;
        }
        self.ownership.lock().verdict(id, now)
    }

    /// The partition `id`.
    pub fn partition(&self, id: u32) -> Result<Arc<Partition>, LockError> {
        self.partitions.read().get(&id).cloned().ok_or_else(|| {
            LockError::invalid("partition", format!("partition [{id}] is not open on this node"))
        })
    }

    /// Marks partition `id` failed after a panic in it: it leaves the open partitions (nothing
    /// reads, ticks or exports its table any more) and every call on it is refused until it is
    /// opened again. Answers the epoch it served in; `None` when it was not open.
    pub fn fail_partition(&self, id: u32, message: &str) -> Option<u64> {
        let removed = self.partitions.write().remove(&id)?;
        self.grace_until.write().remove(&id);
        self.ownership.lock().closed(id);
        let epoch = removed.epoch();
        let failed = FailedPartition { epoch, message: message.to_owned() };
        self.failed.write().insert(id, failed);
        tracing::error!(
            partition = id,
            epoch,
            "lock partition failed after a panic in the core; refused until it is reopened"
        );
        Some(epoch)
    }

    /// Whether partition `id` failed after a panic (see [`NodeCore::fail_partition`]).
    pub fn failed(&self, id: u32) -> Option<FailedPartition> {
        self.failed.read().get(&id).cloned()
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
            partition.set_config(self.table_config(config))?;
        }
        *current = config;
        tracing::info!(?config, "lock settings updated");
        Ok(())
    }

    /// Opens partition `id` as `spec` says (it became this node's). With a snapshot (a planned
    /// hand-over from the previous owner, or this node's own standby when its replica became the
    /// primary) its holders, leases, sessions and token counter carry on; with `grace_ms` (the
    /// previous owner died and no copy of its state exists) it grants nothing until every lease
    /// the dead owner could have granted has run out. Already open: the epoch is raised if
    /// higher.
    pub fn open_partition(&self, id: u32, spec: OpenSpec<'_>) -> Result<(), LockError> {
        let now = self.now();
        let config = self.table_config(self.config());
        let standby = if spec.from_standby { Some(self.take_standby(id)?) } else { None };
        let snapshot = standby.as_ref().map(|s| s.snapshot(now));
        let snapshot = snapshot.as_ref().or(spec.snapshot);
        let epoch = spec.epoch;
        let mut partitions = self.partitions.write();
        self.failed.write().remove(&id);
        match (partitions.get(&id), snapshot) {
            (Some(existing), None) => {
                if epoch > existing.epoch() {
                    existing.set_epoch(epoch)?;
                }
            }
            (_, Some(snapshot)) => {
                let imported = Partition::import(snapshot, epoch.max(snapshot.epoch), config, now)?;
                if let Some(replaced) = partitions.insert(id, self.recording(imported)) {
                    self.retire(&replaced);
                }
            }
            (None, None) => {
                partitions.insert(id, self.recording(Partition::with_config(epoch, config)?));
            }
        }
        if let Some(p) = partitions.get(&id) {
            p.set_change_tracking(spec.replicated);
            // Its lease starts anew in the epoch it serves in (the tokens' epoch).
            self.ownership.lock().opened(id, p.epoch(), spec.confirmed, self.now_us());
        }
        // A snapshot of a partition in grace carries the grace on (it is in the table already).
        let grace_ms = spec.grace_ms.max(snapshot.map_or(0, |s| s.grace_ms));
        if grace_ms > 0 {
            let until = now.saturating_add(grace_ms);
            if let Some(p) = partitions.get(&id) {
                p.begin_grace(until);
            }
            self.grace_until.write().insert(id, until);
        }
        tracing::info!(
            partition = id,
            epoch,
            grace_ms,
            handed_over = spec.snapshot.is_some(),
            from_standby = spec.from_standby,
            replicated = spec.replicated,
            "partition opened"
        );
        Ok(())
    }

    /// A new partition, its histograms keeping their samples for the telemetry's drains when
    /// those are on (the first drain of a histogram starts it and answers nothing).
    fn recording(&self, partition: Partition) -> Arc<Partition> {
        if self.time_samples() {
            partition.telemetry(SampleDrain::Take);
        }
        Arc::new(partition)
    }

    /// Keeps the counters of a partition that leaves the node (closed, or replaced by an import);
    /// called under the `partitions` write lock. A partition failed by a panic is not kept: its
    /// table may be inconsistent, and a panic is rare and logged.
    fn retire(&self, partition: &Partition) {
        let counters = partition.telemetry(SampleDrain::None).counters;
        self.retired.lock().absorb(&counters);
    }

    /// The open partitions and the counters of those that left, read together: a partition is
    /// in one or the other, never both or neither.
    pub fn counted_partitions(&self) -> (Counters, Vec<(u32, Arc<Partition>)>) {
        let partitions = self.partitions.read();
        let retired = self.retired.lock().clone();
        (retired, partitions.iter().map(|(id, p)| (*id, Arc::clone(p))).collect())
    }

    /// Whether the partitions keep their time samples for the telemetry's drains.
    pub fn time_samples(&self) -> bool {
        self.time_samples.load(Ordering::Acquire)
    }

    /// Turns the keeping of time samples on or off for partitions opened from now on (a drain
    /// turns the open ones' on or off itself).
    pub fn set_time_samples(&self, on: bool) {
        self.time_samples.store(on, Ordering::Release);
    }

    /// Removes and answers partition `id`'s standby, or an error naming `standby`.
    fn take_standby(&self, id: u32) -> Result<Standby, LockError> {
        self.standbys.write().remove(&id).ok_or_else(|| {
            LockError::invalid("standby", format!("partition [{id}] has no standby on this node"))
        })
    }

    /// Replaces partition `id`'s standby with the primary's full state.
    pub fn standby_full(&self, id: u32, full: &FullState) -> Standby {
        let standby = Standby::from_full(full, self.now());
        self.standbys.write().insert(id, standby.clone());
        standby
    }

    /// Partition `id`'s standby after a copy's catch-up with `full`, the primary's live state
    /// fetched out of the batch stream (docs/ARCHITECTURE.md, "Replication"): installed unless
    /// the standby is already as new (a batch that arrived meanwhile must not be undone).
    pub fn standby_catch_up(&self, id: u32, full: &FullState) -> Standby {
        let now = self.now();
        let mut standbys = self.standbys.write();
        match standbys.get(&id) {
            Some(existing) if !existing.older_than(full) => existing.clone(),
            _ => {
                let standby = Standby::from_full(full, now);
                standbys.insert(id, standby.clone());
                standby
            }
        }
    }

    /// Applies the primary's next delta to partition `id`'s standby; `None` when there is no
    /// standby yet (this copy has not received a full state).
    ///
    /// # Errors
    /// The delta does not follow the standby (see [`Standby::apply`]).
    pub fn standby_delta(
        &self,
        id: u32,
        delta: &PartitionDelta,
    ) -> Result<Option<Standby>, LockError> {
        let now = self.now();
        let mut standbys = self.standbys.write();
        let Some(standby) = standbys.get_mut(&id) else { return Ok(None) };
        standby.apply(delta, now)?;
        Ok(Some(standby.clone()))
    }

    /// Partition `id`'s standby as a full state (leases as time left now), dropped with `drop`.
    pub fn standby_export(&self, id: u32, drop: bool) -> Option<FullState> {
        let now = self.now();
        let mut standbys = self.standbys.write();
        let full = standbys.get(&id).map(|s| FullState { seq: s.seq(), snapshot: s.snapshot(now) });
        if drop {
            standbys.remove(&id);
        }
        full
    }

    /// Closes partition `id` (it is no longer this node's); answers its state for the next
    /// owner when `export` is set. Its waiters are dropped here; the plugin fails their requests
    /// as retryable so that coordinators retry against the new owner.
    pub fn close_partition(&self, id: u32, export: bool) -> Option<PartitionSnapshot> {
        // It stops serving before its state can leave (docs/ARCHITECTURE.md "Silent owners").
        self.ownership(|o| {
            if export {
                o.handed_over(id);
            } else {
                o.closed(id);
            }
        });
        let removed = {
            let mut partitions = self.partitions.write();
            let removed = partitions.remove(&id);
            removed.iter().for_each(|p| self.retire(p));
            removed
        };
        self.grace_until.write().remove(&id);
        self.failed.write().remove(&id);
        let now = self.now();
        removed
            .map(|p| {
                tracing::info!(partition = id, held = p.held_keys(), export, "partition closed");
                p.export(now)
            })
            .filter(|_| export)
    }

    /// Whether partition `id` is still in recovery grace.
    pub fn in_grace(&self, id: u32) -> bool {
        self.grace_left_ms(id) > 0
    }

    /// Milliseconds of recovery grace partition `id` has left (0: none).
    pub fn grace_left_ms(&self, id: u32) -> u64 {
        self.grace_until.read().get(&id).map_or(0, |until| until.saturating_sub(self.now()))
    }

    /// Milliseconds from now until the earliest deadline of any partition this node may serve
    /// now, if there is one (one it may not serve moves on only once its lease is current again,
    /// and the plugin looks again then).
    pub fn next_deadline_in(&self) -> Option<u64> {
        let now = self.now();
        let now_us = self.now_us();
        self.partitions()
            .iter()
            .filter(|(id, _)| self.verdict(*id, now_us).serves())
            .filter_map(|(_, p)| p.next_deadline())
            .min()
            .map(|deadline| deadline.saturating_sub(now))
    }
}

/// This node's part in the ownership protocol; in the fault-injection build with the flaw that
/// `ESLM_FAULT_FLAW` names (docs/RELIABILITY.md "Who may serve"), so that a real-node test can show
/// what the protocol prevents.
fn new_ownership() -> Ownership {
    #[allow(unused_mut)]
    let mut ownership = Ownership::new();
    #[cfg(feature = "fault-injection")]
    if let Some(flaw) = std::env::var("ESLM_FAULT_FLAW").ok().as_deref().and_then(flaw_named) {
        tracing::warn!(?flaw, "fault injection: the ownership protocol runs with a flaw");
        ownership.set_flaw(flaw);
    }
    ownership
}

/// The flaw a fault-injection node runs with, by its `ESLM_FAULT_FLAW` name.
#[cfg(feature = "fault-injection")]
fn flaw_named(name: &str) -> Option<lock_core::ownership::Flaw> {
    use lock_core::ownership::Flaw;
    match name {
        "no_promotion_wait" => Some(Flaw::NoPromotionWait),
        "no_wait_without_answer" => Some(Flaw::NoWaitWithoutAnswer),
        "lease_from_answer" => Some(Flaw::LeaseFromAnswer),
        "source_serves_after_hand_over" => Some(Flaw::SourceServesAfterHandOver),
        "no_master_window_wait" => Some(Flaw::NoMasterWindowWait),
        "ignores_lease" => Some(Flaw::IgnoresLease),
        _ => None,
    }
}

impl Drop for NodeCore {
    fn drop(&mut self) {
        let held: usize = self.partitions.read().values().map(|p| p.held_keys()).sum();
        tracing::info!(held_keys = held, "lock core closed");
    }
}
