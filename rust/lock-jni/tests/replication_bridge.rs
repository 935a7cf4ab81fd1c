//! The replication ops through the bridge's JSON protocol, as the plugin drives them: a primary
//! core's batches applied to a replica core's standby, then the replica opened from its standby
//! in the next epoch (docs/ARCHITECTURE.md, "Replication").

use eslm::node::{NodeConfig, NodeCore};
use eslm::ops::{call, Op};
use serde_json::{json, Value};

fn node() -> NodeCore {
    NodeCore::new(NodeConfig { config: Default::default(), partitions: Some(vec![]) })
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
    let delta = ok(primary, Op::TakeChanges, json!({}));
    ok(replica, Op::StandbyApply, json!({ "delta": delta }))
}

#[test]
fn a_replica_promoted_from_its_standby_keeps_holders_and_issues_higher_tokens() {
    let (primary, replica) = (node(), node());
    ok(&primary, Op::OpenPartition, json!({"epoch": 3, "replicated": true}));
    let full = ok(&primary, Op::ExportFull, json!({}));
    assert_eq!(ok(&replica, Op::StandbyApply, json!({ "full": full }))["applied"], true);

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

    let full = ok(&primary, Op::ExportFull, json!({}));
    assert_eq!(ok(&replica, Op::StandbyApply, json!({ "full": full }))["held"], 1);
    ok(&primary, Op::Acquire, json!({"key": "b", "owner": "w1"}));
    ok(&primary, Op::TakeChanges, json!({})); // a batch the replica never sees
    ok(&primary, Op::Acquire, json!({"key": "c", "owner": "w1"}));
    let delta = ok(&primary, Op::TakeChanges, json!({}));
    assert_eq!(err_field(&replica, Op::StandbyApply, json!({ "delta": delta })), "\"delta\"");

    let exported = ok(&replica, Op::StandbyExport, json!({"drop": true}));
    assert_eq!(exported["full"]["snapshot"]["locks"].as_array().map(Vec::len), Some(1));
    assert_eq!(ok(&replica, Op::StandbyExport, json!({}))["full"], Value::Null);
}

#[test]
fn taking_changes_needs_a_replicated_partition() {
    let primary = node();
    ok(&primary, Op::OpenPartition, json!({"epoch": 1}));
    assert_eq!(err_field(&primary, Op::TakeChanges, json!({})), "\"change_tracking\"");
}
