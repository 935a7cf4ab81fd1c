//! Events: what happened inside the table that a caller is waiting to hear about.
//!
//! Every queued request ends with exactly one event carrying its `waiter_id` (from
//! [`crate::Queued`]) and the caller's `request_id`: [`Event::Granted`], [`Event::WaitTimedOut`],
//! [`Event::DeadlockVictim`] or [`Event::Cancelled`]. Leases and sessions that run out are
//! reported too, so the bridge can log them and tell a holder its token is dead. A watch
//! (`LockTable::watch`) ends with exactly one event too: [`Event::WatchFired`] or
//! [`Event::WatchTimedOut`], carrying its `watch_id` and `request_id` (none when cancelled).
//!
//! [`Event::outcome`] is the one place that says which error a waiter that was not granted
//! answers with; the bridge writes that error next to the event (docs/ARCHITECTURE.md, "The
//! bridge") so that no caller maps events to errors again.

use serde::{Deserialize, Serialize};

use crate::answer::{Grant, WatchReason};
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

impl From<CancelReason> for WatchReason {
    /// A session's end as a lock's end (a caller's cancellation ends no lock: only the two
    /// session reasons reach here).
    fn from(reason: CancelReason) -> Self {
        match reason {
            CancelReason::SessionExpired => WatchReason::SessionExpired,
            CancelReason::SessionEnded | CancelReason::Cancelled => WatchReason::SessionEnded,
        }
    }
}

/// Something that happened in a partition, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A queued request was granted. `grants` lists its keys in request order; `multi` says it
    /// was a multi-lock ([`crate::Partition::acquire_many`]), whose answer has its own shape.
    Granted {
        waiter_id: WaiterId,
        request_id: u64,
        owner: String,
        grants: Vec<Grant>,
        #[serde(default)]
        multi: bool,
    },
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
        /// The session whose end dropped the request, named as a call with that session names
        /// it; absent when the caller cancelled.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
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
    /// The lock a watch named ended: the watch's only event when it fires.
    WatchFired {
        watch_id: WaiterId,
        request_id: u64,
        key: String,
        scope: Scope,
        fencing_token: FencingToken,
        reason: WatchReason,
        waited_ms: Millis,
        /// With [`WatchReason::RevokeRequested`]: the grace left (the lock is still held).
        grace_ms: Option<Millis>,
    },
    /// A watch's wait ran out while the lock it names is still held: its only event then.
    WatchTimedOut {
        watch_id: WaiterId,
        request_id: u64,
        key: String,
        scope: Scope,
        fencing_token: FencingToken,
        waited_ms: Millis,
    },
}

impl Event {
    /// The waiter this event completes, if it completes one.
    pub fn waiter_id(&self) -> Option<WaiterId> {
        match self {
            Event::Granted { waiter_id, .. }
            | Event::WaitTimedOut { waiter_id, .. }
            | Event::DeadlockVictim { waiter_id, .. }
            | Event::Cancelled { waiter_id, .. } => Some(*waiter_id),
            Event::WatchFired { watch_id, .. } | Event::WatchTimedOut { watch_id, .. } => {
                Some(*watch_id)
            }
            Event::LeaseExpired { .. } | Event::SessionExpired { .. } => None,
        }
    }

    /// For an event that completes a waiter: `(waiter_id, request_id, outcome)`, the outcome
    /// being the grants or the error to answer the pending request with — the same error a
    /// call would answer: a wait that ran out is [`LockError::WaitTimeout`], a deadlock victim
    /// [`LockError::Deadlock`], a wait whose session ended or expired
    /// [`LockError::SessionNotFound`] (as any later call with that session), and a wait the
    /// caller cancelled [`LockError::Cancelled`].
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
            Event::Cancelled { waiter_id, request_id, owner, key, reason, session } => Some((
                *waiter_id,
                *request_id,
                Err(cancel_error(owner, key, *reason, session.as_deref())),
            )),
            Event::LeaseExpired { .. }
            | Event::SessionExpired { .. }
            | Event::WatchFired { .. }
            | Event::WatchTimedOut { .. } => None,
        }
    }
}

/// The error a dropped waiter answers with: its session is gone, or its caller cancelled it.
fn cancel_error(owner: &str, key: &str, reason: CancelReason, session: Option<&str>) -> LockError {
    match reason {
        CancelReason::SessionEnded | CancelReason::SessionExpired => {
            LockError::SessionNotFound { session: session.unwrap_or_default().to_owned() }
        }
        CancelReason::Cancelled => LockError::Cancelled {
            key: key.to_owned(),
            owner: owner.to_owned(),
            reason: "cancelled".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn cancelled(reason: CancelReason, session: Option<&str>) -> Event {
        Event::Cancelled {
            waiter_id: 1,
            request_id: 2,
            owner: "o".into(),
            key: "k".into(),
            reason,
            session: session.map(str::to_owned),
        }
    }

    fn error(event: &Event) -> LockError {
        event.outcome().expect("completes a waiter").2.expect_err("no grant")
    }

    #[test]
    fn a_dropped_waiter_answers_as_its_cause() {
        for reason in [CancelReason::SessionEnded, CancelReason::SessionExpired] {
            let e = error(&cancelled(reason, Some("17")));
            assert_eq!(e, LockError::SessionNotFound { session: "17".into() });
        }
        let e = error(&cancelled(CancelReason::Cancelled, None));
        assert_eq!(e.code(), ErrorCode::Cancelled);
        assert_eq!(e.to_string(), "[o]'s wait for lock [k] was cancelled: cancelled");
    }

    #[test]
    fn the_session_is_serialized_only_when_a_session_ended() {
        let json = serde_json::to_string(&cancelled(CancelReason::Cancelled, None)).expect("json");
        assert!(!json.contains("session"), "{json}");
        let ended = cancelled(CancelReason::SessionEnded, Some("17"));
        let json = serde_json::to_string(&ended).expect("json");
        assert!(json.ends_with(r#""reason":"session_ended","session":"17"}"#), "{json}");
        assert_eq!(serde_json::from_str::<Event>(&json).expect("back"), ended);
    }
}
