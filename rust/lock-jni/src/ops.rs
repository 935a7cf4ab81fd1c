//! Every bridge operation as "op code + JSON in, JSON envelope out", shared by the JNI and the
//! C entry points so that both speak exactly the same protocol.
//!
//! A successful call answers an envelope:
//!
//! ```json
//! {"result": <the op's answer>, "events": [<lock_core::Event>...], "tick_in_ms": <ms> | null}
//! ```
//!
//! `events` are what the call caused besides its own answer (a release grants the next waiter,
//! a lease ran out); `tick_in_ms` is when the caller must call [`Op::Tick`] next so that leases
//! and waits expire on time with no request arriving. Failures become a [`BridgeError`], whose
//! [`BridgeError::details_json`] is the structured form Java turns into an Elasticsearch
//! exception. Events a failed call caused stay queued until the next call or tick.

use lock_core::{
    AcquireRequest, Config, DowngradeRequest, ErrorCode, Event, ListFilter, LockError,
    MultiAcquireRequest, MultiReleaseRequest, ReleaseRequest, RenewRequest, Scope,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::handle::HandleError;
use crate::node::NodeCore;

/// Operation codes of [`call`]; stable numbers shared with `org.eslm.bridge.NativeOp`.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Acquire = 1,
    Release = 2,
    Renew = 3,
    AcquireMany = 4,
    ReleaseMany = 5,
    Cancel = 6,
    SessionCreate = 7,
    SessionKeepalive = 8,
    SessionEnd = 9,
    KeyInfo = 10,
    List = 11,
    Stats = 12,
    Diagnostics = 13,
    ForceRelease = 14,
    Tick = 15,
    Configure = 16,
    Downgrade = 17,
    OpenPartition = 18,
    ClosePartition = 19,
}

impl Op {
    /// The op for a code, or an invalid-argument error naming `op`.
    pub fn from_code(code: i32) -> Result<Op, BridgeError> {
        use Op::*;
        const ALL: [Op; 19] = [
            Acquire,
            Release,
            Renew,
            AcquireMany,
            ReleaseMany,
            Cancel,
            SessionCreate,
            SessionKeepalive,
            SessionEnd,
            KeyInfo,
            List,
            Stats,
            Diagnostics,
            ForceRelease,
            Tick,
            Configure,
            Downgrade,
            OpenPartition,
            ClosePartition,
        ];
        ALL.into_iter()
            .find(|op| *op as i32 == code)
            .ok_or_else(|| LockError::invalid("op", format!("unknown bridge op [{code}]")).into())
    }
}

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

    /// Structured details: `{"code", "message", ...}` plus the outcome's own fields (`field`,
    /// `key`, `holders`, `owner`, `cycle`, `session`, `limit`, `retry_after_ms`, ...).
    pub fn details_json(&self) -> String {
        let mut v = json!({ "code": self.code(), "message": self.message() });
        if let BridgeError::Lock(e) = self {
            let extra = match e {
                LockError::InvalidArgument { field, reason } => {
                    json!({ "field": field, "reason": reason })
                }
                LockError::Conflict { key, holders } => json!({ "key": key, "holders": holders }),
                LockError::NotHeld { key, owner } => json!({ "key": key, "owner": owner }),
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
                #[allow(unreachable_patterns)]
                _ => json!({}),
            };
            if let (Value::Object(target), Value::Object(source)) = (&mut v, extra) {
                target.extend(source);
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

fn decode<T: DeserializeOwned>(json: &str) -> Result<T, BridgeError> {
    serde_json::from_str(json).map_err(|e| BridgeError::BadPayload(e.to_string()))
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String, BridgeError> {
    serde_json::to_string(value).map_err(|e| BridgeError::Internal(e.to_string()))
}

fn to_value<T: Serialize>(value: &T) -> Result<Value, BridgeError> {
    serde_json::to_value(value).map_err(|e| BridgeError::Internal(e.to_string()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelArgs {
    waiter_id: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionCreateArgs {
    owner: String,
    #[serde(default)]
    ttl_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionArgs {
    session: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyArgs {
    key: String,
    #[serde(default)]
    scope: Scope,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenArgs {
    epoch: u64,
    #[serde(default)]
    grace_ms: u64,
    #[serde(default)]
    snapshot: Option<lock_core::PartitionSnapshot>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CloseArgs {
    #[serde(default)]
    export: bool,
}

/// Which partition an op addresses; node-wide ops ignore it.
pub const ALL_PARTITIONS: i32 = -1;

/// Runs `op` with `args_json` on `partition` of `core` and answers the envelope.
pub fn call(
    core: &NodeCore,
    op: i32,
    partition: i32,
    args_json: &str,
) -> Result<String, BridgeError> {
    let op = Op::from_code(op)?;
    let now = core.now();
    let one = || -> Result<_, BridgeError> { Ok(core.partition(partition_id(partition)?)?) };
    let mut touched = Vec::new();
    let result = match op {
        Op::Acquire => {
            let p = one()?;
            let r = to_json(&p.acquire(&decode::<AcquireRequest>(args_json)?, now)?)?;
            touched.push(p);
            r
        }
        Op::AcquireMany => {
            let p = one()?;
            let r = to_json(&p.acquire_many(&decode::<MultiAcquireRequest>(args_json)?, now)?)?;
            touched.push(p);
            r
        }
        Op::Release => {
            let p = one()?;
            let r = to_json(&p.release_at(&decode::<ReleaseRequest>(args_json)?, now)?)?;
            touched.push(p);
            r
        }
        Op::ReleaseMany => {
            let p = one()?;
            let r = to_json(&p.release_many(&decode::<MultiReleaseRequest>(args_json)?, now)?)?;
            touched.push(p);
            r
        }
        Op::Renew => {
            let p = one()?;
            let r = to_json(&p.renew(&decode::<RenewRequest>(args_json)?, now)?)?;
            touched.push(p);
            r
        }
        Op::Downgrade => {
            let p = one()?;
            let r = to_json(&p.downgrade(&decode::<DowngradeRequest>(args_json)?, now)?)?;
            touched.push(p);
            r
        }
        Op::Cancel => {
            let p = one()?;
            p.cancel(decode::<CancelArgs>(args_json)?.waiter_id, now)?;
            touched.push(p);
            r#"{"cancelled":true}"#.to_owned()
        }
        Op::ForceRelease => {
            let p = one()?;
            let args: KeyArgs = decode(args_json)?;
            let released = p.force_release(&args.key, args.scope, now)?;
            if released.is_empty() {
                return Err(LockError::NotHeld { key: args.key, owner: "anyone".into() }.into());
            }
            tracing::warn!(key = %args.key, ?released, "lock force-released by an administrator");
            touched.push(p);
            to_json(&released)?
        }
        Op::SessionCreate => {
            let p = one()?;
            let args: SessionCreateArgs = decode(args_json)?;
            let r = to_json(&p.create_session(&args.owner, args.ttl_ms, now)?)?;
            touched.push(p);
            r
        }
        Op::SessionKeepalive => {
            let p = one()?;
            let r = to_json(&p.keepalive(&decode::<SessionArgs>(args_json)?.session, now)?)?;
            touched.push(p);
            r
        }
        Op::SessionEnd => {
            let p = one()?;
            let r = to_json(&p.end_session(&decode::<SessionArgs>(args_json)?.session, now)?)?;
            touched.push(p);
            r
        }
        Op::KeyInfo => {
            let p = one()?;
            let args: KeyArgs = decode(args_json)?;
            p.advance(now);
            let r = to_json(&p.key_info_scoped(&args.key, args.scope, now)?)?;
            touched.push(p);
            r
        }
        Op::List => {
            let filter: ListFilter = decode(args_json)?;
            let mut locks = Vec::new();
            for (id, p) in core.partitions() {
                p.advance(now);
                locks.extend(p.list_locks(&filter).into_iter().map(|l| (id, l)));
                touched.push(p);
            }
            let size = if filter.size == 0 { 100 } else { filter.size };
            locks.sort_by(|(_, a), (_, b)| a.key.cmp(&b.key).then(a.owner.cmp(&b.owner)));
            locks.truncate(size);
            let mut listed = Vec::with_capacity(locks.len());
            for (id, lock) in &locks {
                let mut v = to_value(lock)?;
                v["partition"] = json!(id); // sessions are named per partition outside the core
                listed.push(v);
            }
            Value::Array(listed).to_string()
        }
        Op::Stats => {
            let mut partitions = Vec::new();
            for (id, p) in core.partitions() {
                p.advance(now);
                partitions.push((id, p.stats()));
                touched.push(p);
            }
            node_stats(&partitions)?.to_string()
        }
        Op::Diagnostics => diagnostics(core, now)?.to_string(),
        Op::Tick => {
            if partition == ALL_PARTITIONS {
                for (_, p) in core.partitions() {
                    p.advance(now);
                    touched.push(p);
                }
            } else {
                let p = one()?;
                p.advance(now);
                touched.push(p);
            }
            format!(r#"{{"now_ms":{now}}}"#)
        }
        Op::OpenPartition => {
            let id = partition_id(partition)?;
            let args: OpenArgs = decode(args_json)?;
            core.open_partition(id, args.epoch, args.grace_ms, args.snapshot.as_ref())?;
            touched.push(core.partition(id)?);
            json!({ "id": id, "epoch": core.partition(id)?.epoch(), "grace": core.in_grace(id) })
                .to_string()
        }
        Op::ClosePartition => {
            let args: CloseArgs = decode(args_json)?;
            let snapshot = core.close_partition(partition_id(partition)?, args.export);
            json!({ "snapshot": to_value(&snapshot)? }).to_string()
        }
        Op::Configure => {
            core.set_config(decode::<Config>(args_json)?)?;
            to_json(&core.config())?
        }
    };
    let mut events: Vec<Event> = Vec::new();
    for p in &touched {
        events.extend(p.drain_events());
    }
    // The envelope is written as text around the already-serialized result: building a
    // `serde_json::Value` tree first cost more than the lock operation itself (JMH, RESULTS.md).
    let events = to_json(&events)?;
    let mut envelope = String::with_capacity(result.len() + events.len() + 48);
    envelope.push_str("{\"result\":");
    envelope.push_str(&result);
    envelope.push_str(",\"events\":");
    envelope.push_str(&events);
    envelope.push_str(",\"tick_in_ms\":");
    match core.next_deadline_in() {
        Some(ms) => envelope.push_str(&ms.to_string()),
        None => envelope.push_str("null"),
    }
    envelope.push('}');
    Ok(envelope)
}

/// The node's lock statistics as `GET /_locks/_stats` shows them: counters and gauges summed
/// over the node's partitions; time percentiles are the largest partition's (an upper bound,
/// exact with one partition); `partitions` keeps the per-partition detail.
fn node_stats(partitions: &[(u32, lock_core::PartitionStats)]) -> Result<Value, BridgeError> {
    let sum = |f: &dyn Fn(&lock_core::PartitionStats) -> u64| -> u64 {
        partitions.iter().map(|(_, s)| f(s)).sum()
    };
    let times = |f: &dyn Fn(&lock_core::PartitionStats) -> &lock_core::HistogramSummary| {
        let max = |g: &dyn Fn(&lock_core::HistogramSummary) -> u64| {
            partitions.iter().map(|(_, s)| g(f(s))).max().unwrap_or(0)
        };
        json!({
            "count": partitions.iter().map(|(_, s)| f(s).count).sum::<u64>(),
            "p50": max(&|h| h.p50_ms),
            "p90": max(&|h| h.p90_ms),
            "p99": max(&|h| h.p99_ms),
            "max": max(&|h| h.max_ms),
        })
    };
    let mut hot: Vec<lock_core::HotKey> =
        partitions.iter().flat_map(|(_, s)| s.hottest_keys.iter().cloned()).collect();
    hot.sort_by_key(|h| std::cmp::Reverse(h.contended));
    hot.truncate(10);
    let hot = hot_keys(&hot);
    let detail: Vec<Value> = partitions
        .iter()
        .map(|(id, s)| json!({ "id": id, "epoch": s.epoch, "held": s.held_locks, "waiting": s.waiting }))
        .collect();
    Ok(json!({
        "acquires": sum(&|s| s.counters.acquires),
        "grants": sum(&|s| s.counters.immediate_grants + s.counters.grants_after_wait),
        "reentrant_grants": sum(&|s| s.counters.reentrant_grants),
        "queued": sum(&|s| s.counters.queued),
        "conflicts": sum(&|s| s.counters.conflicts),
        "timeouts": sum(&|s| s.counters.wait_timeouts),
        "expiries": sum(&|s| s.counters.lease_expiries),
        "deadlocks": sum(&|s| s.counters.deadlocks),
        "cancelled": sum(&|s| s.counters.cancelled),
        "releases": sum(&|s| s.counters.releases),
        "renewals": sum(&|s| s.counters.renewals),
        "limit_rejections": sum(&|s| s.counters.limit_rejections),
        "held": sum(&|s| s.held_locks as u64),
        "waiting": sum(&|s| s.waiting as u64),
        "sessions": sum(&|s| s.sessions as u64),
        "wait_time_ms": times(&|s| &s.wait_time),
        "hold_time_ms": times(&|s| &s.hold_time),
        "hot_keys": hot,
        "partitions": detail,
    }))
}

/// Hottest keys as the API shows them: `acquires` counts the key's contended acquire requests
/// (conflicts and queued), over-stated by at most `error` (Space-Saving sketch).
fn hot_keys(hot: &[lock_core::HotKey]) -> Vec<Value> {
    hot.iter().map(|h| json!({ "key": h.key, "acquires": h.contended, "error": h.error })).collect()
}

fn partition_id(partition: i32) -> Result<u32, BridgeError> {
    u32::try_from(partition).map_err(|_| {
        LockError::invalid("partition", format!("must be a partition id, got [{partition}]")).into()
    })
}

/// Node-local facts for `GET /_locks/_node/diagnostics`.
fn diagnostics(core: &NodeCore, now: u64) -> Result<Value, BridgeError> {
    let mut partitions = Vec::new();
    let mut oldest = Vec::new();
    let mut hot = Vec::new();
    for (id, p) in core.partitions() {
        p.advance(now);
        let stats = p.stats();
        partitions.push(json!({
            "id": id,
            "epoch": stats.epoch,
            "state": if core.in_grace(id) { "grace" } else { "active" },
            "held": stats.held_locks,
            "held_keys": stats.held_keys,
            "waiting": stats.waiting,
            "sessions": stats.sessions,
        }));
        for w in p.oldest_waiters(10) {
            oldest.push(json!({ "partition": id, "waiter": to_value(&w)? }));
        }
        hot.extend(stats.hottest_keys);
    }
    oldest.sort_by_key(|w| std::cmp::Reverse(w["waiter"]["waited_ms"].as_u64().unwrap_or(0)));
    oldest.truncate(10);
    hot.sort_by_key(|h| std::cmp::Reverse(h.contended));
    hot.truncate(10);
    let hot = hot_keys(&hot);
    Ok(json!({
        "core_version": lock_core::VERSION,
        "bridge_version": crate::BRIDGE_VERSION,
        "uptime_ms": now,
        "config": to_value(&core.config())?,
        "partitions": partitions,
        "oldest_waiters": oldest,
        "hot_keys": hot,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::NodeConfig;

    fn core() -> NodeCore {
        NodeCore::new(NodeConfig { config: Config::default(), partitions: None }).expect("core")
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

        let new = NodeCore::new(NodeConfig { config: Config::default(), partitions: Some(vec![]) })
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
}
