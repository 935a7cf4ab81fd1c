//! The lock history's drain (docs/API.md "Lock history"): takes the buffered records of the
//! node's partitions (docs/LOCK_CORE.md "Lock history") and writes them as the body of one
//! `_bulk` request of `create` actions, each document in its final shape — the plugin sends the
//! text as it is, naming the data stream, and renames nothing. The documents follow the Elastic
//! Common Schema where it has a field for the thing (`event.action`, `event.duration`,
//! `service.node.name`, ...) and keep the lock's own fields under `lock`; the data stream's
//! template maps them (`LockHistory.java`).

use std::time::{SystemTime, UNIX_EPOCH};

use lock_core::{AuditRecord, Millis, Mode, Partition, Scope};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{decode, partition_id, BridgeError, Ctx, ALL_PARTITIONS};

/// The action line of every document: the plugin's bulk request names the data stream.
const CREATE: &str = "{\"create\":{}}\n";

/// The version of the Elastic Common Schema the documents follow (`ecs.version`, which ECS
/// requires of every event). The ECS fields they use (`@timestamp`, `event.*`,
/// `service.node.name`) have kept their meaning since ECS 1.x.
const ECS_VERSION: &str = "9.4.0";
/// `event.module` and `event.dataset`, as ECS names the source and which of its data sets.
const MODULE: &str = "locks";
const DATASET: &str = "locks.history";
/// ECS durations are in nanoseconds; the core measures milliseconds.
const NANOS_PER_MILLI: u64 = 1_000_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DrainArgs {
    /// Most documents taken in this call (the rest stay buffered for the next).
    max: usize,
}

/// One history document, with the fields of docs/API.md "Lock history": the Elastic Common
/// Schema's where one fits (`@timestamp`, `ecs`, `event`, `service.node.name`), the lock's own
/// under `lock`; absent ones left out. Serialized as nested objects, as ECS documents are.
#[derive(Serialize)]
struct Document<'a> {
    #[serde(rename = "@timestamp")]
    timestamp: u64,
    ecs: Ecs,
    event: Event<'a>,
    lock: Lock<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<Service<'a>>,
}

#[derive(Serialize)]
struct Ecs {
    version: &'static str,
}

/// ECS `event.*`: what happened (`action`), why (`reason`) and, for the end of a hold, how long
/// the lock was held (`duration`, nanoseconds).
#[derive(Serialize)]
struct Event<'a> {
    /// ECS `event.kind` `event`: something happened (not a metric, not a state).
    kind: &'static str,
    module: &'static str,
    dataset: &'static str,
    action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

/// The lock's own fields (`lock.*`: no ECS field set describes a lock).
#[derive(Serialize)]
struct Lock<'a> {
    key: &'a str,
    scope: Scope,
    owner: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<Mode>,
    #[serde(skip_serializing_if = "is_zero")]
    fencing_token: u64,
    partition: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    wait: Option<Wait>,
}

/// `lock.wait.duration`: how long a waiter waited, in nanoseconds as ECS durations are.
#[derive(Serialize)]
struct Wait {
    duration: u64,
}

/// ECS `service.node.name`: the Elasticsearch node that owned the partition.
#[derive(Serialize)]
struct Service<'a> {
    node: ServiceNode<'a>,
}

#[derive(Serialize)]
struct ServiceNode<'a> {
    name: &'a str,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Milliseconds as ECS nanoseconds (saturating: a hold of 584 years is the most it says).
fn nanos(ms: Millis) -> u64 {
    ms.saturating_mul(NANOS_PER_MILLI)
}

/// Drains the addressed partition, or every partition with [`ALL_PARTITIONS`], up to `max`
/// documents in all: `{"bulk": "<ndjson>", "documents": <n>}`.
pub(super) fn drain(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let args: DrainArgs = decode(args)?;
    let partitions = if cx.partition == ALL_PARTITIONS {
        cx.core.partitions()
    } else {
        let id = partition_id(cx.partition)?;
        vec![(id, cx.core.partition(id)?)]
    };
    let clock = Clock { wall_ms: wall_clock_ms(), now: cx.now };
    let mut bulk = String::new();
    let mut documents = 0;
    for (id, p) in partitions {
        if documents >= args.max {
            break;
        }
        cx.current = Some(id); // a panic while draining fails this partition
        documents += write_documents(&mut bulk, &p, id, args.max - documents, cx, &clock)?;
    }
    cx.current = None;
    Ok(json!({ "bulk": bulk, "documents": documents }).to_string())
}

/// The wall clock at the drain, and the core's clock at the same moment: a record's
/// `@timestamp` is the wall clock less the time since the record.
struct Clock {
    wall_ms: u64,
    now: Millis,
}

impl Clock {
    fn timestamp(&self, at: Millis) -> u64 {
        self.wall_ms.saturating_sub(self.now.saturating_sub(at))
    }
}

fn write_documents(
    bulk: &mut String,
    p: &Partition,
    id: u32,
    max: usize,
    cx: &Ctx<'_>,
    clock: &Clock,
) -> Result<usize, BridgeError> {
    let records = p.drain_audit(max);
    for r in &records {
        bulk.push_str(CREATE);
        let doc = document(r, id, cx.core.node_name(), clock);
        let line = serde_json::to_string(&doc).map_err(|e| BridgeError::Internal(e.to_string()))?;
        bulk.push_str(&line);
        bulk.push('\n');
    }
    Ok(records.len())
}

fn document<'a>(
    r: &'a AuditRecord,
    partition: u32,
    node: Option<&'a str>,
    clock: &Clock,
) -> Document<'a> {
    Document {
        timestamp: clock.timestamp(r.at),
        ecs: Ecs { version: ECS_VERSION },
        event: Event {
            kind: "event",
            module: MODULE,
            dataset: DATASET,
            action: r.event.name(),
            duration: r.held_ms.map(nanos),
            reason: r.reason.as_deref(),
        },
        lock: Lock {
            key: &r.key,
            scope: r.scope,
            owner: &r.owner,
            mode: r.mode,
            fencing_token: r.token,
            partition,
            wait: r.waited_ms.map(|ms| Wait { duration: nanos(ms) }),
        },
        service: node.map(|name| Service { node: ServiceNode { name } }),
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
fn wall_clock_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use lock_core::Config;
    use serde_json::Value;

    use crate::node::{NodeConfig, NodeCore};
    use crate::ops::{call, Op, ALL_PARTITIONS};

    fn core(audit_capacity: usize) -> NodeCore {
        let config = Config { audit_capacity, ..Config::default() };
        NodeCore::new(NodeConfig {
            config,
            partitions: None,
            node_name: Some("n1".into()),
            ..NodeConfig::default()
        })
        .expect("core")
    }

    fn drain(core: &NodeCore, max: usize) -> Value {
        let args = format!(r#"{{"max":{max}}}"#);
        let text = call(core, Op::AuditDrain as i32, ALL_PARTITIONS, &args).expect("drain");
        let envelope: Value = serde_json::from_str(&text).expect("json");
        envelope["result"].clone()
    }

    fn lines(bulk: &Value) -> Vec<Value> {
        let text = bulk.as_str().expect("text");
        assert!(text.is_empty() || text.ends_with('\n'), "a bulk body ends with a newline");
        text.lines().map(|l| serde_json::from_str(l).expect("line")).collect()
    }

    #[test]
    fn a_drain_answers_create_actions_with_documents_in_their_final_shape() {
        let core = core(100);
        let before = super::wall_clock_ms();
        call(&core, Op::Acquire as i32, 0, r#"{"key":"k","owner":"a"}"#).expect("acquire");
        call(&core, Op::ForceRelease as i32, 0, r#"{"key":"k","reason":"stuck"}"#).expect("force");
        let result = drain(&core, 1);
        assert_eq!(result["documents"], 1, "{result}");
        let l = lines(&result["bulk"]);
        assert_eq!(l[0], serde_json::json!({"create": {}}));
        let g = &l[1];
        let token = g["lock"]["fencing_token"].as_u64().expect("token");
        let ts = g["@timestamp"].as_u64().expect("@timestamp");
        assert!(ts >= before && ts <= super::wall_clock_ms(), "{ts} not within the test");
        let expected = serde_json::json!({
            "@timestamp": ts,
            "ecs": {"version": super::ECS_VERSION},
            "event": {"kind": "event", "module": "locks", "dataset": "locks.history", "action": "granted"},
            "lock": {"key": "k", "scope": "key", "owner": "a", "mode": "exclusive",
                     "fencing_token": token, "partition": 0},
            "service": {"node": {"name": "n1"}},
        });
        assert_eq!(g, &expected, "a grant at once: no duration, no wait, no reason");
        assert!(token > 0, "{g}");

        let rest = drain(&core, 100);
        let l = lines(&rest["bulk"]);
        assert_eq!(rest["documents"], 1);
        let f = &l[1]["event"];
        assert_eq!((&f["action"], &f["reason"]), (&"force_released".into(), &"stuck".into()));
        let held = f["duration"].as_u64().expect("event.duration, the hold");
        assert_eq!(held % super::NANOS_PER_MILLI, 0, "whole milliseconds in nanoseconds: {held}");
        assert_eq!(drain(&core, 100)["documents"], 0);
    }

    #[test]
    fn a_granted_waiter_says_how_long_it_waited_in_nanoseconds() {
        let core = core(100);
        call(&core, Op::Acquire as i32, 0, r#"{"key":"k","owner":"a"}"#).expect("acquire");
        let queued = r#"{"key":"k","owner":"b","wait_ms":60000,"request_id":7}"#;
        call(&core, Op::Acquire as i32, 0, queued).expect("queue");
        call(&core, Op::Release as i32, 0, r#"{"key":"k","owner":"a"}"#).expect("release");
        let docs = lines(&drain(&core, 100)["bulk"]);
        let b = docs
            .iter()
            .find(|d| d["lock"]["owner"] == "b" && d["event"]["action"] == "granted")
            .expect("b's grant");
        let waited = b["lock"]["wait"]["duration"].as_u64().expect("lock.wait.duration");
        assert_eq!(waited % super::NANOS_PER_MILLI, 0, "{b}");
        assert!(b["event"].get("duration").is_none(), "a grant ends no hold: {b}");
    }

    #[test]
    fn durations_saturate_rather_than_wrap() {
        assert_eq!(super::nanos(u64::MAX / 1_000), u64::MAX);
        assert_eq!(super::nanos(412), 412_000_000);
    }

    #[test]
    fn with_the_history_off_a_drain_answers_nothing_and_stats_count_the_drops() {
        let off = core(0);
        call(&off, Op::Acquire as i32, 0, r#"{"key":"k","owner":"a"}"#).expect("acquire");
        assert_eq!(drain(&off, 100)["documents"], 0);

        let tiny = core(1);
        call(&tiny, Op::Acquire as i32, 0, r#"{"key":"k","owner":"a"}"#).expect("acquire");
        call(&tiny, Op::Release as i32, 0, r#"{"key":"k","owner":"a"}"#).expect("release");
        let stats: Value = serde_json::from_str(
            &call(&tiny, Op::Stats as i32, ALL_PARTITIONS, "{}").expect("stats"),
        )
        .expect("json");
        let s = &stats["result"];
        assert_eq!(
            (&s["audit_recorded"], &s["audit_dropped"], &s["audit_buffered"]),
            (&1.into(), &1.into(), &1.into()),
            "{stats}"
        );
    }
}
