//! A fenced change to a protected document (`lock_core::fence`, docs/API.md "Fenced changes"),
//! for the plugin's update script: the document as the primary holds it and the script's params
//! in, what to write out. Touches no partition: any node that holds a primary of the user's index
//! runs it.

use lock_core::fence::{apply, FenceOutcome, FenceRequest, Object};
use lock_core::LockError;
use serde::Deserialize;
use serde_json::{json, Value};

use super::fields::Field;
use super::{decode, to_json, BridgeError, Ctx};

/// `{"source": <the document's source, null when missing>, "params": <the script's params>}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FenceArgs {
    source: Option<Object>,
    params: Value,
}

/// -> `{"write": <source>}`, `{"unchanged": {"fence"}}` or `{"stale": {"fence"}}`; a bad param or
/// a change that does not fit the document is an invalid argument naming the field.
pub(super) fn change(_cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let FenceArgs { source, params } = decode(args)?;
    let Value::Object(params) = params else {
        return Err(
            LockError::invalid("params", "a fenced change's params must be an object").into()
        );
    };
    let request = FenceRequest::from_params(&params)?;
    let answer = match apply(source.as_ref(), &request)? {
        FenceOutcome::Write(source) => json!({ Field::Write.name(): source }),
        FenceOutcome::Unchanged { fence } => {
            json!({ Field::Unchanged.name(): { Field::Fence.name(): fence } })
        }
        FenceOutcome::Stale { fence } => {
            json!({ Field::Stale.name(): { Field::Fence.name(): fence } })
        }
    };
    to_json(&answer)
}
