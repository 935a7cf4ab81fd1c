//! Lock outcomes that are not grants, with stable numeric codes.
//!
//! The codes cross the C ABI and the JNI bridge unchanged, and the Java plugin maps each to an
//! Elasticsearch exception type and HTTP status, so a code is never renumbered; new outcomes get
//! new numbers. [`ErrorCode`] is the only list of them: the bridge's C header
//! (`rust/lock-jni/include/eslm.h`) emits it as the `LM_STATUS_*` constants, and the Java plugin's
//! test compares its exception table with that header (docs/ARCHITECTURE.md, "The bridge").

use std::fmt;

use serde::Serialize;

use crate::answer::HolderInfo;
use crate::types::{Millis, WaiterId};

/// Stable numeric code of every outcome the core can report, and the status of a bridge call.
///
/// [`ErrorCode::Ok`] is never the code of a [`LockError`]: it is the success status of the C ABI,
/// kept in this one list so that the status numbers exist in exactly one place.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Success: the call's answer is the JSON written for it.
    Ok = 0,
    /// Bad input from the caller (HTTP 400).
    InvalidArgument = 1,
    /// A try-lock found the key held by another owner (HTTP 409).
    Conflict = 2,
    /// The caller does not hold what it tried to release or renew (HTTP 404).
    NotHeld = 3,
    /// A queued acquire waited for its whole budget (HTTP 409).
    WaitTimeout = 4,
    /// The waiter was chosen as a deadlock victim (HTTP 409).
    Deadlock = 5,
    /// Unknown or expired session (HTTP 404).
    SessionNotFound = 6,
    /// A configured limit was reached: waiters per key, keys per request, locks (HTTP 429).
    LimitExceeded = 7,
    /// The partition does not grant right now, e.g. in recovery grace (HTTP 503, retryable).
    PartitionUnavailable = 8,
    /// The caller cancelled the request while it waited, e.g. its HTTP client went away
    /// (Elasticsearch's task cancellation).
    Cancelled = 9,
    /// The core panicked while serving the request (a bug): the request failed, and the
    /// partition it happened in is refused with this code until it is reopened from its
    /// replicated state, because its table may be inconsistent (HTTP 500; docs/RELIABILITY.md).
    CorePanic = 10,
    /// A semaphore acquire named another `limit` than the one the semaphore has while anyone
    /// holds or waits (HTTP 409; docs/LOCK_CORE.md, "Semaphores").
    SemaphoreLimitMismatch = 11,
    /// The group does not exist: never created, or deleted (HTTP 404; docs/LOCK_CORE.md,
    /// "Groups").
    GroupNotFound = 12,
    /// A group of that name exists already (HTTP 409).
    GroupExists = 13,
    /// A group that has members cannot be deleted (HTTP 409).
    GroupNotEmpty = 14,
    /// The member is in the group already, under another acquisition (HTTP 409).
    MemberExists = 15,
    /// A bug: an invariant broke or a panic was caught (HTTP 500).
    Internal = 99,
}

/// Why a lock operation did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockError {
    /// The request itself is wrong; `field` names the offending field.
    InvalidArgument { field: &'static str, reason: String },
    /// The key is held by other owners and the request would not wait. `delay_left_ms`: the
    /// longest lock-delay still running on the key that keeps the request out (0: none).
    Conflict { key: String, holders: Vec<HolderInfo>, delay_left_ms: Millis },
    /// `owner` does not hold `key` (or holds it under another token).
    NotHeld { key: String, owner: String },
    /// A queued request waited for its whole budget without being granted.
    WaitTimeout { key: String, owner: String, waited_ms: Millis },
    /// The request was chosen as the victim of a deadlock; `cycle` lists the owners in it.
    Deadlock { key: String, owner: String, cycle: Vec<String> },
    /// The session is unknown, ended or expired.
    SessionNotFound { session: String },
    /// A configured limit would be exceeded; `limit` names it.
    LimitExceeded { limit: &'static str, max: u64 },
    /// The partition does not grant now (recovery grace); retry after the given time.
    PartitionUnavailable { retry_after_ms: Millis },
    /// The waiter is unknown: never queued, or already granted, timed out or cancelled.
    WaiterNotFound { waiter_id: WaiterId },
    /// The caller cancelled the request while it waited. (A wait dropped because its session
    /// ended or expired answers [`LockError::SessionNotFound`], see [`crate::Event::outcome`].)
    Cancelled { key: String, owner: String, reason: String },
    /// A semaphore acquire asked for `requested` as the limit of `key`, whose limit is `limit`
    /// while anyone holds or waits.
    LimitMismatch { key: String, limit: u32, requested: u32 },
    /// `owner` does not hold `key` any more: a waiter of higher priority preempted it after the
    /// grace it was given (docs/LOCK_CORE.md, "Preemption").
    Preempted { key: String, owner: String },
    /// Group `group` does not exist.
    GroupNotFound { group: String },
    /// Group `group` exists already.
    GroupExists { group: String },
    /// Group `group` still has `members`.
    GroupNotEmpty { group: String, members: usize },
    /// `member` is in group `group` already.
    MemberExists { group: String, member: String },
}

impl LockError {
    /// Shorthand for [`LockError::InvalidArgument`].
    pub fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        LockError::InvalidArgument { field, reason: reason.into() }
    }

    /// The stable code of this outcome.
    pub fn code(&self) -> ErrorCode {
        match self {
            LockError::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            LockError::Conflict { .. } => ErrorCode::Conflict,
            LockError::NotHeld { .. } => ErrorCode::NotHeld,
            LockError::WaitTimeout { .. } => ErrorCode::WaitTimeout,
            LockError::Deadlock { .. } => ErrorCode::Deadlock,
            LockError::SessionNotFound { .. } => ErrorCode::SessionNotFound,
            LockError::LimitExceeded { .. } => ErrorCode::LimitExceeded,
            LockError::PartitionUnavailable { .. } => ErrorCode::PartitionUnavailable,
            // No dedicated code (codes are frozen in the C header): a waiter that is gone is,
            // like a lock that is gone, "not held" (HTTP 404).
            LockError::WaiterNotFound { .. } => ErrorCode::NotHeld,
            LockError::Cancelled { .. } => ErrorCode::Cancelled,
            LockError::LimitMismatch { .. } => ErrorCode::SemaphoreLimitMismatch,
            // No code of its own (codes are frozen in the C header): a preempted lock is not
            // held (HTTP 404); the message and the details say why.
            LockError::Preempted { .. } => ErrorCode::NotHeld,
            LockError::GroupNotFound { .. } => ErrorCode::GroupNotFound,
            LockError::GroupExists { .. } => ErrorCode::GroupExists,
            LockError::GroupNotEmpty { .. } => ErrorCode::GroupNotEmpty,
            LockError::MemberExists { .. } => ErrorCode::MemberExists,
        }
    }

    /// The request field this error is about, when there is one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            LockError::InvalidArgument { field, .. } => Some(field),
            _ => None,
        }
    }
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::InvalidArgument { field, reason } => write!(f, "[{field}] {reason}"),
            LockError::Conflict { key, holders, delay_left_ms }
                if holders.is_empty() && *delay_left_ms > 0 =>
            {
                write!(
                f,
                "lock [{key}] is in its lock-delay for [{delay_left_ms}ms]: a lock on it ended \
                 without a release, and until then only its owner may take it"
            )
            }
            LockError::Conflict { key, holders, .. } => {
                write!(f, "lock [{key}] is held by ")?;
                for (i, h) in holders.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "[{}]", h.owner)?;
                }
                Ok(())
            }
            LockError::NotHeld { key, owner } => {
                write!(f, "lock [{key}] is not held by [{owner}]")
            }
            LockError::Preempted { key, owner } => write!(
                f,
                "lock [{key}] is not held by [{owner}]: it was preempted by a waiter of higher \
                 priority when the grace it was given ended"
            ),
            LockError::WaitTimeout { key, owner, waited_ms } => {
                write!(f, "[{owner}] waited {waited_ms}ms for lock [{key}] without getting it")
            }
            LockError::Deadlock { key, owner, cycle } => {
                write!(
                    f,
                    "[{owner}] was chosen as deadlock victim waiting for lock [{key}]; cycle: {}",
                    cycle.join(" -> ")
                )
            }
            LockError::SessionNotFound { session } => {
                write!(f, "session [{session}] does not exist or has expired")
            }
            LockError::LimitExceeded { limit, max } => {
                write!(f, "limit [{limit}] of {max} reached")
            }
            LockError::PartitionUnavailable { retry_after_ms } => {
                write!(f, "partition is in recovery grace; retry in {retry_after_ms}ms")
            }
            LockError::WaiterNotFound { waiter_id } => {
                write!(f, "no waiting request with id [{waiter_id}]")
            }
            LockError::LimitMismatch { key, limit, requested } => write!(
                f,
                "[limit] semaphore [{key}] has limit [{limit}] while it is held or awaited, \
                 got [{requested}]"
            ),
            LockError::Cancelled { key, owner, reason } => {
                write!(f, "[{owner}]'s wait for lock [{key}] was cancelled: {reason}")
            }
            LockError::GroupNotFound { group } => write!(f, "group [{group}] does not exist"),
            LockError::GroupExists { group } => write!(f, "group [{group}] already exists"),
            LockError::GroupNotEmpty { group, members } => {
                write!(f, "group [{group}] has [{members}] members: they must leave first")
            }
            LockError::MemberExists { group, member } => {
                write!(f, "[{member}] is a member of group [{group}] already")
            }
        }
    }
}

impl std::error::Error for LockError {}
