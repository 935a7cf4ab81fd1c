//! Handlers of replication (docs/ARCHITECTURE.md, "Replication"): the primary takes what its
//! table changed (or its whole held state for a copy that has none) and the plugin sends it
//! through Elasticsearch's replication to every in-sync copy of the partition's shard; each copy
//! applies it to its standby table. Waiters are not replicated.

use lock_core::{FullState, PartitionDelta, Standby};
use serde::Deserialize;
use serde_json::json;

use super::state_format::{decode_state, WriteFormat};
use super::{decode, partition_id, to_json, to_value, BridgeError, Ctx};

/// A batch, as the state log holds it and `internal:locks/replicate` carries it. Its format is
/// its state's (docs/ARCHITECTURE.md, "Formats and versions").
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
enum Batch {
    #[serde(rename = "full")]
    Full(FullState),
    #[serde(rename = "delta")]
    Delta(PartitionDelta),
    /// The primary's live state, fetched by a copy that could not apply a batch: installed
    /// only when newer than the standby.
    #[serde(rename = "catch_up")]
    CatchUp(FullState),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportArgs {
    #[serde(default)]
    drop: bool,
}

impl Batch {
    /// The format of the state it carries.
    fn formats(&self) -> Vec<u32> {
        match self {
            Batch::Full(full) | Batch::CatchUp(full) => vec![full.snapshot.format],
            Batch::Delta(delta) => vec![delta.format],
        }
    }
}

/// What `take_batch` is asked: the format to write (the current one by default), and whether
/// the batch is the whole held state rather than the changes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TakeArgs {
    #[serde(default = "lock_core::current_state_format")]
    format: u32,
    #[serde(default)]
    full: bool,
}

/// The next batch of the primary, ready to ship: with `full`, its whole held state (for copies
/// without a standby, or after a new epoch); else its changes since the previous take, after
/// letting time pass to now. Answered as `{"batch": "<text>", "empty": bool}`: the batch's JSON
/// text as `standby_apply` and the state log take it (`{"full": ..}` or `{"delta": ..}`), which
/// the plugin ships without reading, and whether it changes nothing (a delta of a tick or a
/// cancel that moved nothing; the table kept its seq), and `sent_us`, the ownership protocol's
/// send ticket (`ops/ownership.rs`), to hand back with the batch's acknowledgement.
pub(super) fn take_batch(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let args = decode::<TakeArgs>(args)?;
    let format = args.format;
    lock_core::check_write_format(format)?;
    let (batch, empty) = if args.full {
        (format!("{{\"full\":{}}}", full_state(cx, format)?), false)
    } else {
        let now = cx.now;
        let mut delta = cx.one()?.take_changes(now)?;
        delta.set_format(format);
        (format!("{{\"delta\":{}}}", to_json(&delta)?), delta.is_empty())
    };
    // The send ticket of this batch: the lease its acknowledgement renews runs from here.
    Ok(json!({ "batch": batch, "empty": empty, "sent_us": cx.core.now_us() }).to_string())
}

/// The primary's whole held state, for copies without a standby (or after a new epoch), in
/// the format asked for.
pub(super) fn export_full(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let format = decode::<WriteFormat>(args)?.checked()?;
    full_state(cx, format)
}

/// The partition's whole held state as JSON, in `format` (already checked).
fn full_state(cx: &mut Ctx<'_>, format: u32) -> Result<String, BridgeError> {
    let mut full = cx.one()?.export_full();
    full.snapshot.set_format(format);
    to_json(&full)
}

/// Applies one batch (`{"full": ..}` or `{"delta": ..}`) to this node's standby of the
/// partition, or installs a state the copy fetched to catch up (`{"catch_up": ..}`). A delta
/// reaching a copy that has no standby yet is not applied (`"applied": false`): the copy must
/// catch up before it answers the batch.
pub(super) fn standby_apply(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let id = partition_id(cx.partition)?;
    let standby = match decode_state(args, Batch::formats)? {
        Batch::Full(full) => Some(cx.core.standby_full(id, &full)),
        Batch::Delta(delta) => cx.core.standby_delta(id, &delta)?,
        Batch::CatchUp(full) => Some(cx.core.standby_catch_up(id, &full)),
    };
    Ok(standby_info(standby.as_ref()).to_string())
}

/// This node's standby of the partition as a full state (`{"full": null}` without one);
/// `{"drop": true}` forgets it (the copy was closed or deleted).
pub(super) fn standby_export(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let args: ExportArgs = decode(args)?;
    let full = cx.core.standby_export(partition_id(cx.partition)?, args.drop);
    Ok(json!({ "full": to_value(&full)? }).to_string())
}

fn standby_info(standby: Option<&Standby>) -> serde_json::Value {
    match standby {
        None => json!({ "applied": false }),
        Some(s) => json!({
            "applied": true,
            "seq": s.seq(),
            "epoch": s.epoch(),
            "counter": s.counter(),
            "held": s.held_locks(),
            "sessions": s.sessions(),
        }),
    }
}
