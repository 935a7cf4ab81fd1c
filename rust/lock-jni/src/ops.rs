//! Every bridge operation as "JSON in, JSON out", shared by the JNI and the C entry points so
//! that both speak exactly the same protocol.
//!
//! Requests are the `lock-core` request records (`deny_unknown_fields`); answers are the core's
//! answer records. Failures become a [`BridgeError`], whose [`BridgeError::details_json`] is the
//! structured form that Java turns into an Elasticsearch exception.

use lock_core::{AcquireRequest, ErrorCode, LockError, ReleaseRequest};
use serde::Serialize;
use serde_json::json;

use crate::handle::HandleError;
use crate::node::NodeCore;

/// Why a bridge call failed.
#[derive(Debug)]
pub enum BridgeError {
    /// A lock outcome or invalid input reported by the core.
    Lock(LockError),
    /// The payload itself could not be decoded (a plugin bug or a caller of the C ABI).
    BadPayload(String),
    /// The handle is 0, unknown or closed.
    Handle(HandleError),
    /// A bug: a panic was caught or an invariant broke.
    Internal(String),
}

impl BridgeError {
    /// The stable numeric code (see [`ErrorCode`]).
    pub fn code(&self) -> i32 {
        match self {
            BridgeError::Lock(e) => e.code() as i32,
            BridgeError::BadPayload(_) | BridgeError::Handle(_) => {
                ErrorCode::InvalidArgument as i32
            }
            BridgeError::Internal(_) => ErrorCode::Internal as i32,
        }
    }

    /// A one-line message for the exception.
    pub fn message(&self) -> String {
        match self {
            BridgeError::Lock(e) => e.to_string(),
            BridgeError::BadPayload(m) => format!("bad bridge payload: {m}"),
            BridgeError::Handle(e) => e.to_string(),
            BridgeError::Internal(m) => format!("lock core bug: {m}"),
        }
    }

    /// Structured details: `{"code": .., "message": .., "field"?: .., "key"?: .., "holders"?: [..]}`.
    pub fn details_json(&self) -> String {
        let mut v = json!({ "code": self.code(), "message": self.message() });
        if let BridgeError::Lock(e) = self {
            match e {
                LockError::InvalidArgument { field, reason } => {
                    v["field"] = json!(field);
                    v["reason"] = json!(reason);
                }
                LockError::Conflict { key, holders } => {
                    v["key"] = json!(key);
                    v["holders"] = json!(holders);
                }
                LockError::NotHeld { key, owner } => {
                    v["key"] = json!(key);
                    v["owner"] = json!(owner);
                }
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
        v.to_string()
    }
}

impl From<LockError> for BridgeError {
    fn from(e: LockError) -> Self {
        BridgeError::Lock(e)
    }
}

impl From<HandleError> for BridgeError {
    fn from(e: HandleError) -> Self {
        BridgeError::Handle(e)
    }
}

fn decode<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, BridgeError> {
    serde_json::from_str(json).map_err(|e| BridgeError::BadPayload(e.to_string()))
}

fn encode<T: Serialize>(value: &T) -> Result<String, BridgeError> {
    serde_json::to_string(value).map_err(|e| BridgeError::Internal(e.to_string()))
}

/// Try-lock; answers a `Grant`.
pub fn acquire(core: &NodeCore, request_json: &str) -> Result<String, BridgeError> {
    let req: AcquireRequest = decode(request_json)?;
    let grant = core.partition().try_acquire(&req, core.now())?;
    encode(&grant)
}

/// Release by the holder; answers `Released`.
pub fn release(core: &NodeCore, request_json: &str) -> Result<String, BridgeError> {
    let req: ReleaseRequest = decode(request_json)?;
    let released = core.partition().release(&req)?;
    encode(&released)
}

/// Holders of one key; answers `KeyInfo`.
pub fn key_info(core: &NodeCore, key: &str) -> Result<String, BridgeError> {
    let info = core.partition().key_info(key, core.now())?;
    encode(&info)
}

/// Node-local facts for `GET /_locks/_node/diagnostics`.
pub fn diagnostics(core: &NodeCore) -> Result<String, BridgeError> {
    encode(&json!({
        "core_version": lock_core::VERSION,
        "bridge_version": crate::BRIDGE_VERSION,
        "epoch": core.partition().epoch(),
        "held_keys": core.partition().held_keys(),
        "uptime_ms": core.now(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acquire_conflict_release_round_trip_through_json() {
        let core = NodeCore::new(2).expect("core");
        let g: serde_json::Value =
            serde_json::from_str(&acquire(&core, r#"{"key":"k","owner":"a"}"#).expect("grant"))
                .expect("json");
        assert_eq!(g["owner"], "a");
        assert_eq!(g["fencing_token"].as_u64().expect("token") >> 40, 2);

        let err = acquire(&core, r#"{"key":"k","owner":"b"}"#).expect_err("conflict");
        assert_eq!(err.code(), ErrorCode::Conflict as i32);
        let d: serde_json::Value = serde_json::from_str(&err.details_json()).expect("json");
        assert_eq!(d["holders"][0]["owner"], "a");

        let err = acquire(&core, r#"{"key":"","owner":"b"}"#).expect_err("blank key");
        let d: serde_json::Value = serde_json::from_str(&err.details_json()).expect("json");
        assert_eq!(d["field"], "key");

        assert!(matches!(acquire(&core, "{"), Err(BridgeError::BadPayload(_))));
        release(&core, r#"{"key":"k","owner":"a"}"#).expect("release");
        let info: serde_json::Value =
            serde_json::from_str(&key_info(&core, "k").expect("info")).expect("json");
        assert_eq!(info["holders"].as_array().map(Vec::len), Some(0));
    }
}
