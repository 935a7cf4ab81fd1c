//! The lock history's drain (docs/API.md "Lock history"): takes the buffered records of the
//! node's partitions (docs/LOCK_CORE.md "Lock history") and writes them as the body of one
//! `_bulk` request of `create` actions, each document in its final shape — the plugin sends the
//! text as it is, naming the data stream, and renames nothing.

use std::time::{SystemTime, UNIX_EPOCH};

use lock_core::{AuditRecord, Millis, Mode, Partition, Scope};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{decode, partition_id, BridgeError, Ctx, ALL_PARTITIONS};

/// The action line of every document: the plugin's bulk request names the data stream.
const CREATE: &str = "{\"create\":{}}\n";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DrainArgs {
    /// Most documents taken in this call (the rest stay buffered for the next).
    max: usize,
}

/// One history document: the fields docs/API.md "Lock history" lists, absent ones left out.
#[derive(Serialize)]
struct Document<'a> {
    #[serde(rename = "@timestamp")]
    timestamp: u64,
    event: &'static str,
    key: &'a str,
    scope: Scope,
    owner: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<Mode>,
    #[serde(skip_serializing_if = "is_zero")]
    token: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    waited_ms: Option<Millis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    held_ms: Option<Millis>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    partition: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<&'a str>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
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
        event: r.event.name(),
        key: &r.key,
        scope: r.scope,
        owner: &r.owner,
        mode: r.mode,
        token: r.token,
        waited_ms: r.waited_ms,
        held_ms: r.held_ms,
        reason: r.reason.as_deref(),
        partition,
        node,
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
        assert_eq!(
            (&g["event"], &g["key"], &g["owner"]),
            (&"granted".into(), &"k".into(), &"a".into())
        );
        assert_eq!(
            (&g["scope"], &g["mode"], &g["node"], &g["partition"]),
            (&"key".into(), &"exclusive".into(), &"n1".into(), &0.into())
        );
        assert!(g["token"].as_u64().expect("token") > 0, "{g}");
        let ts = g["@timestamp"].as_u64().expect("@timestamp");
        assert!(ts >= before && ts <= super::wall_clock_ms(), "{ts} not within the test");
        assert!(g.get("reason").is_none() && g.get("held_ms").is_none(), "{g}");

        let rest = drain(&core, 100);
        let l = lines(&rest["bulk"]);
        assert_eq!(rest["documents"], 1);
        assert_eq!((&l[1]["event"], &l[1]["reason"]), (&"force_released".into(), &"stuck".into()));
        assert!(l[1]["held_ms"].as_u64().is_some());
        assert_eq!(drain(&core, 100)["documents"], 0);
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
