//! Handlers of the session ops: create, keep alive, end. A session lives in the partition it
//! was created in; the plugin names it globally (partition and id) outside the core.

use serde::Deserialize;

use super::{decode, to_json, BridgeError, Ctx};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    owner: String,
    #[serde(default)]
    ttl_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionArgs {
    session: String,
}

pub(super) fn create(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.one()?;
    let args: CreateArgs = decode(args)?;
    to_json(&p.create_session(&args.owner, args.ttl_ms, now)?)
}

pub(super) fn keepalive(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.one()?;
    to_json(&p.keepalive(&decode::<SessionArgs>(args)?.session, now)?)
}

/// Ends the session; its waiters' `cancelled` events (with their `error`) ride in this call's
/// envelope.
pub(super) fn end(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.one()?;
    to_json(&p.end_session(&decode::<SessionArgs>(args)?.session, now)?)
}
