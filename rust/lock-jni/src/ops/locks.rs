//! Handlers of the lock ops on one partition: acquire, release, renew, downgrade (single and
//! multi-key), cancel a waiter or a watch, force-release, watch a lock, and one key's holders
//! and waiters. Each answers its REST body ([`super::bodies`]); a call that may wait answers
//! either that body or its ticket.

use lock_core::{
    AcquireOutcome, AcquireRequest, ForceReleaseRequest, KeyInfoRequest, LockError, Millis,
    MultiAcquireRequest, MultiOutcome, Partition, Queued, WatchOutcome, STATE_FORMAT_LOCK_DELAY,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{bodies, decode, to_json, BridgeError, Ctx};

/// What an acquire answered: its body (`granted`), or its ticket (`queued`) whose grant or
/// failure comes later as an event.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum AcquireAnswer<'a> {
    Granted(bodies::GrantBody<'a>),
    Queued(Queued),
}

/// What a watch answered: its body (`answered`), or its ticket (`watching`) whose end comes
/// later as an event.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum WatchAnswer<'a> {
    Answered(bodies::WatchBody<'a>),
    Watching(Queued),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelArgs {
    waiter_id: u64,
}

/// Decodes `args` as `A` and runs `op` on the addressed partition, which answers the JSON
/// text. The partition is resolved first, so a call to a partition that is not open says so
/// whatever its payload.
fn on_partition<A: DeserializeOwned>(
    cx: &mut Ctx<'_>,
    args: &str,
    op: impl FnOnce(&Partition, &A, Millis) -> Result<String, BridgeError>,
) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.served()?;
    op(p, &decode::<A>(args)?, now)
}

/// Refuses a lock-delay while a node of the cluster cannot read one: it would be left out of
/// the state that node takes over (docs/LOCK_CORE.md, "Lock-delay").
fn check_delay_readable(peers: u32, lock_delay_ms: Option<Millis>) -> Result<(), BridgeError> {
    if lock_delay_ms.unwrap_or(0) > 0 && peers < STATE_FORMAT_LOCK_DELAY {
        return Err(LockError::invalid(
            "lock_delay_ms",
            "needs every node of the cluster to read state format 3: a node of an older plugin \
             is a member (docs/API.md, \"Lock-delay\")",
        )
        .into());
    }
    Ok(())
}

pub(super) fn acquire(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let peers = cx.core.peer_format();
    on_partition(cx, args, |p, req: &AcquireRequest, now| {
        check_delay_readable(peers, req.lock_delay_ms)?;
        to_json(&match &p.acquire(req, now)? {
            AcquireOutcome::Granted(g) => {
                AcquireAnswer::Granted(bodies::GrantBody::One(bodies::acquired(g)))
            }
            AcquireOutcome::Queued(q) => AcquireAnswer::Queued(*q),
        })
    })
}

pub(super) fn acquire_many(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let peers = cx.core.peer_format();
    on_partition(cx, args, |p, req: &MultiAcquireRequest, now| {
        check_delay_readable(peers, req.lock_delay_ms)?;
        to_json(&match &p.acquire_many(req, now)? {
            MultiOutcome::Granted(gs) => AcquireAnswer::Granted(bodies::granted(gs, true)),
            MultiOutcome::Queued(q) => AcquireAnswer::Queued(*q),
        })
    })
}

pub(super) fn release(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, |p, req, now| to_json(&bodies::released(&p.release(req, now)?)))
}

pub(super) fn release_many(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, |p, req, now| {
        to_json(&bodies::many_released(&p.release_many(req, now)?))
    })
}

pub(super) fn renew(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, |p, req, now| to_json(&bodies::renewed(&p.renew(req, now)?)))
}

pub(super) fn downgrade(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, |p, req, now| to_json(&bodies::acquired(&p.downgrade(req, now)?)))
}

pub(super) fn watch(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, |p, req, now| {
        to_json(&match &p.watch(req, now)? {
            WatchOutcome::Answered(w) => WatchAnswer::Answered(bodies::watched(w)),
            WatchOutcome::Watching(q) => WatchAnswer::Watching(*q),
        })
    })
}

pub(super) fn cancel(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.served()?;
    p.cancel(decode::<CancelArgs>(args)?.waiter_id, now)?;
    Ok(r#"{"cancelled":true}"#.to_owned())
}

/// Takes a key from every holder. Nothing held is an error, so the administrator learns the
/// call did nothing.
pub(super) fn force_release(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.served()?;
    let args: ForceReleaseRequest = decode(args)?;
    let released = p.force_release(&args, now)?;
    if released.is_empty() {
        return Err(LockError::NotHeld { key: args.key, owner: "anyone".into() }.into());
    }
    tracing::warn!(key = %args.key, ?released, reason = ?args.reason, "lock force-released by an administrator");
    to_json(&bodies::force_released(&released))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitArgs {
    key: String,
    limit: u32,
}

/// Changes a semaphore's limit; below the permits held only when every node of the cluster reads
/// a state in which holders may exceed the limit (lock_core's format 3).
pub(super) fn semaphore_limit(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let below_held = cx.core.peer_format() >= lock_core::STATE_FORMAT_OVER_LIMIT;
    on_partition(cx, args, |p, args: &LimitArgs, now| {
        let changed = p.change_semaphore_limit(&args.key, args.limit, below_held, now)?;
        tracing::info!(key = %args.key, ?changed, "semaphore limit changed");
        to_json(&bodies::limit_changed(&args.key, changed))
    })
}

/// The key's holders and waiters as the table holds them: time does not move on, so a read
/// never expires a lease nor grants a waiter (the plugin ticks a confirmed partition first; see
/// the `introspection` module).
pub(super) fn key_info(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.served()?;
    let info = p.key_info(&decode::<KeyInfoRequest>(args)?, now)?;
    to_json(&bodies::key_info(&info, cx.core.node_name()))
}
