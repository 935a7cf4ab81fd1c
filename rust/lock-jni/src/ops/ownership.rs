//! The ownership protocol across the bridge (docs/ARCHITECTURE.md "Silent owners"): the plugin
//! hands this node's part of `lock_core::ownership` its events — a batch or heartbeat sent and
//! acknowledged, a question to the master sent and answered, a copy's answer, a promotion, the
//! master's hearing and looking — and gets its decisions back. Times are the core's clock, read
//! here: the plugin only carries the send tickets (`sent_us`, `asked_us`) it was given.
//!
//! The protocol's bounds are written out below for the C header (`ESLM_BOUND_*`, cbindgen emits
//! only literals) and held to `lock_core::ownership::bounds` by the assertion after them; the
//! plugin's `NativeBounds` repeats them and `BridgeVocabularyTest` holds it to the header.

use lock_core::ownership::{
    bounds, HandOver, LeaseSource, MasterAnswer, MasterView, SeenPartition,
};
use serde::Deserialize;
use serde_json::json;

use super::{decode, partition_id, BridgeError, Ctx, ALL_PARTITIONS};

/// `lock_core::ownership::bounds::COPY_LEASE_MS`.
pub const ESLM_BOUND_COPY_LEASE_MS: u64 = 800;
/// `lock_core::ownership::bounds::HEARTBEAT_INTERVAL_MS`.
pub const ESLM_BOUND_HEARTBEAT_INTERVAL_MS: u64 = 200;
/// `lock_core::ownership::bounds::OWNERSHIP_WINDOW_MS`.
pub const ESLM_BOUND_OWNERSHIP_WINDOW_MS: u64 = 3_000;
/// `lock_core::ownership::bounds::OWNER_CHECK_INTERVAL_MS`.
pub const ESLM_BOUND_OWNER_CHECK_INTERVAL_MS: u64 = 500;
/// `lock_core::ownership::bounds::CLOCK_RATE_ERROR_PPM`.
pub const ESLM_BOUND_CLOCK_RATE_ERROR_PPM: u64 = 10_000;
/// `lock_core::ownership::bounds::SILENT_LOOK_INTERVAL_MS`.
pub const ESLM_BOUND_SILENT_LOOK_INTERVAL_MS: u64 = 250;
/// `lock_core::ownership::bounds::OWN_PAUSE_MS`.
pub const ESLM_BOUND_OWN_PAUSE_MS: u64 = 1_000;
/// `lock_core::ownership::bounds::ASK_AGAIN_MS`.
pub const ESLM_BOUND_ASK_AGAIN_MS: u64 = 5_000;
/// `lock_core::ownership::bounds::SILENT_OWNER_FAILOVER_DEFAULT_MS`.
pub const ESLM_BOUND_SILENT_OWNER_FAILOVER_DEFAULT_MS: u64 = 3_500;
/// `lock_core::ownership::bounds::SILENT_OWNER_FAILOVER_MIN_MS`.
pub const ESLM_BOUND_SILENT_OWNER_FAILOVER_MIN_MS: u64 = 3_100;
/// `lock_core::ownership::bounds::PROMOTION_WAIT_US`, rounded up to the millisecond.
pub const ESLM_BOUND_PROMOTION_WAIT_MS: u64 = 817;
/// `lock_core::ownership::bounds::SYNCED_COPY_WAIT_MS`.
pub const ESLM_BOUND_SYNCED_COPY_WAIT_MS: u64 = 1_200;
/// `lock_core::ownership::bounds::SYNCED_COPY_MS_PER_MB`.
pub const ESLM_BOUND_SYNCED_COPY_MS_PER_MB: u64 = 100;
/// `lock_core::ownership::bounds::CATCHING_UP_COPY_WAIT_MS`.
pub const ESLM_BOUND_CATCHING_UP_COPY_WAIT_MS: u64 = 5_000;
/// `lock_core::ownership::bounds::CLOSE_REQUEST_TIMEOUT_MS`.
pub const ESLM_BOUND_CLOSE_REQUEST_TIMEOUT_MS: u64 = 500;

const _: () = assert!(
    ESLM_BOUND_COPY_LEASE_MS == bounds::COPY_LEASE_MS
        && ESLM_BOUND_HEARTBEAT_INTERVAL_MS == bounds::HEARTBEAT_INTERVAL_MS
        && ESLM_BOUND_OWNERSHIP_WINDOW_MS == bounds::OWNERSHIP_WINDOW_MS
        && ESLM_BOUND_OWNER_CHECK_INTERVAL_MS == bounds::OWNER_CHECK_INTERVAL_MS
        && ESLM_BOUND_CLOCK_RATE_ERROR_PPM == bounds::CLOCK_RATE_ERROR_PPM
        && ESLM_BOUND_SILENT_LOOK_INTERVAL_MS == bounds::SILENT_LOOK_INTERVAL_MS
        && ESLM_BOUND_OWN_PAUSE_MS == bounds::OWN_PAUSE_MS
        && ESLM_BOUND_ASK_AGAIN_MS == bounds::ASK_AGAIN_MS
        && ESLM_BOUND_SILENT_OWNER_FAILOVER_DEFAULT_MS == bounds::SILENT_OWNER_FAILOVER_DEFAULT_MS
        && ESLM_BOUND_SILENT_OWNER_FAILOVER_MIN_MS == bounds::SILENT_OWNER_FAILOVER_MIN_MS
        && ESLM_BOUND_PROMOTION_WAIT_MS == bounds::PROMOTION_WAIT_US.div_ceil(1_000)
        && ESLM_BOUND_SYNCED_COPY_WAIT_MS == bounds::SYNCED_COPY_WAIT_MS
        && ESLM_BOUND_SYNCED_COPY_MS_PER_MB == bounds::SYNCED_COPY_MS_PER_MB
        && ESLM_BOUND_CATCHING_UP_COPY_WAIT_MS == bounds::CATCHING_UP_COPY_WAIT_MS
        && ESLM_BOUND_CLOSE_REQUEST_TIMEOUT_MS == bounds::CLOSE_REQUEST_TIMEOUT_MS,
    "the header's bounds are lock_core's"
);

/// One event of the protocol, as the plugin sends it: `{"event": "<name>", ...}`.
#[derive(Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
enum Event {
    /// What renews owners' leases from now on (each cluster state says): `{"copy_leases"}`.
    Source { copy_leases: bool },
    /// A heartbeat or a question leaves now: `{}` -> `{"sent_us"}`, its send ticket.
    Sending,
    /// A batch or heartbeat of the partition in `epoch`, sent at `sent_us`, reached every
    /// in-sync copy: `{"epoch", "sent_us"}` -> `{"serves"}`.
    Renewed { epoch: u64, sent_us: u64 },
    /// The master answered the question about the partition in `epoch` sent at `asked_us`:
    /// `{"epoch", "asked_us", "yours"}` -> `{"answer": "confirmed" | "give_up" | "stale"}`.
    MasterAnswered { epoch: u64, asked_us: u64, yours: bool },
    /// This node's copy of the partition answered its owner: `{}` -> `{}`.
    Answered,
    /// This node's copy was promoted: `{"old_owner_closed"}` -> `{"wait_ms"}` before it serves.
    Promoted { old_owner_closed: bool },
    /// A node that owns the partition in `epoch` asks this one for its state: `{"epoch"}` ->
    /// `{"answer": "give"}`, or `{"answer": "refuse", "epoch"}` with the newer epoch served here.
    HandOverAsked { epoch: u64 },
    /// On the master, answering an owner: `{"epoch", "owner"}` -> `{"yours"}`.
    Heard { epoch: u64, owner: String },
    /// On the master, any node's question, whatever about (node-wide): `{"owner"}`, the node
    /// that asked -> `{}`.
    NodeAsked { owner: String },
    /// On every node, the master's look (node-wide): the view -> `{"condemned": [partitions]}`.
    Look(LookArgs),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LookArgs {
    master: bool,
    local: String,
    copy_leases: bool,
    enabled: bool,
    bound_ms: u64,
    partitions: Vec<SeenArgs>,
    nodes: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeenArgs {
    partition: u32,
    #[serde(default)]
    owner: Option<String>,
    epoch: u64,
    promotable: bool,
}

/// Hands the protocol one event and answers its decision.
pub(super) fn event(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let core = cx.core;
    let now = core.now_us();
    let event: Event = decode(args)?;
    let id = || partition_id(cx.partition);
    let answer = match event {
        Event::Source { copy_leases } => {
            let source = if copy_leases { LeaseSource::Copies } else { LeaseSource::Master };
            core.ownership(|o| o.set_source(source));
            json!({})
        }
        Event::Sending => json!({ "sent_us": now }),
        Event::Renewed { epoch, sent_us } => {
            let id = id()?;
            core.ownership(|o| o.renewed(id, epoch, sent_us, now));
            json!({ "serves": core.verdict(id, now).serves() })
        }
        Event::MasterAnswered { epoch, asked_us, yours } => {
            let id = id()?;
            let answer = core.ownership(|o| o.master_answered(id, epoch, asked_us, yours));
            json!({ "answer": master_answer(answer) })
        }
        Event::Answered => {
            let id = id()?;
            core.ownership(|o| o.answered(id, now));
            json!({})
        }
        Event::Promoted { old_owner_closed } => {
            let id = id()?;
            let wait_us = core.ownership(|o| o.promotion_wait(id, now, old_owner_closed));
            json!({ "wait_ms": wait_us.div_ceil(1_000) })
        }
        Event::HandOverAsked { epoch } => {
            let id = id()?;
            match core.ownership(|o| o.hand_over_asked(id, epoch)) {
                HandOver::Give => json!({ "answer": "give" }),
                HandOver::Refuse { epoch } => json!({ "answer": "refuse", "epoch": epoch }),
            }
        }
        Event::Heard { epoch, owner } => {
            let id = id()?;
            json!({ "yours": core.ownership(|o| o.heard(id, epoch, &owner, now)) })
        }
        Event::NodeAsked { owner } => {
            node_wide(cx, "a node's question")?;
            core.ownership(|o| o.node_asked(&owner, now));
            json!({})
        }
        Event::Look(args) => look(cx, args, now)?,
    };
    Ok(answer.to_string())
}

fn master_answer(answer: MasterAnswer) -> &'static str {
    match answer {
        MasterAnswer::Confirmed => "confirmed",
        MasterAnswer::GiveUp => "give_up",
        MasterAnswer::Stale => "stale",
    }
}

/// The master's look at its cluster state: the partitions whose primary it fails as silent.
fn look(cx: &Ctx<'_>, args: LookArgs, now: u64) -> Result<serde_json::Value, BridgeError> {
    node_wide(cx, "a look")?;
    let partitions: Vec<SeenPartition> = args
        .partitions
        .into_iter()
        .map(|s| SeenPartition {
            partition: s.partition,
            owner: s.owner,
            epoch: s.epoch,
            promotable: s.promotable,
        })
        .collect();
    let view = MasterView {
        master: args.master,
        local: &args.local,
        copy_leases: args.copy_leases,
        enabled: args.enabled,
        bound_us: args.bound_ms.saturating_mul(1_000),
        partitions: &partitions,
        nodes: &args.nodes,
    };
    let condemned: Vec<u32> =
        cx.core.ownership(|o| o.look(now, &view)).iter().map(|s| s.partition).collect();
    Ok(json!({ "condemned": condemned }))
}

/// Refuses an event about one partition that is node-wide (`what`).
fn node_wide(cx: &Ctx<'_>, what: &str) -> Result<(), BridgeError> {
    if cx.partition == ALL_PARTITIONS {
        return Ok(());
    }
    Err(lock_core::LockError::invalid("partition", format!("{what} is node-wide: pass -1")).into())
}
