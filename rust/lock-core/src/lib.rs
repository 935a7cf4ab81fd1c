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
//! | [`LockTable`] | the keys of one partition, their holders and fencing counter | single-threaded (`&mut self`) |
//! | [`Partition`] | a [`LockTable`] behind a mutex, plus the partition's epoch | `Send + Sync`, call from any thread |
//!
//! The bridge crate (`lock-jni`) owns [`Partition`]s and turns Java calls into calls here.

mod error;
mod partition;
mod table;
mod types;

pub use error::{ErrorCode, LockError};
pub use partition::Partition;
pub use table::LockTable;
pub use types::{
    validate_key, validate_owner, AcquireRequest, FencingToken, Grant, HolderInfo, KeyInfo, Millis,
    Mode, ReleaseRequest, Released, MAX_KEY_BYTES, MAX_OWNER_BYTES,
};

/// The version of this crate, reported by the node diagnostics.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
