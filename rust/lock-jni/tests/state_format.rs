//! The state documents' formats through the bridge (docs/ARCHITECTURE.md, "Formats and
//! versions"): the state log a node of format 1 (commit d1df89a, before formats were numbered)
//! wrote is read by this build with every holder and token; this build writes format 1 for a
//! peer that reads only that, the current format otherwise; and a newer format is refused with
//! both numbers named.

use std::path::PathBuf;

use eslm::node::{NodeConfig, NodeCore};
use eslm::ops::{call, Op};
use lock_core::{OLDEST_STATE_FORMAT, STATE_FORMAT};
use serde_json::{json, Value};

fn node() -> NodeCore {
    NodeCore::new(NodeConfig {
        config: Default::default(),
        partitions: Some(vec![]),
        node_name: None,
        ..NodeConfig::default()
    })
    .expect("core")
}

fn ok(core: &NodeCore, op: Op, args: &Value) -> Value {
    let envelope = call(core, op as i32, 0, &args.to_string()).expect("call");
    serde_json::from_str::<Value>(&envelope).expect("envelope")["result"].clone()
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../java/src/test/resources/org/eslm/replication/format1")
}

/// The records of a state log (java `cluster.StateLogFile`: a 16-byte header, then per record
/// its length, two checksums and the payload). The checksums are the Java side's to check.
fn records(log: &[u8]) -> Vec<String> {
    assert_eq!(&log[..8], b"ESLMLOG\n", "a state log");
    let mut out = Vec::new();
    let mut at = 16;
    while at < log.len() {
        let len = u32::from_be_bytes(log[at..at + 4].try_into().expect("4 bytes")) as usize;
        let payload = &log[at + 12..at + 12 + len];
        out.push(String::from_utf8(payload.to_vec()).expect("UTF-8"));
        at += 12 + len;
    }
    out
}

fn field(e: &eslm::ops::BridgeError) -> (String, String) {
    let d: Value = serde_json::from_str(&e.details_json()).expect("details");
    (d["field"].as_str().unwrap_or_default().to_owned(), e.message())
}

#[test]
fn a_state_log_of_format_1_is_read_with_every_holder_and_token() {
    let log = std::fs::read(fixture().join("locks-batches.log")).expect("the fixture");
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture().join("expected.json")).expect("expected.json"),
    )
    .expect("json");
    let batches = records(&log);
    assert!(batches.len() > 10, "{} records", batches.len());
    assert!(batches.iter().all(|b| !b.contains("\"format\"")), "format 1 has no format member");

    let core = node();
    for batch in &batches {
        let info = ok(&core, Op::StandbyApply, &serde_json::from_str(batch).expect("json"));
        assert_eq!(info["applied"], true, "{batch}");
    }
    ok(&core, Op::OpenPartition, &json!({"epoch": 2, "from_standby": true, "replicated": true}));
    let listed = ok(&core, Op::List, &json!({"size": 1000}));
    let got: Vec<Value> = listed[0]["locks"]
        .as_array()
        .expect("locks")
        .iter()
        .map(|l| {
            json!({"key": l["key"], "scope": l["scope"], "owner": l["owner"], "mode": l["mode"],
                   "fencing_token": l["fencing_token"], "session": l["session"]})
        })
        .collect();
    assert_eq!(Value::Array(got), expected["locks"]);
    let session = &expected["sessions"][0];
    let keepalive = ok(
        &core,
        Op::SessionKeepalive,
        &json!({"session": session["session"], "owner": session["owner"]}),
    );
    assert_eq!(keepalive["ttl_ms"], session["ttl_ms"], "{keepalive}");
    // The token counter continued: a new grant's token is above every restored one.
    let g = ok(&core, Op::Acquire, &json!({"key": "new", "owner": "n"}));
    let newest = expected["locks"]
        .as_array()
        .expect("locks")
        .iter()
        .filter_map(|l| l["fencing_token"].as_u64())
        .max();
    assert!(g["granted"]["fencing_token"].as_u64() > newest, "{g}");
}

/// The batch `TakeBatch` answers, parsed (the plugin ships its text unread).
fn taken(core: &NodeCore, args: &Value) -> Value {
    serde_json::from_str(ok(core, Op::TakeBatch, args)["batch"].as_str().expect("batch text"))
        .expect("batch json")
}

#[test]
fn this_build_writes_format_1_for_a_peer_of_format_1_and_its_own_otherwise() {
    let core = node();
    ok(&core, Op::OpenPartition, &json!({"epoch": 1, "replicated": true}));
    let full_v1 = ok(&core, Op::ExportFull, &json!({"format": OLDEST_STATE_FORMAT}));
    assert!(full_v1["snapshot"].get("format").is_none(), "{full_v1}");
    let full = ok(&core, Op::ExportFull, &json!({}));
    assert_eq!(full["snapshot"]["format"], STATE_FORMAT);
    ok(&core, Op::Acquire, &json!({"key": "a", "owner": "w", "lease_ms": 60000}));
    let delta_v1 = taken(&core, &json!({"format": 1}));
    assert!(delta_v1["delta"].get("format").is_none(), "{delta_v1}");
    ok(&core, Op::Acquire, &json!({"key": "b", "owner": "w", "lease_ms": 60000}));
    let text =
        ok(&core, Op::TakeBatch, &json!({}))["batch"].as_str().expect("batch text").to_owned();
    let first = format!("{{\"delta\":{{\"format\":{STATE_FORMAT},");
    assert!(text.starts_with(&first), "the format is the first member: {text}");
    let delta: Value = serde_json::from_str(&text).expect("batch json");

    // A replica of either format applies both (a log may hold records of both).
    let replica = node();
    for batch in [json!({"full": full_v1}), delta_v1, delta] {
        assert_eq!(ok(&replica, Op::StandbyApply, &batch)["applied"], true, "{batch}");
    }
    let standby = ok(&replica, Op::StandbyExport, &json!({}));
    assert_eq!(standby["full"]["snapshot"]["locks"].as_array().map(Vec::len), Some(2));

    let handed = ok(&core, Op::ClosePartition, &json!({"export": true, "format": 1}));
    assert!(handed["snapshot"].get("format").is_none(), "{handed}");
    let next = node();
    ok(&next, Op::OpenPartition, &json!({"epoch": 2, "snapshot": handed["snapshot"]}));
    assert_eq!(ok(&next, Op::List, &json!({}))[0]["locks"].as_array().map(Vec::len), Some(2));

    let e = call(&next, Op::TakeBatch as i32, 0, &json!({"format": STATE_FORMAT + 1}).to_string())
        .expect_err("a format this build cannot write");
    assert_eq!(field(&e).0, "format");
}

#[test]
fn a_newer_format_is_refused_naming_both_numbers_and_changes_nothing() {
    let primary = node();
    ok(&primary, Op::OpenPartition, &json!({"epoch": 1, "replicated": true}));
    ok(&primary, Op::Acquire, &json!({"key": "a", "owner": "w", "lease_ms": 60000}));
    let mut full = ok(&primary, Op::ExportFull, &json!({}));
    let newer = STATE_FORMAT + 1;
    full["snapshot"]["format"] = json!(newer);
    // A newer writer's member this build does not know: still reported as the newer format.
    full["snapshot"]["locks"][0]["tombstone"] = json!(true);
    let replica = node();
    for args in [json!({"full": full.clone()}), json!({"catch_up": full.clone()})] {
        let e = call(&replica, Op::StandbyApply as i32, 0, &args.to_string()).expect_err("newer");
        let (f, message) = field(&e);
        assert_eq!(f, "format", "{message}");
        assert!(
            message.contains(&format!("[{newer}]"))
                && message.contains(&format!("[{STATE_FORMAT}]")),
            "{message}"
        );
    }
    assert_eq!(
        ok(&replica, Op::StandbyExport, &json!({}))["full"],
        Value::Null,
        "nothing installed"
    );

    let e = call(
        &replica,
        Op::OpenPartition as i32,
        0,
        &json!({"epoch": 2, "snapshot": full["snapshot"]}).to_string(),
    )
    .expect_err("a newer hand-over");
    assert_eq!(field(&e).0, "format");

    // An unknown member in a format this build knows is damage: refused, never skipped.
    full["snapshot"]["format"] = json!(STATE_FORMAT);
    let e = call(&replica, Op::StandbyApply as i32, 0, &json!({"full": full}).to_string())
        .expect_err("unknown member");
    assert!(field(&e).1.contains("tombstone"), "{}", field(&e).1);
}
