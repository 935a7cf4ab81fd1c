//! Handlers of the session ops: create, keep alive, end. A session lives in the partition it
//! was created in; the plugin names it globally (partition and id) outside the core.
//!
//! A session's id is its credential, so it is 128 bits from the OS's secure random source
//! (`getrandom`), drawn here and handed to the core: the core itself never touches OS
//! randomness and replays deterministically (`lock_core::SessionId`). Keep-alive and end name
//! the session's owner, as release and renew name the lock's.

use lock_core::SessionId;
use serde::Deserialize;

use super::{bodies, decode, to_json, BridgeError, Ctx};

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
    owner: String,
}

/// 128 bits from the OS for a new session's id.
fn random_session_id() -> Result<SessionId, BridgeError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| BridgeError::Internal(format!("no OS randomness for a session id: {e}")))?;
    Ok(SessionId::from_bytes(bytes))
}

pub(super) fn create(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let args: CreateArgs = decode(args)?;
    let id = random_session_id()?;
    let p = cx.served()?;
    to_json(&p.create_session(&args.owner, args.ttl_ms, id, now)?)
}

pub(super) fn keepalive(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.served()?;
    let args: SessionArgs = decode(args)?;
    to_json(&p.keepalive(&args.session, &args.owner, now)?)
}

/// Ends the session; its waiters' `cancelled` events (with their `error`) ride in this call's
/// envelope.
pub(super) fn end(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let now = cx.now;
    let p = cx.served()?;
    let args: SessionArgs = decode(args)?;
    to_json(&bodies::ended(&p.end_session(&args.session, &args.owner, now)?))
}
