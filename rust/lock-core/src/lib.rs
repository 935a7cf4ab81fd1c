//! The lock table of the Elasticsearch Lock Manager.
//!
//! This crate holds every lock rule of the product and nothing else: no JNI, no I/O, no threads
//! of its own and no wall clock. Time comes in as monotonic milliseconds from the caller, so the
//! same sequence of calls always gives the same answers — which is what lets the tests replay
//! any history.
//!
//! The layers, from the inside out:
//!
//! | type | what it is | thread-safety |
//! |---|---|---|
//! | [`LockTable`] | the keys of one partition: holders, wait queues, leases, sessions, fencing counter | single-threaded (`&mut self`) |
//! | [`Partition`] | a [`LockTable`] behind a mutex | `Send + Sync`, call from any thread |
//! | [`Standby`] | a replica's copy of a table's held state, kept by applying [`PartitionDelta`]s; promoted with [`LockTable::import`] | single-threaded (`&mut self`) |
//!
//! The bridge crate (`lock-jni`) owns [`Partition`]s and turns Java calls into calls here. A
//! request that has to wait answers [`AcquireOutcome::Queued`] with a waiter id at once; its
//! final outcome is an [`Event`] the bridge takes with [`Partition::drain_events`], after any
//! call and whenever [`Partition::next_deadline`] passes (then call [`Partition::advance`]).
//!
//! The rules are written up, in tables, in `docs/LOCK_CORE.md`.
//!
//! The modules, in dependency order (they import each other without a cycle, which
//! `tests/structure.rs` checks):
//! `mode` (modes and their compatibility table), `types` (ids, times, tokens), `request` and
//! `answer` (the JSON records), `error`, `event`, `config`, `validate` (every input check),
//! `histogram` (windowed time histograms), `stats`, `table` (the lock table, one file per concern, see `src/table/README.md`),
//! `standby` (a replica's copy of a table, kept by applying the primary's changes),
//! `partition`, and apart from the table `ownership` (who may serve a partition: the protocol of
//! docs/ARCHITECTURE.md "Silent owners", its bounds included) and `fence` (a fenced change to a
//! protected document: docs/ARCHITECTURE.md "Protected data"); with the test-only cargo feature `fault-injection`, `fault` (a panic on purpose,
//! docs/RELIABILITY.md "A panic in the core").

// No unsafe code anywhere in the lock rules: what must not be corrupted is kept safe by the
// compiler alone (the bridge crate holds the one unsafe boundary, JNI).
#![forbid(unsafe_code)]
// No production function longer than `too-many-lines-threshold` (clippy.toml, 80 lines).
#![warn(clippy::too_many_lines)]

mod answer;
mod config;
mod error;
mod event;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub mod fence;
mod format;
mod histogram;
mod mode;
pub mod ownership;
mod partition;
mod request;
mod standby;
mod stats;
mod table;
mod types;
mod validate;

pub use answer::{
    AcquireOutcome, DelayInfo, Grant, GroupInfo, GroupMember, HolderInfo, KeyInfo, LimitChanged,
    LockInfo, MultiOutcome, Queued, Released, Renewed, SessionEnded, SessionInfo, WaiterInfo,
    WatchOutcome, WatchReason, Watched,
};
pub use config::{
    Config, Limits, MAX_AGING_MS, MAX_AUDIT_CAPACITY, MAX_LEASE_EVER_MS, MAX_LOCK_DELAY_MS,
};
pub use error::{ErrorCode, LockError};
pub use event::{CancelReason, Event};
pub use format::{
    check_state_format, check_write_format, current_state_format, OLDEST_STATE_FORMAT,
    STATE_FORMAT, STATE_FORMAT_ACQUISITION, STATE_FORMAT_GROUPS, STATE_FORMAT_LOCK_DELAY,
    STATE_FORMAT_OVER_LIMIT,
};
pub use histogram::{
    DrainedSamples, Histogram, HistogramSummary, BUCKETS, MAX_TRACKED_MS, RELATIVE_ERROR, SLOT_MS,
    SUB_BUCKETS, WINDOW_MS,
};
pub use mode::{Mode, ALL_MODES};
pub use partition::{Partition, LIST_CHUNK};
pub use request::{
    AcquireRequest, DowngradeRequest, ForceReleaseRequest, KeyInfoRequest, LockItem,
    MultiAcquireRequest, MultiReleaseRequest, ReleaseItem, ReleaseRequest, RenewRequest,
    WatchRequest,
};
pub use standby::Standby;
pub use stats::{AuditStats, Counters, HotKey, PartitionStats, SampleDrain, Telemetry};
pub use table::{
    AuditEvent, AuditRecord, FullState, ListCursor, ListFilter, ListPage, LockSnapshot, LockTable,
    MemoryUsage, PartitionDelta, PartitionSnapshot, ReleasedLock, SessionSnapshot, MAX_TIME,
    SCAN_BUDGET,
};
pub use types::{
    acquisition_digest, FencingToken, Millis, Priority, PriorityValue, Scope, SessionId, WaiterId,
    MAX_ACQUISITION_BYTES, MAX_ELECTION_VALUE_BYTES, MAX_KEY_BYTES, MAX_OWNER_BYTES,
    MAX_SEMAPHORE_LIMIT,
};
pub use validate::{tree_ancestors, validate_key, validate_owner, validate_tree_path};

/// The version of this crate, reported by the node diagnostics.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
