//! Every bridge operation as "op code + JSON in, JSON envelope out", shared by the JNI and the
//! C entry points so that both speak exactly the same protocol.
//!
//! A successful call answers an envelope:
//!
//! ```json
//! {"result": <the op's answer>, "events": [<lock_core::Event + "error"?>...], "tick_in_ms": <ms> | null}
//! ```
//!
//! `events` are what the call caused besides its own answer (a release grants the next waiter,
//! a lease ran out); an event that completes a waiter without a grant carries `"error"`, the
//! same details a failed call would (see [`event_error`]). `tick_in_ms` is when the caller must
//! call [`Op::Tick`] next so that leases and waits expire on time with no request arriving.
//! Failures become a [`BridgeError`], whose [`BridgeError::details_json`] is the structured form
//! Java turns into an Elasticsearch exception. Events a failed call caused stay queued until
//! the next call or tick.
//!
//! | module | role |
//! |---|---|
//! | `op` | [`Op`], the op numbers (the `ESLM_OP_*` constants of `include/eslm.h`) |
//! | `dispatch` | op number -> handler table |
//! | `locks`, `sessions`, `introspection`, `partitions`, `replication`, `elections`, `groups`, `history` | one handler per op, by family |
//! | `ownership` | the ownership protocol's events and decisions (`lock_core::ownership`), and its bounds for the header |
//! | `telemetry` | the node's counters, gauges and drained time samples for Elasticsearch's telemetry |
//! | `fence` | a fenced change to a protected document (`lock_core::fence`), for the plugin's update script |
//! | `requests` | the REST bodies (docs/API.md) requests send: checked, turned into the core's arguments |
//! | `bodies` | the REST bodies (docs/API.md) the lock and group ops answer and events carry |
//! | `fields` | the member names the plugin reads, emitted as `ESLM_FIELD_*` |
//! | `envelope` | the envelope writer |
//! | `error` | [`BridgeError`], its details, and the event -> error mapping |
//! | `state_format` | the format of the state documents: checked on reading, chosen on writing |

mod bodies;
mod dispatch;
mod elections;
mod envelope;
mod error;
mod fence;
pub mod fields;
mod groups;
mod history;
mod introspection;
mod locks;
mod op;
mod ownership;
mod partitions;
mod replication;
mod requests;
mod sessions;
mod state_format;
mod telemetry;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use lock_core::ownership::{LeaseSource, Verdict};
use lock_core::{LockError, Partition};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub use error::{event_error, BridgeError};
pub use op::Op;

use crate::node::NodeCore;

/// Which partition an op addresses; node-wide ops ignore it.
pub const ALL_PARTITIONS: i32 = -1;

/// The format of the state documents this build writes, for the plugin (docs/ARCHITECTURE.md
/// "Formats and versions"): `lock_core::STATE_FORMAT`, written out because cbindgen emits only
/// literals; an assertion beside it (rust/lock-jni/src/ops/mod.rs) fails the build when they differ.
pub const ESLM_STATE_FORMAT: u32 = 5;

/// The oldest format of the state documents this build reads: `lock_core::OLDEST_STATE_FORMAT`.
pub const ESLM_OLDEST_STATE_FORMAT: u32 = 1;

/// The first format whose readers keep a lock's acquisition: `lock_core::STATE_FORMAT_ACQUISITION`.
/// A coordinator leaves the acquisition out of what it sends to a node that reads an older one
/// (docs/API.md "Acquisitions", rolling upgrades).
pub const ESLM_ACQUISITION_STATE_FORMAT: u32 = 4;

/// The first format whose readers keep groups: `lock_core::STATE_FORMAT_GROUPS`. A coordinator
/// refuses a group request for an owner that reads an older one (docs/API.md "Groups").
pub const ESLM_GROUPS_STATE_FORMAT: u32 = 5;

/// The longest key, in UTF-8 bytes: `lock_core::MAX_KEY_BYTES`. The plugin refuses a longer one
/// as it parses a body (docs/API.md "Errors"); this and the limits below are written out for the
/// header as the formats are, and held to lock_core's by the assertion below them.
pub const ESLM_MAX_KEY_BYTES: u32 = 512;

/// The longest owner, in UTF-8 bytes: `lock_core::MAX_OWNER_BYTES`.
pub const ESLM_MAX_OWNER_BYTES: u32 = 512;

/// The largest semaphore `limit` (and `permits`): `lock_core::MAX_SEMAPHORE_LIMIT`.
pub const ESLM_MAX_SEMAPHORE_LIMIT: u32 = 65_535;

/// The longest lock-delay, in milliseconds: `lock_core::MAX_LOCK_DELAY_MS`.
pub const ESLM_MAX_LOCK_DELAY_MS: u32 = 60_000;

/// The longest election value or group member's capabilities, in bytes:
/// `lock_core::MAX_ELECTION_VALUE_BYTES`.
pub const ESLM_MAX_VALUE_BYTES: u32 = 1024;

/// A listing's page size when none is asked for: `lock_core::ListFilter::DEFAULT_SIZE`.
pub const ESLM_LIST_DEFAULT_SIZE: u32 = 100;

/// The largest page a listing may ask for: `lock_core::ListFilter::MAX_SIZE`.
pub const ESLM_LIST_MAX_SIZE: u32 = 1000;

const _: () = assert!(
    ESLM_MAX_KEY_BYTES as usize == lock_core::MAX_KEY_BYTES
        && ESLM_MAX_OWNER_BYTES as usize == lock_core::MAX_OWNER_BYTES
        && ESLM_MAX_SEMAPHORE_LIMIT == lock_core::MAX_SEMAPHORE_LIMIT
        && ESLM_MAX_LOCK_DELAY_MS as u64 == lock_core::MAX_LOCK_DELAY_MS
        && ESLM_MAX_VALUE_BYTES as usize == lock_core::MAX_ELECTION_VALUE_BYTES
        && ESLM_LIST_DEFAULT_SIZE as usize == lock_core::ListFilter::DEFAULT_SIZE
        && ESLM_LIST_MAX_SIZE as usize == lock_core::ListFilter::MAX_SIZE,
    "the header's limits are lock_core's"
);

const _: () = assert!(
    ESLM_STATE_FORMAT == lock_core::STATE_FORMAT
        && ESLM_OLDEST_STATE_FORMAT == lock_core::OLDEST_STATE_FORMAT
        && ESLM_ACQUISITION_STATE_FORMAT == lock_core::STATE_FORMAT_ACQUISITION
        && ESLM_GROUPS_STATE_FORMAT == lock_core::STATE_FORMAT_GROUPS,
    "the header's formats are lock_core's"
);

/// What a handler works with: the node, the addressed partition, the call's time, and the
/// partitions whose events go into the envelope.
pub(crate) struct Ctx<'a> {
    core: &'a NodeCore,
    partition: i32,
    /// One reading of the node's clock for the whole call.
    now: u64,
    touched: Vec<Arc<Partition>>,
    /// The partition the call is working on: the one a panic fails.
    current: Option<u32>,
}

impl Ctx<'_> {
    /// The addressed partition; the call's envelope will carry its events. A partition that
    /// failed after a panic answers [`BridgeError::CorePanic`] until it is reopened.
    fn one(&mut self) -> Result<&Partition, BridgeError> {
        let id = partition_id(self.partition)?;
        if let Some(failed) = self.core.failed(id) {
            return Err(BridgeError::CorePanic {
                partition: Some(id),
                epoch: Some(failed.epoch),
                message: format!("an earlier call panicked: {}", failed.message),
            });
        }
        let p = self.core.partition(id)?;
        self.current = Some(id);
        let at = self.touched.len();
        self.touched.push(p);
        Ok(&self.touched[at])
    }

    /// The addressed partition, if this node may serve it now: every operation that changes or
    /// shows a table asks this first, so a node whose lease is not current (a resumed one, one cut
    /// off from its copies) grants, expires and shows nothing (docs/ARCHITECTURE.md "Silent
    /// owners"). The refusal is retryable and names the reason.
    fn served(&mut self) -> Result<&Partition, BridgeError> {
        let id = partition_id(self.partition)?;
        if let Verdict::NoLease { source, retry_after_ms } =
            self.core.verdict(id, self.core.now_us())
        {
            return Err(BridgeError::NoLease {
                message: no_lease(self.core.node_name(), id, source),
                retry_after_ms,
            });
        }
        self.one()
    }
}

/// Why a node that owns partition `id` does not serve it now.
fn no_lease(node: Option<&str>, id: u32, source: LeaseSource) -> String {
    let node = format!("node [{}]", node.unwrap_or("?"));
    match source {
        LeaseSource::Copies => format!(
            "{node} has no current lease on lock partition [{id}]: its copies have not acknowledged a \
             batch sent in the last {}ms; retry",
            lock_core::ownership::bounds::COPY_LEASE_MS
        ),
        LeaseSource::Master => format!(
            "{node} cannot confirm with the elected master that it still owns lock partition [{id}]; retry"
        ),
    }
}

/// Runs `op` with `args_json` on `partition` of `core` and answers the envelope.
///
/// A panic fails only this call: it answers [`BridgeError::CorePanic`], and the partition the
/// call was working on is marked failed in the node ([`NodeCore::fail_partition`]), because the
/// panic may have left its table half changed (docs/RELIABILITY.md, "A panic in the core").
pub fn call(
    core: &NodeCore,
    op: i32,
    partition: i32,
    args_json: &str,
) -> Result<String, BridgeError> {
    let (which, handler) = dispatch::entry(op)?;
    let mut cx = Ctx { core, partition, now: core.now(), touched: Vec::new(), current: None };
    let answered = catch_unwind(AssertUnwindSafe(|| {
        let result = handler(&mut cx, args_json)?;
        envelope::write(&result, &cx.touched, || core.next_deadline_in())
    }));
    answered.unwrap_or_else(|payload| {
        let message = crate::panic_message(&*payload);
        let failed = cx.current.and_then(|id| Some((id, core.fail_partition(id, &message)?)));
        tracing::error!(op = ?which, partition = ?cx.current, "lock core panicked: {message}");
        Err(BridgeError::CorePanic {
            partition: failed.map(|(id, _)| id),
            epoch: failed.map(|(_, epoch)| epoch),
            message,
        })
    })
}

fn decode<T: DeserializeOwned>(json: &str) -> Result<T, BridgeError> {
    serde_json::from_str(json).map_err(|e| BridgeError::BadPayload(e.to_string()))
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String, BridgeError> {
    serde_json::to_string(value).map_err(|e| BridgeError::Internal(e.to_string()))
}

fn to_value<T: Serialize>(value: &T) -> Result<Value, BridgeError> {
    serde_json::to_value(value).map_err(|e| BridgeError::Internal(e.to_string()))
}

fn partition_id(partition: i32) -> Result<u32, BridgeError> {
    u32::try_from(partition).map_err(|_| {
        LockError::invalid("partition", format!("must be a partition id, got [{partition}]")).into()
    })
}

#[cfg(test)]
mod tests {
    use lock_core::{Config, ErrorCode};
    use serde_json::json;

    use super::*;
    use crate::node::NodeConfig;

    fn core() -> NodeCore {
        NodeCore::new(NodeConfig {
            config: Config::default(),
            partitions: None,
            node_name: None,
            ..NodeConfig::default()
        })
        .expect("core")
    }

    fn ok(core: &NodeCore, op: Op, args: &str) -> Value {
        serde_json::from_str(&call(core, op as i32, 0, args).expect("call")).expect("envelope")
    }

    #[test]
    fn acquire_conflict_release_round_trip_through_json() {
        let core = core();
        let g = ok(&core, Op::Acquire, r#"{"key":"k","owner":"a"}"#);
        assert_eq!(g["result"]["granted"]["owner"], "a");
        assert_eq!(g["result"]["granted"]["fencing_token"].as_u64().expect("token") >> 40, 1);
        assert!(g["tick_in_ms"].as_u64().is_some(), "a lease is a deadline");

        let err =
            call(&core, Op::Acquire as i32, 0, r#"{"key":"k","owner":"b"}"#).expect_err("conflict");
        assert_eq!(err.code(), ErrorCode::Conflict as i32);
        let d: Value = serde_json::from_str(&err.details_json()).expect("json");
        assert_eq!(d["holders"][0]["owner"], "a");

        let err =
            call(&core, Op::Acquire as i32, 0, r#"{"key":"","owner":"b"}"#).expect_err("blank key");
        let d: Value = serde_json::from_str(&err.details_json()).expect("json");
        assert_eq!(d["field"], "key");
        assert!(matches!(call(&core, Op::Acquire as i32, 0, "{"), Err(BridgeError::BadPayload(_))));
        assert!(call(&core, 999, 0, "{}").is_err(), "unknown op");
        assert!(call(&core, Op::Acquire as i32, 7, r#"{"key":"k","owner":"a"}"#).is_err());

        ok(&core, Op::Release, r#"{"key":"k","owner":"a"}"#);
        let info = ok(&core, Op::KeyInfo, r#"{"key":"k"}"#);
        assert_eq!(info["result"]["holders"].as_array().map(Vec::len), Some(0));
    }

    #[test]
    fn a_release_hands_over_to_the_queued_waiter_as_an_event() {
        let core = core();
        ok(&core, Op::Acquire, r#"{"key":"k","owner":"a"}"#);
        let q =
            ok(&core, Op::Acquire, r#"{"key":"k","owner":"b","wait_ms":60000,"request_id":42}"#);
        assert!(q["result"]["queued"]["waiter_id"].as_u64().is_some(), "{q}");
        let r = ok(&core, Op::Release, r#"{"key":"k","owner":"a"}"#);
        let events = r["events"].as_array().expect("events");
        assert_eq!(events.len(), 1, "{r}");
        assert_eq!(events[0]["event"], "granted");
        assert_eq!(events[0]["request_id"], 42);
        assert_eq!(events[0]["grants"][0]["owner"], "b");
    }

    #[test]
    fn a_watch_registers_and_fires_as_an_event_when_its_lock_is_force_released() {
        let core = core();
        let g = ok(&core, Op::Acquire, r#"{"key":"k","owner":"a"}"#);
        let token = g["result"]["granted"]["fencing_token"].as_u64().expect("token");
        let args =
            format!(r#"{{"key":"k","fencing_token":{token},"wait_ms":60000,"request_id":5}}"#);
        let w = ok(&core, Op::Watch, &args);
        let id = w["result"]["watching"]["waiter_id"].as_u64().expect("watching");
        let r = ok(&core, Op::ForceRelease, r#"{"key":"k"}"#);
        let events = r["events"].as_array().expect("events");
        assert_eq!(events.len(), 1, "{r}");
        assert_eq!(events[0]["event"], "watch_fired");
        assert_eq!(events[0]["watch_id"], id);
        assert_eq!(events[0]["request_id"], 5);
        assert_eq!(events[0]["reason"], "force_released");
        assert!(events[0].get("error").is_none(), "a watch's end is no error: {r}");
        let gone = ok(&core, Op::Watch, &args);
        assert_eq!(gone["result"]["answered"]["reason"], "not_held", "{gone}");
    }

    #[test]
    fn a_semaphore_limit_goes_below_the_held_only_when_every_node_reads_it() {
        let core = core();
        let sem = r#"{"key":"s","owner":"a","scope":"semaphore","permits":3,"limit":4}"#;
        ok(&core, Op::Acquire, sem);
        let waiter = r#"{"key":"s","owner":"b","scope":"semaphore","permits":2,"limit":4,
            "wait_ms":60000,"request_id":7}"#;
        ok(&core, Op::Acquire, waiter);
        let raised = ok(&core, Op::SemaphoreLimit, r#"{"key":"s","limit":5}"#);
        assert_eq!(raised["result"], json!({"key":"s","limit":5,"previous":4,"held":3}));
        assert_eq!(raised["events"][0]["request_id"], 7, "the raise let b in: {raised}");
        ok(&core, Op::PeersRead, r#"{"format":2}"#);
        let lower = r#"{"key":"s","limit":2}"#;
        let err = call(&core, Op::SemaphoreLimit as i32, 0, lower).expect_err("a format-2 peer");
        let d: Value = serde_json::from_str(&err.details_json()).expect("json");
        assert_eq!(d["field"], "limit", "{d}");
        assert!(call(&core, Op::PeersRead as i32, 0, r#"{"format":9}"#).is_err(), "too new");
        ok(&core, Op::PeersRead, &format!(r#"{{"format":{}}}"#, lock_core::STATE_FORMAT));
        let lowered = ok(&core, Op::SemaphoreLimit, lower);
        assert_eq!(lowered["result"]["held"], 5, "{lowered}");
    }

    #[test]
    fn configure_applies_to_partitions_and_refuses_bad_settings() {
        let core = core();
        let cfg = Config { max_wait_ms: 1234, ..Config::default() };
        let answer = ok(&core, Op::Configure, &serde_json::to_string(&cfg).expect("json"));
        assert_eq!(answer["result"]["max_wait_ms"], 1234);
        let bad = Config { default_lease_ms: 10, max_lease_ms: 5, ..Config::default() };
        assert!(call(&core, Op::Configure as i32, -1, &serde_json::to_string(&bad).expect("json"))
            .is_err());
        assert_eq!(core.config().max_wait_ms, 1234, "old settings stay");
    }

    #[test]
    fn partitions_hand_over_with_state_or_start_in_grace() {
        let old = core();
        ok(&old, Op::Acquire, r#"{"key":"k","owner":"a","lease_ms":60000}"#);
        let closed: Value = serde_json::from_str(
            &call(&old, Op::ClosePartition as i32, 0, r#"{"export":true}"#).expect("close"),
        )
        .expect("json");
        let snapshot = closed["result"]["snapshot"].clone();
        assert_eq!(snapshot["locks"][0]["owner"], "a");
        assert!(call(&old, Op::KeyInfo as i32, 0, r#"{"key":"k"}"#).is_err(), "closed here");

        let new = NodeCore::new(NodeConfig {
            config: Config::default(),
            partitions: Some(vec![]),
            node_name: None,
            ..NodeConfig::default()
        })
        .expect("core");
        let args = json!({ "epoch": 1, "snapshot": snapshot }).to_string();
        call(&new, Op::OpenPartition as i32, 3, &args).expect("open with state");
        let err = call(&new, Op::Acquire as i32, 3, r#"{"key":"k","owner":"b"}"#)
            .expect_err("holder carried over");
        assert_eq!(err.code(), ErrorCode::Conflict as i32);

        call(&new, Op::OpenPartition as i32, 4, r#"{"epoch":2,"grace_ms":60000}"#).expect("open");
        let err =
            call(&new, Op::Acquire as i32, 4, r#"{"key":"k","owner":"b"}"#).expect_err("grace");
        assert_eq!(err.code(), ErrorCode::PartitionUnavailable as i32);
        let d = ok(&new, Op::Diagnostics, "{}");
        let states: Vec<&str> = d["result"]["partitions"]
            .as_array()
            .expect("partitions")
            .iter()
            .filter_map(|p| p["state"].as_str())
            .collect();
        assert!(states.contains(&"grace") && states.contains(&"active"), "{states:?}");
    }

    #[test]
    fn diagnostics_and_stats_report_partitions() {
        let core = core();
        ok(&core, Op::Acquire, r#"{"key":"k","owner":"a"}"#);
        let d = ok(&core, Op::Diagnostics, "{}");
        assert_eq!(d["result"]["partitions"][0]["held"], 1);
        let s = ok(&core, Op::Stats, "{}");
        assert_eq!(s["result"]["held"], 1);
        assert_eq!(s["result"]["acquires"], 1);
        assert_eq!(s["result"]["partitions"][0]["held"], 1);
    }

    #[test]
    fn reads_never_move_time_on_so_only_a_tick_expires_and_grants() {
        let core = core();
        ok(&core, Op::Acquire, r#"{"key":"k","owner":"a","lease_ms":30}"#);
        let q = ok(&core, Op::Acquire, r#"{"key":"k","owner":"b","wait_ms":60000,"request_id":5}"#);
        assert!(q["result"]["queued"]["waiter_id"].as_u64().is_some(), "{q}");
        std::thread::sleep(std::time::Duration::from_millis(80));
        // The lease ran out, but no read may act on it: a partition whose ownership is not
        // confirmed is read as it stands (docs/ARCHITECTURE.md "Cut-off owners").
        for (op, args) in [
            (Op::KeyInfo, r#"{"key":"k"}"#),
            (Op::List, "{}"),
            (Op::Stats, "{}"),
            (Op::Diagnostics, "{}"),
        ] {
            let read = ok(&core, op, args);
            assert_eq!(read["events"], json!([]), "{op:?} caused events: {read}");
        }
        let info = ok(&core, Op::KeyInfo, r#"{"key":"k"}"#);
        assert_eq!(info["result"]["holders"][0]["owner"], "a", "{info}");
        assert_eq!(info["result"]["waiters"][0]["owner"], "b", "{info}");
        assert_eq!(ok(&core, Op::List, "{}")["result"][0]["locks"][0]["owner"], "a");
        assert_eq!(ok(&core, Op::Stats, "{}")["result"]["expiries"], 0);

        let ticked = ok(&core, Op::Tick, "{}");
        assert_eq!(event(&ticked, "lease_expired")["owner"], "a");
        assert_eq!(event(&ticked, "granted")["request_id"], 5);
        let info = ok(&core, Op::KeyInfo, r#"{"key":"k"}"#);
        assert_eq!(info["result"]["holders"][0]["owner"], "b", "{info}");
    }

    /// The only event of `envelope` of type `kind`.
    fn event(envelope: &Value, kind: &str) -> Value {
        let events: Vec<&Value> = envelope["events"]
            .as_array()
            .expect("events")
            .iter()
            .filter(|e| e["event"] == kind)
            .collect();
        assert_eq!(events.len(), 1, "one {kind} event in {envelope}");
        events[0].clone()
    }

    /// Holds `k` for `a` and queues `waiter` behind it; answers the queued request's waiter id.
    fn queue_behind_a(core: &NodeCore, waiter: &str) -> u64 {
        ok(core, Op::Acquire, r#"{"key":"k","owner":"a","lease_ms":60000}"#);
        let q = ok(core, Op::Acquire, waiter);
        q["result"]["queued"]["waiter_id"].as_u64().expect("queued")
    }

    #[test]
    fn a_session_ending_under_a_waiter_answers_session_not_found_naming_it() {
        let core = core();
        let s = ok(&core, Op::SessionCreate, r#"{"owner":"b"}"#);
        let session = s["result"]["session"].as_str().expect("session").to_owned();
        let waiter = json!({ "key": "k", "owner": "b", "wait_ms": 60000, "request_id": 7,
                             "session": session })
        .to_string();
        let waiter_id = queue_behind_a(&core, &waiter);
        let named = json!({ "session": session, "owner": "b" }).to_string();
        let ended = ok(&core, Op::SessionEnd, &named);
        let e = event(&ended, "cancelled");
        assert_eq!((e["waiter_id"].as_u64(), &e["request_id"]), (Some(waiter_id), &json!(7)));
        assert_eq!((&e["reason"], &e["session"]), (&json!("session_ended"), &json!(session)));
        assert_eq!(e["error"]["code"], ErrorCode::SessionNotFound as i32);
        assert_eq!(e["error"]["session"], json!(session), "the real session, not null");
        // The same details a call with the ended session answers.
        let call_err = call(&core, Op::SessionKeepalive as i32, 0, &named).expect_err("ended");
        let details: Value = serde_json::from_str(&call_err.details_json()).expect("json");
        assert_eq!(e["error"], details);
    }

    #[test]
    fn a_session_expiring_under_a_waiter_answers_session_not_found_naming_it() {
        let core = core();
        let s = ok(&core, Op::SessionCreate, r#"{"owner":"b","ttl_ms":200}"#);
        let session = s["result"]["session"].as_str().expect("session").to_owned();
        let waiter = json!({ "key": "k", "owner": "b", "wait_ms": 60000, "session": session });
        queue_behind_a(&core, &waiter.to_string());
        std::thread::sleep(std::time::Duration::from_millis(300));
        let ticked: Value = serde_json::from_str(
            &call(&core, Op::Tick as i32, ALL_PARTITIONS, "{}").expect("tick"),
        )
        .expect("envelope");
        let e = event(&ticked, "cancelled");
        assert_eq!((&e["reason"], &e["session"]), (&json!("session_expired"), &json!(session)));
        assert_eq!(e["error"]["code"], ErrorCode::SessionNotFound as i32);
        assert_eq!(e["error"]["session"], json!(session));
        assert!(event(&ticked, "session_expired").get("error").is_none(), "completes no waiter");
    }

    #[test]
    fn a_wait_that_runs_out_answers_wait_timeout() {
        let core = core();
        queue_behind_a(&core, r#"{"key":"k","owner":"b","wait_ms":20,"request_id":9}"#);
        std::thread::sleep(std::time::Duration::from_millis(60));
        let ticked = ok(&core, Op::Tick, "{}");
        let e = event(&ticked, "wait_timed_out");
        let waited = e["waited_ms"].as_u64().expect("waited_ms");
        assert_eq!(e["error"]["code"], ErrorCode::WaitTimeout as i32);
        let expected = json!({
            "code": 4, "key": "k", "owner": "b", "waited_ms": waited,
            "message": format!("[b] waited {waited}ms for lock [k] without getting it"),
        });
        assert_eq!(e["error"], expected);
    }

    #[test]
    fn a_deadlock_victim_answers_deadlock_with_the_cycle() {
        let core = core();
        ok(&core, Op::Acquire, r#"{"key":"k1","owner":"a"}"#);
        ok(&core, Op::Acquire, r#"{"key":"k2","owner":"b"}"#);
        // The lower priority waiter is the victim: the one already queued, so it gets an event.
        ok(&core, Op::Acquire, r#"{"key":"k2","owner":"a","wait_ms":60000,"priority":0}"#);
        let closing = call(
            &core,
            Op::Acquire as i32,
            0,
            r#"{"key":"k1","owner":"b","wait_ms":60000,"priority":9}"#,
        )
        .expect("the cycle is broken by a victim event");
        let closing: Value = serde_json::from_str(&closing).expect("envelope");
        let e = event(&closing, "deadlock_victim");
        assert_eq!(e["error"]["code"], ErrorCode::Deadlock as i32);
        assert_eq!((&e["error"]["key"], &e["error"]["owner"]), (&e["key"], &e["owner"]));
        assert_eq!(e["error"]["cycle"], e["cycle"]);
    }

    #[test]
    fn a_wait_the_caller_cancels_answers_cancelled_and_a_grant_carries_no_error() {
        let core = core();
        let waiter_id = queue_behind_a(&core, r#"{"key":"k","owner":"b","wait_ms":60000}"#);
        let cancelled = ok(&core, Op::Cancel, &json!({ "waiter_id": waiter_id }).to_string());
        let e = event(&cancelled, "cancelled");
        assert_eq!(e["reason"], "cancelled");
        assert!(e.get("session").is_none(), "no session ended: {e}");
        assert_eq!(e["error"]["code"], ErrorCode::Cancelled as i32);
        assert_eq!(e["error"]["code"], 9);
        assert_eq!((&e["error"]["key"], &e["error"]["owner"]), (&json!("k"), &json!("b")));

        queue_behind_a(&core, r#"{"key":"k","owner":"c","wait_ms":60000}"#);
        let released = ok(&core, Op::Release, r#"{"key":"k","owner":"a"}"#);
        assert!(event(&released, "granted").get("error").is_none());
    }

    #[test]
    fn session_ids_are_128_random_bits_and_only_their_owner_may_use_them() {
        let core = core();
        let id = |v: &Value| v["result"]["session"].as_str().expect("session").to_owned();
        let a = id(&ok(&core, Op::SessionCreate, r#"{"owner":"o"}"#));
        let b = id(&ok(&core, Op::SessionCreate, r#"{"owner":"o"}"#));
        for s in [&a, &b] {
            assert_eq!(s.len(), 32, "{s}");
            assert!(s.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)), "{s}");
        }
        assert_ne!(a, b);
        // Two draws of 128 bits: the chance that they agree in 100 or more bits is below 2^-60.
        let differing = (u128::from_str_radix(&a, 16).expect("hex")
            ^ u128::from_str_radix(&b, 16).expect("hex"))
        .count_ones();
        assert!((28..=100).contains(&differing), "{a} / {b}: {differing} bits differ");
        let named = |s: &str, owner: &str| json!({ "session": s, "owner": owner }).to_string();
        for (op, args) in [
            (Op::SessionKeepalive, named(&a, "intruder")),
            (Op::SessionEnd, named(&a, "intruder")),
            (Op::SessionKeepalive, named(&a[..31], "o")),
        ] {
            let e = call(&core, op as i32, 0, &args).expect_err("refused");
            assert_eq!(e.status(), ErrorCode::SessionNotFound, "{args}");
        }
        let missing = call(&core, Op::SessionEnd as i32, 0, &json!({ "session": a }).to_string());
        assert!(matches!(missing, Err(BridgeError::BadPayload(m)) if m.contains("owner")));
        let lock = json!({ "key": "k", "owner": "o", "session": a }).to_string();
        ok(&core, Op::Acquire, &lock);
        let listed = ok(&core, Op::List, "{}");
        assert_eq!(listed["result"][0]["locks"][0]["session"], json!(true), "{listed}");
        assert!(!listed.to_string().contains(&a), "a listing never shows the id: {listed}");
        let kept = ok(&core, Op::SessionKeepalive, &named(&a, "o"));
        assert_eq!(kept["result"]["session"], json!(a), "the owner's session is still there");
        ok(&core, Op::SessionEnd, &named(&a, "o"));
    }
}
