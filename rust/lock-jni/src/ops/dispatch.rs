//! The dispatch table: op number -> handler, looked up by index.
//!
//! The table is ordered by op number, checked at compile time, so the lookup is one bounds
//! check and [`Op::from_code`] needs no list of its own. A test compares it with the
//! `ESLM_OP_*` constants cbindgen writes from [`Op`] into the header, so an op added to the
//! enum and forgotten here fails the build's tests.

use lock_core::LockError;

use super::op::Op;
use super::{
    elections, fence, groups, history, introspection, locks, ownership, partitions, replication,
    requests, sessions, telemetry, BridgeError, Ctx,
};

/// Runs one op: takes the call's context and its JSON arguments, answers the op's result as
/// JSON text (the envelope is written around it by [`super::envelope`]).
pub(super) type Handler = fn(&mut Ctx<'_>, &str) -> Result<String, BridgeError>;

/// Every op with its handler, in op-number order: entry `i` is op `i + 1`.
const TABLE: [(Op, Handler); 37] = [
    (Op::Acquire, locks::acquire),
    (Op::Release, locks::release),
    (Op::Renew, locks::renew),
    (Op::AcquireMany, locks::acquire_many),
    (Op::ReleaseMany, locks::release_many),
    (Op::Cancel, locks::cancel),
    (Op::SessionCreate, sessions::create),
    (Op::SessionKeepalive, sessions::keepalive),
    (Op::SessionEnd, sessions::end),
    (Op::KeyInfo, locks::key_info),
    (Op::List, introspection::list),
    (Op::Stats, introspection::stats),
    (Op::Diagnostics, introspection::diagnostics),
    (Op::ForceRelease, locks::force_release),
    (Op::Tick, partitions::tick),
    (Op::Configure, partitions::configure),
    (Op::Downgrade, locks::downgrade),
    (Op::OpenPartition, partitions::open),
    (Op::ClosePartition, partitions::close),
    (Op::TakeBatch, replication::take_batch),
    (Op::ExportFull, replication::export_full),
    (Op::StandbyApply, replication::standby_apply),
    (Op::StandbyExport, replication::standby_export),
    (Op::Watch, locks::watch),
    (Op::ElectionView, elections::view),
    (Op::SemaphoreLimit, locks::semaphore_limit),
    (Op::PeersRead, partitions::peers_read),
    (Op::AuditDrain, history::drain),
    (Op::GroupCreate, groups::create),
    (Op::GroupDelete, groups::delete),
    (Op::GroupList, groups::list),
    (Op::GroupInfo, groups::info),
    (Op::GroupUpdate, groups::update),
    (Op::ReadRequest, requests::read),
    (Op::Ownership, ownership::event),
    (Op::Fence, fence::change),
    (Op::Telemetry, telemetry::figures),
];

/// The number of the first op; entry `i` of [`TABLE`] has number `FIRST_OP + i`.
const FIRST_OP: i32 = 1;

// The table is in number order with no gap, so `entry` can index it.
const _: () = {
    let mut i = 0;
    while i < TABLE.len() {
        assert!(TABLE[i].0 as i32 == FIRST_OP + i as i32, "TABLE must be in op-number order");
        i += 1;
    }
};

/// The table entry for `code`, or an invalid-argument error naming `op`.
pub(super) fn entry(code: i32) -> Result<(Op, Handler), BridgeError> {
    code.checked_sub(FIRST_OP)
        .and_then(|i| usize::try_from(i).ok())
        .and_then(|i| TABLE.get(i).copied())
        .ok_or_else(|| LockError::invalid("op", format!("unknown bridge op [{code}]")).into())
}

impl Op {
    /// The op for a code, or an invalid-argument error naming `op`.
    pub fn from_code(code: i32) -> Result<Op, BridgeError> {
        entry(code).map(|(op, _)| op)
    }

    /// Every op, in number order.
    pub fn all() -> impl Iterator<Item = Op> {
        TABLE.iter().map(|(op, _)| *op)
    }
}
