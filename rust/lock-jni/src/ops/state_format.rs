//! The format of the state documents the bridge reads and writes (docs/ARCHITECTURE.md,
//! "Formats and versions"; the numbers are `lock_core::STATE_FORMAT` and
//! `lock_core::OLDEST_STATE_FORMAT`).
//!
//! Reading: every state in a document is checked by its format, and a document that does not
//! decode is searched for a newer format first, so that what a newer plugin wrote is refused as
//! "newer format [n], this build's [m]" and not as a member this build does not know. Writing:
//! the plugin names the format its peers read (`{"format": n}`), format 1 while a node of the
//! plugin before formats is in the cluster.

use lock_core::{check_state_format, check_write_format, STATE_FORMAT};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use super::BridgeError;

/// The format a state document is to be written in: `{"format": n}`, the current one by default.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WriteFormat {
    #[serde(default = "current")]
    format: u32,
}

fn current() -> u32 {
    STATE_FORMAT
}

impl WriteFormat {
    /// The format asked for, once checked to be one this build writes.
    pub(super) fn checked(&self) -> Result<u32, BridgeError> {
        check_write_format(self.format)?;
        Ok(self.format)
    }
}

/// Decodes a document holding partition state and checks the format of each state in it
/// (`formats` lists them).
///
/// # Errors
///
/// The format's error (field `format`, both numbers) for a newer format, also when the document
/// does not decode because a newer writer added a member; [`BridgeError::BadPayload`] for
/// anything else that does not decode.
pub(super) fn decode_state<T: DeserializeOwned>(
    json: &str,
    formats: impl FnOnce(&T) -> Vec<u32>,
) -> Result<T, BridgeError> {
    match serde_json::from_str::<T>(json) {
        Ok(value) => {
            for format in formats(&value) {
                check_state_format(format)?;
            }
            Ok(value)
        }
        Err(e) => match newest_format(json) {
            Some(format) if format > u64::from(STATE_FORMAT) => {
                let format = u32::try_from(format).unwrap_or(u32::MAX);
                Err(check_state_format(format).expect_err("a newer format is refused").into())
            }
            _ => Err(BridgeError::BadPayload(e.to_string())),
        },
    }
}

/// The highest `format` member of the objects in `json` (arrays are not searched: the formats
/// live in the objects that hold the lists), or `None`. Only on the error path.
fn newest_format(json: &str) -> Option<u64> {
    fn walk(value: &Value, newest: &mut Option<u64>) {
        if let Value::Object(members) = value {
            if let Some(f) = members.get("format").and_then(Value::as_u64) {
                *newest = Some(newest.map_or(f, |n| n.max(f)));
            }
            members.values().for_each(|v| walk(v, newest));
        }
    }
    let value: Value = serde_json::from_str(json).ok()?;
    let mut newest = None;
    walk(&value, &mut newest);
    newest
}

#[cfg(test)]
mod tests {
    use lock_core::{PartitionDelta, OLDEST_STATE_FORMAT};

    use super::*;

    fn delta_formats(d: &PartitionDelta) -> Vec<u32> {
        vec![d.format]
    }

    const V1_DELTA: &str = r#"{"seq":3,"epoch":1,"counter":7,"locks":[],"released":[],"sessions":[],"ended_sessions":[]}"#;

    #[test]
    fn a_document_without_a_format_is_format_1() {
        let d: PartitionDelta = decode_state(V1_DELTA, delta_formats).expect("format 1 reads");
        assert_eq!(d.format, OLDEST_STATE_FORMAT);
        assert_eq!((d.seq, d.epoch, d.counter), (3, 1, 7));
    }

    #[test]
    fn a_newer_format_is_refused_naming_both_numbers_even_with_members_unknown_here() {
        let newer = STATE_FORMAT + 1;
        for json in [
            format!(
                r#"{{"format":{newer},"seq":3,"epoch":1,"counter":7,"locks":[],"released":[],"sessions":[],"ended_sessions":[]}}"#
            ),
            format!(
                r#"{{"format":{newer},"seq":3,"epoch":1,"counter":7,"locks":[],"released":[],"sessions":[],"ended_sessions":[],"tombstones":[]}}"#
            ),
        ] {
            let e = decode_state(&json, delta_formats).expect_err("newer");
            let message = e.message();
            assert!(message.contains(&format!("format [{newer}]")), "{message}");
            assert!(message.contains(&format!("[{STATE_FORMAT}]")), "{message}");
        }
    }

    #[test]
    fn an_unknown_member_in_a_known_format_is_refused() {
        let json = r#"{"format":2,"seq":3,"epoch":1,"counter":7,"locks":[],"released":[],"sessions":[],"ended_sessions":[],"extra":1}"#;
        let e = decode_state(json, delta_formats).expect_err("unknown member");
        assert!(
            matches!(e, BridgeError::BadPayload(ref m) if m.contains("extra")),
            "{}",
            e.message()
        );
    }

    #[test]
    fn only_formats_this_build_writes_are_written() {
        let asked: WriteFormat = serde_json::from_str("{}").expect("default");
        assert_eq!(asked.checked().expect("current"), STATE_FORMAT);
        let old: WriteFormat = serde_json::from_str(r#"{"format":1}"#).expect("format 1");
        assert_eq!(old.checked().expect("previous"), 1);
        let newer: WriteFormat =
            serde_json::from_str(&format!(r#"{{"format":{}}}"#, STATE_FORMAT + 1)).expect("parses");
        assert!(newer.checked().is_err());
    }
}
