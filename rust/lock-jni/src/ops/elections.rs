//! The election view (docs/API.md "Elections"): an election is a lock in scope `election`, served
//! by the lock ops, and the node that took the REST call renames the lock's answer into the
//! election's here. The renaming is done where the call came in, not by the partition's owner, so
//! that during a rolling upgrade a node of this build and one of an older plugin (which answer
//! the lock ops alike) serve each other's elections.

use lock_core::{FencingToken, Grant, KeyInfo, LockError};
use serde::Deserialize;

use super::{bodies, decode, to_json, BridgeError, Ctx};

/// One of: a campaign's grant (the acquire's body), or the key's answer (the key-info body) with
/// the term an observe watches.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ViewArgs {
    #[serde(default)]
    elected: Option<Grant>,
    #[serde(default)]
    state: Option<KeyInfo>,
    #[serde(default)]
    observed_term: Option<FencingToken>,
}

/// `{"elected": <grant>}` -> the leader's body; `{"state": <key info>, "observed_term"?}` -> the
/// election's state, with `changed` when observing.
pub(super) fn view(_cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    match decode::<ViewArgs>(args)? {
        ViewArgs { elected: Some(grant), state: None, observed_term: None } => {
            to_json(&bodies::elected(&grant))
        }
        ViewArgs { elected: None, state: Some(info), observed_term } => {
            to_json(&bodies::election_state(&info, observed_term))
        }
        _ => Err(LockError::invalid(
            "elected",
            "one of [elected] or [state] (with [observed_term]) is required",
        )
        .into()),
    }
}
