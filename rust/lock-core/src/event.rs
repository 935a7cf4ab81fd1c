//! Events: what happened inside the table that a caller is waiting to hear about.
//!
//! Every queued request ends with exactly one event carrying its `waiter_id` (from
//! [`crate::Queued`]) and the caller's `request_id`: [`Event::Granted`], [`Event::WaitTimedOut`],
//! [`Event::DeadlockVictim`] or [`Event::Cancelled`]. Leases and sessions that run out are
//! reported too, so the bridge can log them and tell a holder its token is dead.

use serde::{Deserialize, Serialize};

use crate::answer::Grant;
use crate::error::LockError;
use crate::types::{FencingToken, Millis, Scope, WaiterId};

/// Why a waiter was dropped without a grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CancelReason {
    /// The caller cancelled it ([`crate::LockTable::cancel`]).
    Cancelled,
    /// Its session was ended.
    SessionEnded,
    /// Its session expired.
    SessionExpired,
}

impl CancelReason {
    fn as_str(self) -> &'static str {
        match self {
            CancelReason::Cancelled => "cancelled",
            CancelReason::SessionEnded => "session ended",
            CancelReason::SessionExpired => "session expired",
        }
    }
}

/// Something that happened in a partition, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A queued request was granted. `grants` lists its keys in request order.
    Granted { waiter_id: WaiterId, request_id: u64, owner: String, grants: Vec<Grant> },
    /// A queued request waited for its whole budget.
    WaitTimedOut {
        waiter_id: WaiterId,
        request_id: u64,
        owner: String,
        /// The first key of the request.
        key: String,
        waited_ms: Millis,
    },
    /// A queued request was chosen as the victim of a deadlock.
    DeadlockVictim {
        waiter_id: WaiterId,
        request_id: u64,
        owner: String,
        key: String,
        /// The owners in the cycle, starting with the victim.
        cycle: Vec<String>,
    },
    /// A queued request was dropped: cancelled, or its session ended or expired.
    Cancelled {
        waiter_id: WaiterId,
        request_id: u64,
        owner: String,
        key: String,
        reason: CancelReason,
    },
    /// A lease ran out: the lock was taken from its holder and the token is dead.
    LeaseExpired {
        key: String,
        scope: Scope,
        owner: String,
        fencing_token: FencingToken,
        held_ms: Millis,
    },
    /// A session ran out: its locks were released (`released`) and its waiters dropped (each
    /// also gets a [`Event::Cancelled`]).
    SessionExpired { session: String, owner: String, released: Vec<String> },
}

impl Event {
    /// The waiter this event completes, if it completes one.
    pub fn waiter_id(&self) -> Option<WaiterId> {
        match self {
            Event::Granted { waiter_id, .. }
            | Event::WaitTimedOut { waiter_id, .. }
            | Event::DeadlockVictim { waiter_id, .. }
            | Event::Cancelled { waiter_id, .. } => Some(*waiter_id),
            Event::LeaseExpired { .. } | Event::SessionExpired { .. } => None,
        }
    }

    /// For an event that completes a waiter: `(waiter_id, request_id, outcome)`, the outcome
    /// being the grants or the error to answer the pending request with.
    pub fn outcome(&self) -> Option<(WaiterId, u64, Result<Vec<Grant>, LockError>)> {
        match self {
            Event::Granted { waiter_id, request_id, grants, .. } => {
                Some((*waiter_id, *request_id, Ok(grants.clone())))
            }
            Event::WaitTimedOut { waiter_id, request_id, owner, key, waited_ms } => Some((
                *waiter_id,
                *request_id,
                Err(LockError::WaitTimeout {
                    key: key.clone(),
                    owner: owner.clone(),
                    waited_ms: *waited_ms,
                }),
            )),
            Event::DeadlockVictim { waiter_id, request_id, owner, key, cycle } => Some((
                *waiter_id,
                *request_id,
                Err(LockError::Deadlock {
                    key: key.clone(),
                    owner: owner.clone(),
                    cycle: cycle.clone(),
                }),
            )),
            Event::Cancelled { waiter_id, request_id, owner, key, reason } => Some((
                *waiter_id,
                *request_id,
                Err(LockError::Cancelled {
                    key: key.clone(),
                    owner: owner.clone(),
                    reason: reason.as_str().to_owned(),
                }),
            )),
            Event::LeaseExpired { .. } | Event::SessionExpired { .. } => None,
        }
    }
}
