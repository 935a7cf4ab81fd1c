//! The replication ops through the bridge's JSON protocol, as the plugin drives them: a primary
//! core's batches applied to a replica core's standby, then the replica opened from its standby
//! in the next epoch (docs/ARCHITECTURE.md, "Replication").

use eslm::node::{NodeConfig, NodeCore};
use eslm::ops::{call, Op};
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

fn ok(core: &NodeCore, op: Op, args: Value) -> Value {
    let envelope = call(core, op as i32, 0, &args.to_string()).expect("call");
    serde_json::from_str::<Value>(&envelope).expect("envelope")["result"].clone()
}

fn err_field(core: &NodeCore, op: Op, args: Value) -> String {
    let e = call(core, op as i32, 0, &args.to_string()).expect_err("must fail");
    serde_json::from_str::<Value>(&e.details_json()).expect("details")["field"].to_string()
}

/// Ships what the primary changed to the replica, the way the plugin's batch does.
fn ship(primary: &NodeCore, replica: &NodeCore) -> Value {
    ok(replica, Op::StandbyApply, batch(primary, false))
}

/// The primary's next batch as the plugin ships it (`TakeBatch`'s text, not read by Java).
fn batch(primary: &NodeCore, full: bool) -> Value {
    let taken = ok(primary, Op::TakeBatch, json!({ "full": full }));
    serde_json::from_str(taken["batch"].as_str().expect("batch text")).expect("batch json")
}

#[test]
fn a_replica_promoted_from_its_standby_keeps_holders_and_issues_higher_tokens() {
    let (primary, replica) = (node(), node());
    ok(&primary, Op::OpenPartition, json!({"epoch": 3, "replicated": true}));
    assert_eq!(ok(&replica, Op::StandbyApply, batch(&primary, true))["applied"], true);

    let a = ok(&primary, Op::Acquire, json!({"key": "a", "owner": "w1", "lease_ms": 60000}));
    let b = ok(&primary, Op::Acquire, json!({"key": "b", "owner": "w2", "lease_ms": 60000}));
    let info = ship(&primary, &replica);
    assert_eq!(info["held"], 2, "{info}");
    let a_token = a["granted"]["fencing_token"].as_u64().expect("token");
    let b_token = b["granted"]["fencing_token"].as_u64().expect("token");
    ok(&primary, Op::Release, json!({"key": "b", "owner": "w2", "fencing_token": b_token}));
    assert_eq!(ship(&primary, &replica)["held"], 1);

    ok(&replica, Op::OpenPartition, json!({"epoch": 4, "from_standby": true, "replicated": true}));
    let held = ok(&replica, Op::KeyInfo, json!({"key": "a"}));
    assert_eq!(held["holders"][0]["owner"], "w1", "{held}");
    assert_eq!(held["holders"][0]["fencing_token"], a_token);
    let renewed =
        ok(&replica, Op::Renew, json!({"key": "a", "owner": "w1", "fencing_token": a_token}));
    assert!(renewed.is_object(), "{renewed}");
    let next = ok(&replica, Op::Acquire, json!({"key": "b", "owner": "w3"}));
    assert!(next["granted"]["fencing_token"].as_u64().expect("token") > b_token);
    // The standby became the partition: a second promotion from it is refused.
    assert_eq!(
        err_field(&replica, Op::OpenPartition, json!({"epoch": 5, "from_standby": true})),
        "\"standby\""
    );
}

#[test]
fn a_copy_without_a_full_state_ignores_deltas_and_a_gap_is_refused() {
    let (primary, replica) = (node(), node());
    ok(&primary, Op::OpenPartition, json!({"epoch": 1, "replicated": true}));
    ok(&primary, Op::Acquire, json!({"key": "a", "owner": "w1"}));
    assert_eq!(ship(&primary, &replica)["applied"], false, "no base yet: not applied");

    assert_eq!(ok(&replica, Op::StandbyApply, batch(&primary, true))["held"], 1);
    ok(&primary, Op::Acquire, json!({"key": "b", "owner": "w1"}));
    batch(&primary, false); // a batch the replica never sees
    ok(&primary, Op::Acquire, json!({"key": "c", "owner": "w1"}));
    let delta = batch(&primary, false);
    assert_eq!(err_field(&replica, Op::StandbyApply, delta), "\"delta\"");

    let exported = ok(&replica, Op::StandbyExport, json!({"drop": true}));
    assert_eq!(exported["full"]["snapshot"]["locks"].as_array().map(Vec::len), Some(1));
    assert_eq!(ok(&replica, Op::StandbyExport, json!({}))["full"], Value::Null);
}

#[test]
fn taking_changes_needs_a_replicated_partition() {
    let primary = node();
    ok(&primary, Op::OpenPartition, json!({"epoch": 1}));
    assert_eq!(err_field(&primary, Op::TakeBatch, json!({})), "\"change_tracking\"");
}

#[test]
fn a_batch_that_changes_nothing_says_so_and_a_whole_state_never_does() {
    let primary = node();
    ok(&primary, Op::OpenPartition, json!({"epoch": 1, "replicated": true}));
    ok(&primary, Op::Acquire, json!({"key": "a", "owner": "w1", "lease_ms": 60000}));
    let first = ok(&primary, Op::TakeBatch, json!({}));
    assert_eq!(first["empty"], false, "{first}");
    let again = ok(&primary, Op::TakeBatch, json!({}));
    assert_eq!(again["empty"], true, "nothing changed since: {again}");
    let whole = ok(&primary, Op::TakeBatch, json!({"full": true}));
    assert_eq!(whole["empty"], false, "{whole}");
    assert!(whole["batch"].as_str().expect("text").starts_with("{\"full\":"), "{whole}");
    let e =
        call(&primary, Op::TakeBatch as i32, 0, r#"{"fulll":true}"#).expect_err("unknown member");
    assert!(e.details_json().contains("fulll"), "{}", e.details_json());
}
