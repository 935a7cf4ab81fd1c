//! Handlers of partition and node administration: let time pass, open and close a partition
//! as the cluster moves it (docs/ARCHITECTURE.md, "Partitions, owners, epochs"), apply new
//! settings.

use lock_core::{Config, PartitionSnapshot};
use serde::Deserialize;
use serde_json::json;

use super::state_format::decode_state;
use super::{decode, partition_id, to_json, to_value, BridgeError, Ctx, ALL_PARTITIONS};
use crate::node::OpenSpec;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenArgs {
    epoch: u64,
    #[serde(default)]
    grace_ms: u64,
    #[serde(default)]
    snapshot: Option<PartitionSnapshot>,
    /// Start from this node's standby: its replica became the primary.
    #[serde(default)]
    from_standby: bool,
    /// Record changes for replicas (`locks.durability: replicated`).
    #[serde(default)]
    replicated: bool,
    /// Confirmed by the cluster state the master just published (see `OpenSpec::confirmed`).
    #[serde(default = "confirmed_by_default")]
    confirmed: bool,
}

fn confirmed_by_default() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CloseArgs {
    #[serde(default)]
    export: bool,
    /// The format the exported state is written in (the new owner's; the current by default).
    #[serde(default = "lock_core::current_state_format")]
    format: u32,
}

/// Processes every deadline up to now on the addressed partition, or on all of them with
/// [`ALL_PARTITIONS`]; the expiries' events ride in the envelope. A partition whose lease is not
/// current does not move on (an expiry hands a lock to a waiter: docs/ARCHITECTURE.md "Silent
/// owners"); it is named in `unserved`, for the plugin to tick it again later.
pub(super) fn tick(cx: &mut Ctx<'_>, _args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let now_us = cx.core.now_us();
    let mut unserved = Vec::new();
    let ids: Vec<u32> = if cx.partition == ALL_PARTITIONS {
        cx.core.partitions().iter().map(|(id, _)| *id).collect()
    } else {
        vec![partition_id(cx.partition)?]
    };
    for id in ids {
        if !cx.core.verdict(id, now_us).serves() {
            unserved.push(id);
            continue;
        }
        cx.partition = i32::try_from(id).unwrap_or(ALL_PARTITIONS);
        cx.one()?.advance(now); // a panic in its advance fails this partition
    }
    cx.current = None;
    Ok(json!({ "now_ms": now, "unserved": unserved }).to_string())
}

pub(super) fn open(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let core = cx.core;
    let id = partition_id(cx.partition)?;
    // A hand-over snapshot is checked by its format (docs/ARCHITECTURE.md "Formats and versions").
    let args: OpenArgs =
        decode_state(args, |a: &OpenArgs| a.snapshot.iter().map(|s| s.format).collect())?;
    let spec = OpenSpec {
        epoch: args.epoch,
        grace_ms: args.grace_ms,
        snapshot: args.snapshot.as_ref(),
        from_standby: args.from_standby,
        replicated: args.replicated,
        confirmed: args.confirmed,
    };
    core.open_partition(id, spec)?;
    let epoch = cx.one()?.epoch();
    Ok(json!({ "id": id, "epoch": epoch, "grace": core.in_grace(id) }).to_string())
}

/// Closes the partition; with `export` its state comes back for the next owner.
pub(super) fn close(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let args: CloseArgs = decode(args)?;
    lock_core::check_write_format(args.format)?;
    let mut snapshot = cx.core.close_partition(partition_id(cx.partition)?, args.export);
    if let Some(s) = snapshot.as_mut() {
        s.set_format(args.format);
    }
    Ok(json!({ "snapshot": to_value(&snapshot)? }).to_string())
}

/// The state format every node of the cluster reads.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FormatArgs {
    format: u32,
}

pub(super) fn peers_read(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let format = decode::<FormatArgs>(args)?.format;
    cx.core.set_peer_format(format)?;
    Ok(json!({ "format": format }).to_string())
}

pub(super) fn configure(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    cx.core.set_config(decode::<Config>(args)?)?;
    to_json(&cx.core.config())
}
