//! Why a bridge call failed, and the structured details Java turns into an Elasticsearch
//! exception — for a failed call and, through [`event_error`], for a waiter's final event.

use lock_core::{ErrorCode, Event, LockError};
use serde_json::{json, Value};

use crate::handle::HandleError;

/// Why a bridge call failed.
#[derive(Debug)]
pub enum BridgeError {
    /// A lock outcome or invalid input reported by the core.
    Lock(LockError),
    /// The payload itself could not be decoded (a plugin bug or a caller of the C ABI).
    BadPayload(String),
    /// The handle is 0, unknown or closed.
    Handle(HandleError),
    /// A bug: an invariant broke (an answer could not be written).
    Internal(String),
    /// A panic was caught: in `partition` (then marked failed in the node, see
    /// [`crate::node::NodeCore::fail_partition`]) when the call was working on one, and in
    /// `epoch` as the partition's tokens carried it. Also what every later call on that partition
    /// answers until it is reopened.
    CorePanic { partition: Option<u32>, epoch: Option<u64>, message: String },
    /// This node owns the partition but its lease is not current (`lock_core::ownership`): it
    /// serves nothing there now; retry after `retry_after_ms` (0: on the next cluster state).
    NoLease { message: String, retry_after_ms: u64 },
}

impl BridgeError {
    /// The status of the failed call: `LM_STATUS_*` in the C header.
    pub fn status(&self) -> ErrorCode {
        match self {
            BridgeError::Lock(e) => e.code(),
            BridgeError::BadPayload(_) | BridgeError::Handle(_) => ErrorCode::InvalidArgument,
            BridgeError::Internal(_) => ErrorCode::Internal,
            BridgeError::CorePanic { .. } => ErrorCode::CorePanic,
            BridgeError::NoLease { .. } => ErrorCode::PartitionUnavailable,
        }
    }

    /// A panic caught outside any partition (see [`BridgeError::CorePanic`]).
    pub fn panicked(payload: &(dyn std::any::Any + Send)) -> Self {
        BridgeError::CorePanic {
            partition: None,
            epoch: None,
            message: crate::panic_message(payload),
        }
    }

    /// The stable numeric code (see [`ErrorCode`]).
    pub fn code(&self) -> i32 {
        self.status() as i32
    }

    /// A one-line message for the exception.
    pub fn message(&self) -> String {
        match self {
            BridgeError::Lock(e) => e.to_string(),
            BridgeError::BadPayload(m) => format!("bad bridge payload: {m}"),
            BridgeError::Handle(e) => e.to_string(),
            BridgeError::Internal(m) => format!("lock core bug: {m}"),
            BridgeError::CorePanic { partition: Some(p), message, .. } => format!(
                "the lock core panicked in lock partition [{p}] ({message}); the partition is \
                 refused until it is reopened from its replicated state"
            ),
            BridgeError::CorePanic { partition: None, message, .. } => {
                format!("the lock core panicked ({message})")
            }
            BridgeError::NoLease { message, .. } => message.clone(),
        }
    }

    /// Structured details: `{"code", "message", ...}` plus the outcome's own fields (`field`,
    /// `key`, `holders`, `owner`, `cycle`, `session`, `limit`, `retry_after_ms`, ...; a core
    /// panic: `partition` and `epoch`, null when the call worked on no partition).
    pub fn details(&self) -> Value {
        let mut v = json!({ "code": self.code(), "message": self.message() });
        let extra = match self {
            BridgeError::Lock(e) => lock_details(e),
            BridgeError::CorePanic { partition, epoch, .. } => {
                json!({ "partition": partition, "epoch": epoch })
            }
            BridgeError::NoLease { retry_after_ms, .. } => {
                json!({ "retry_after_ms": retry_after_ms })
            }
            _ => Value::Null,
        };
        if let (Value::Object(target), Value::Object(source)) = (&mut v, extra) {
            target.extend(source);
        }
        v
    }

    /// [`BridgeError::details`] as JSON text.
    pub fn details_json(&self) -> String {
        self.details().to_string()
    }
}

/// The fields of a lock outcome that Java puts into its exception.
fn lock_details(e: &LockError) -> Value {
    match e {
        LockError::InvalidArgument { field, reason } => json!({ "field": field, "reason": reason }),
        LockError::Conflict { key, holders, delay_left_ms: 0 } => {
            json!({ "key": key, "holders": holders })
        }
        LockError::Conflict { key, holders, delay_left_ms } => {
            json!({ "key": key, "holders": holders, "retry_after_ms": delay_left_ms })
        }
        LockError::NotHeld { key, owner } => json!({ "key": key, "owner": owner }),
        LockError::Preempted { key, owner } => {
            json!({ "key": key, "owner": owner, "ended": "preempted" })
        }
        LockError::WaitTimeout { key, owner, waited_ms } => {
            json!({ "key": key, "owner": owner, "waited_ms": waited_ms })
        }
        LockError::Deadlock { key, owner, cycle } => {
            json!({ "key": key, "owner": owner, "cycle": cycle })
        }
        LockError::SessionNotFound { session } => json!({ "session": session }),
        LockError::LimitExceeded { limit, max } => json!({ "limit": limit, "max": max }),
        LockError::PartitionUnavailable { retry_after_ms } => {
            json!({ "retry_after_ms": retry_after_ms })
        }
        LockError::WaiterNotFound { waiter_id } => json!({ "waiter_id": waiter_id }),
        LockError::Cancelled { key, owner, reason } => {
            json!({ "key": key, "owner": owner, "reason": reason })
        }
        LockError::LimitMismatch { key, limit, requested } => {
            json!({ "key": key, "limit": limit, "requested": requested })
        }
        LockError::GroupNotFound { group }
        | LockError::GroupExists { group }
        | LockError::GroupNotEmpty { group, .. } => json!({ "key": group }),
        LockError::MemberExists { group, member } => json!({ "key": group, "owner": member }),
    }
}

/// The error a waiter's final event answers its request with, as the same details a failed
/// call carries; `None` for a grant and for events that complete no waiter. This is the only
/// event -> error mapping of the product ([`Event::outcome`] decides the error).
pub fn event_error(event: &Event) -> Option<Value> {
    let (_, _, outcome) = event.outcome()?;
    outcome.err().map(|e| BridgeError::Lock(e).details())
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
