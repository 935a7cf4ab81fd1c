//! The answers the table gives: grants, queued tickets, releases, renewals, and the views
//! of keys, holders, waiters, locks and sessions shown by lookups and conflict errors.

use serde::{Deserialize, Serialize};

use crate::mode::Mode;
use crate::types::{FencingToken, Millis, Priority, Scope, WaiterId};

/// A granted lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub key: String,
    pub owner: String,
    pub mode: Mode,
    pub fencing_token: FencingToken,
    /// Milliseconds the grant waited in the queue (0 for an immediate grant).
    pub waited_ms: Millis,
    /// True when the acquisition already held the lock and got its existing grant back.
    pub reentrant: bool,
    #[serde(default)]
    pub scope: Scope,
    /// Milliseconds of lease left at the time of the answer.
    #[serde(default)]
    pub lease_ms: Millis,
    /// The session holding the lock, if any.
    #[serde(default)]
    pub session: Option<String>,
    /// Semaphores only: the permits this grant holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permits: Option<u32>,
    /// Semaphores only: the semaphore's limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Semaphores only: the permits of the limit that nobody held just after this grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining: Option<u32>,
    /// Elections only: the value kept with the grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// What an acquire did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcquireOutcome {
    /// Granted at once.
    Granted(Grant),
    /// Queued: the final outcome arrives as an [`crate::Event`] carrying this waiter id.
    Queued(Queued),
}

/// A grant without the names: what the table keeps of a grant until it writes the [`Grant`]
/// record it answers (the key and owner are the request's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenGrant {
    pub fencing_token: FencingToken,
    pub mode: Mode,
    pub lease_ms: Millis,
    pub reentrant: bool,
}

/// What a multi-acquire did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MultiOutcome {
    /// Every key granted at once, in request order.
    Granted(Vec<Grant>),
    /// Queued as one waiter for all keys.
    Queued(Queued),
}

/// What a change of a semaphore's limit did (docs/LOCK_CORE.md, "Semaphores"): the new and the
/// previous limit and the permits held when it took effect. `held` may exceed `limit` after a
/// lowering: nothing held is revoked, and no grant is made until the permits held fall below the
/// new limit. Waiters that fit under a raised limit are granted at once (as events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitChanged {
    pub limit: u32,
    pub previous: u32,
    pub held: u32,
}

/// A queued request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queued {
    pub waiter_id: WaiterId,
    pub request_id: u64,
    /// When the request times out unless granted before.
    pub deadline: Millis,
}

/// Why the lock a watch names ended (`GET /_locks/{key}/_watch`, docs/API.md): the one
/// place a lock is removed (`table/release.rs`, "removing a lock") is told which of these it
/// is doing, and an upgrade (which replaces the token in place) says so too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WatchReason {
    /// Its holder released it.
    Released,
    /// Its lease ran out.
    Expired,
    /// An administrator force-released the key.
    ForceReleased,
    /// Its session was ended by its owner.
    SessionEnded,
    /// Its session expired.
    SessionExpired,
    /// Its holder upgraded it, or acquired it again as a new acquisition (docs/API.md,
    /// "Acquisitions"): the lock goes on under a newer token.
    Upgraded,
    /// No lock with the token was held when the watch was asked for (answered at once).
    NotHeld,
    /// A watch for the next holder (fencing token 0, elections only): the election has one
    /// now (docs/LOCK_CORE.md, "Elections"); the token answered is the holder's.
    Held,
    /// A waiter of higher priority asked the holder to yield (docs/LOCK_CORE.md, "Preemption"):
    /// the lock is still held, and is taken away when the grace (`grace_ms`) ends. Only a watch
    /// that asked for notices (`revoke`) is told.
    RevokeRequested,
    /// Taken away after a revoke's grace ended with the holder still holding.
    Preempted,
}

/// What a watch answered at once: the lock with the token no longer held (`reason`), or
/// still held when the watch does not wait (`reason` absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watched {
    pub key: String,
    pub scope: Scope,
    pub fencing_token: FencingToken,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<WatchReason>,
    /// With [`WatchReason::RevokeRequested`]: the grace left before the lock is taken away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_ms: Option<Millis>,
}

/// What a watch did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WatchOutcome {
    /// Answered at once (see [`Watched`]).
    Answered(Watched),
    /// Registered: the end arrives as [`crate::Event::WatchFired`] or
    /// [`crate::Event::WatchTimedOut`] with this id (in `waiter_id`: watch and waiter ids are
    /// drawn from one sequence, so a caller keeps both in one map).
    Watching(Queued),
}

/// The answer to a release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Released {
    pub key: String,
    pub owner: String,
    pub fencing_token: FencingToken,
}

/// The answer to a renew.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Renewed {
    pub key: String,
    pub owner: String,
    pub fencing_token: FencingToken,
    /// Lease left from now.
    pub lease_ms: Millis,
}

/// One holder of a key, as shown by lookups and conflict errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolderInfo {
    pub owner: String,
    pub mode: Mode,
    pub fencing_token: FencingToken,
    /// Milliseconds since the grant.
    pub held_ms: Millis,
    /// Milliseconds of lease left.
    #[serde(default)]
    pub lease_ms: Millis,
    /// True when this is an intention mode put on an ancestor by a tree lock below it.
    #[serde(default)]
    pub intention: bool,
    /// Semaphores only: the permits held or asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permits: Option<u32>,
    /// Elections only: the value kept with the grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// One queued request on a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaiterInfo {
    pub waiter_id: WaiterId,
    pub owner: String,
    pub mode: Mode,
    pub priority: Priority,
    pub waited_ms: Millis,
    /// Milliseconds until the request times out.
    pub wait_left_ms: Millis,
    /// The key waited for (its first key for a multi-lock); set where the waiter is listed
    /// without its key around it, e.g. in the oldest waiters of a partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Semaphores only: the permits held or asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permits: Option<u32>,
}

/// Everything known about one key. A free key has no holders and no waiters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyInfo {
    pub key: String,
    #[serde(default)]
    pub scope: Scope,
    pub holders: Vec<HolderInfo>,
    /// In queue order (the next to be considered first).
    #[serde(default)]
    pub waiters: Vec<WaiterInfo>,
    /// Semaphores only: the semaphore's limit (absent when nobody holds or waits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Lock-delays running on the key: whose lock ended without a release, and for how long
    /// others are kept out still (docs/LOCK_CORE.md, "Lock-delay").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lock_delays: Vec<DelayInfo>,
}

/// A lock-delay running on a key, as [`KeyInfo`] shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelayInfo {
    /// The owner whose lock ended; it may take the key back at once.
    pub owner: String,
    /// The mode the ended lock held the key in: what the delay keeps from others.
    pub mode: Mode,
    pub delay_left_ms: Millis,
}

/// A group's state (docs/LOCK_CORE.md, "Groups"): its members in name order and its version,
/// which changes whenever a member joins, leaves or changes its capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupInfo {
    pub group: String,
    pub version: u64,
    pub members: Vec<GroupMember>,
}

/// One member of a group: its grant on the group's key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupMember {
    pub member: String,
    pub fencing_token: FencingToken,
    pub capabilities: Option<String>,
    /// Lease left (a session member's is its session's).
    pub lease_ms: Millis,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// One held lock, as listed by owner or prefix. Read back only as a snapshot's lock
/// ([`crate::LockSnapshot`]): members it does not know are refused there (docs/ARCHITECTURE.md,
/// "Formats and versions").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockInfo {
    pub key: String,
    pub scope: Scope,
    pub owner: String,
    pub mode: Mode,
    pub fencing_token: FencingToken,
    pub held_ms: Millis,
    pub lease_ms: Millis,
    pub session: Option<String>,
    /// Semaphores only: the permits this grant holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permits: Option<u32>,
    /// Semaphores only: the semaphore's limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Elections only: the value kept with the grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The lock-delay it was granted with (format 3; absent when none): what its keys keep
    /// from other owners if it ends without a release (docs/LOCK_CORE.md, "Lock-delay").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_delay_ms: Option<Millis>,
    /// The priority it was granted at, when not the default `foreground` (7) (format 3): what a
    /// preempting waiter compares (docs/LOCK_CORE.md, "Preemption").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// The digest of the acquisition that holds it (format 4; absent when acquired without an
    /// id). Kept in snapshots and deltas only: a listing leaves it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquisition: Option<u64>,
}

/// A session: one lease and keep-alive for many locks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub session: String,
    pub owner: String,
    pub ttl_ms: Millis,
    /// Milliseconds left until the session expires.
    pub expires_in_ms: Millis,
    pub locks: usize,
}

/// The answer to ending a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionEnded {
    pub session: String,
    /// Keys released, as `scope`-less names.
    pub released: Vec<String>,
    /// Waiters dropped (each also gets a cancelled event).
    pub dropped_waiters: usize,
}
