//! Handlers of the lock ops on one partition: acquire, release, renew, downgrade (single and
//! multi-key), cancel a waiter or a watch, force-release, watch a lock, and one key's holders
//! and waiters.

use lock_core::{LockError, Millis, Partition, Scope};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{decode, to_json, BridgeError, Ctx};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelArgs {
    waiter_id: u64,
}

/// Names one key: force-release and key info.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyArgs {
    key: String,
    #[serde(default)]
    scope: Scope,
}

/// Decodes `args` as `A`, runs `op` on the addressed partition and answers its result. The
/// partition is resolved first, so a call to a partition that is not open says so whatever
/// its payload.
fn on_partition<A, R>(
    cx: &mut Ctx<'_>,
    args: &str,
    op: impl FnOnce(&Partition, &A, Millis) -> Result<R, LockError>,
) -> Result<String, BridgeError>
where
    A: DeserializeOwned,
    R: Serialize,
{
    let now = cx.now;
    let p = cx.one()?;
    to_json(&op(p, &decode::<A>(args)?, now)?)
}

pub(super) fn acquire(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, Partition::acquire)
}

pub(super) fn acquire_many(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, Partition::acquire_many)
}

pub(super) fn release(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, Partition::release_at)
}

pub(super) fn release_many(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, Partition::release_many)
}

pub(super) fn renew(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, Partition::renew)
}

pub(super) fn downgrade(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, Partition::downgrade)
}

pub(super) fn watch(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    on_partition(cx, args, Partition::watch)
}

pub(super) fn cancel(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.one()?;
    p.cancel(decode::<CancelArgs>(args)?.waiter_id, now)?;
    Ok(r#"{"cancelled":true}"#.to_owned())
}

/// Takes a key from every holder. Nothing held is an error, so the administrator learns the
/// call did nothing.
pub(super) fn force_release(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.one()?;
    let args: KeyArgs = decode(args)?;
    let released = p.force_release(&args.key, args.scope, now)?;
    if released.is_empty() {
        return Err(LockError::NotHeld { key: args.key, owner: "anyone".into() }.into());
    }
    tracing::warn!(key = %args.key, ?released, "lock force-released by an administrator");
    to_json(&released)
}

/// The key's holders and waiters as the table holds them: time does not move on, so a read
/// never expires a lease nor grants a waiter (the plugin ticks a confirmed partition first; see
/// the `introspection` module).
pub(super) fn key_info(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.one()?;
    let args: KeyArgs = decode(args)?;
    to_json(&p.key_info_scoped(&args.key, args.scope, now)?)
}
