//! The ownership protocol through the bridge, as the plugin drives it (docs/ARCHITECTURE.md
//! "Silent owners"): on a node of a cluster every operation that changes or shows a table first
//! asks whether this node's lease is current, and refuses with the reason and a retry hint when it
//! is not; ticks, listings and deadlines leave such a partition as it stands.

use eslm::node::{NodeConfig, NodeCore};
use eslm::ops::{call, Op, ALL_PARTITIONS};
use lock_core::ErrorCode;
use serde_json::{json, Value};

fn node(leases: bool) -> NodeCore {
    let config = NodeConfig {
        partitions: Some(vec![]),
        node_name: Some("n1".into()),
        leases,
        ..NodeConfig::default()
    };
    NodeCore::new(config).expect("core")
}

fn envelope(core: &NodeCore, op: Op, partition: i32, args: Value) -> Value {
    let text = call(core, op as i32, partition, &args.to_string()).expect("call");
    serde_json::from_str(&text).expect("envelope")
}

fn ok(core: &NodeCore, op: Op, partition: i32, args: Value) -> Value {
    envelope(core, op, partition, args)["result"].clone()
}

/// The refusal of `op`: its code and details.
fn refused(core: &NodeCore, op: Op, args: Value) -> (i32, Value) {
    let e = call(core, op as i32, 0, &args.to_string()).expect_err("refused");
    (e.code(), serde_json::from_str(&e.details_json()).expect("details"))
}

fn event(core: &NodeCore, partition: i32, args: Value) -> Value {
    ok(core, Op::Ownership, partition, args)
}

/// Renews partition 0's lease from a batch taken now, as `GroupCommit` does once every copy took it.
fn renew(core: &NodeCore, epoch: u64) {
    let taken = ok(core, Op::TakeBatch, 0, json!({}));
    let renewed =
        event(core, 0, json!({"event": "renewed", "epoch": epoch, "sent_us": taken["sent_us"]}));
    assert_eq!(renewed["serves"], true);
}

#[test]
fn without_a_current_lease_a_node_changes_and_shows_nothing_and_says_why() {
    let core = node(true);
    ok(&core, Op::OpenPartition, 0, json!({"epoch": 1, "replicated": true}));
    let acquire = json!({"key": "k", "owner": "a"});
    let (code, details) = refused(&core, Op::Acquire, acquire.clone());
    assert_eq!(code, ErrorCode::PartitionUnavailable as i32);
    assert_eq!(details["retry_after_ms"], 200, "the next heartbeat may renew it");
    let message = details["message"].as_str().expect("message");
    assert!(
        message.starts_with("node [n1] has no current lease on lock partition [0]"),
        "{message}"
    );
    for (op, args) in
        [(Op::KeyInfo, json!({"key": "k"})), (Op::SessionCreate, json!({"owner": "a"}))]
    {
        assert_eq!(refused(&core, op, args).0, ErrorCode::PartitionUnavailable as i32, "{op:?}");
    }
    let listed = ok(&core, Op::List, ALL_PARTITIONS, json!({}));
    assert_eq!(listed, json!([]), "no page from a partition without a lease");

    renew(&core, 1);
    assert_eq!(ok(&core, Op::Acquire, 0, acquire)["granted"]["owner"], "a");
    assert_eq!(ok(&core, Op::List, ALL_PARTITIONS, json!({}))[0]["partition"], 0);
    let diagnostics = ok(&core, Op::Diagnostics, ALL_PARTITIONS, json!({}));
    assert_eq!(diagnostics["partitions"][0]["confirmed"], true);
    assert!(diagnostics["partitions"][0]["lease_left_ms"].as_u64() <= Some(800));
}

#[test]
fn a_renewal_of_another_epoch_or_after_a_hand_over_renews_nothing() {
    let core = node(true);
    ok(&core, Op::OpenPartition, 0, json!({"epoch": 2, "replicated": true}));
    let taken = ok(&core, Op::TakeBatch, 0, json!({}));
    let stale =
        event(&core, 0, json!({"event": "renewed", "epoch": 1, "sent_us": taken["sent_us"]}));
    assert_eq!(stale["serves"], false);
    renew(&core, 2);
    ok(&core, Op::ClosePartition, 0, json!({"export": true}));
    ok(&core, Op::OpenPartition, 0, json!({"epoch": 2, "replicated": true}));
    assert_eq!(
        refused(&core, Op::Acquire, json!({"key": "k", "owner": "a"})).0,
        ErrorCode::PartitionUnavailable as i32
    );
}

#[test]
fn with_the_masters_confirmations_an_opening_serves_at_once_unless_reopened_unconfirmed() {
    let core = node(true);
    event(&core, ALL_PARTITIONS, json!({"event": "source", "copy_leases": false}));
    ok(&core, Op::OpenPartition, 0, json!({"epoch": 1}));
    ok(&core, Op::Acquire, 0, json!({"key": "k", "owner": "a"}));
    ok(&core, Op::ClosePartition, 0, json!({}));
    ok(&core, Op::OpenPartition, 0, json!({"epoch": 1, "confirmed": false}));
    let (_, details) = refused(&core, Op::Release, json!({"key": "k", "owner": "a"}));
    assert_eq!(details["retry_after_ms"], 0, "on the next cluster state");
    let message = details["message"].as_str().expect("message");
    assert!(message.contains("cannot confirm with the elected master"), "{message}");
    let asked = event(&core, 0, json!({"event": "sending"}))["sent_us"].clone();
    let yes = event(
        &core,
        0,
        json!({"event": "master_answered", "epoch": 1, "asked_us": asked, "yours": true}),
    );
    assert_eq!(yes["answer"], "confirmed");
    ok(&core, Op::KeyInfo, 0, json!({"key": "k"}));
}

#[test]
fn time_stands_still_on_a_partition_without_a_lease() {
    let core = node(true);
    ok(&core, Op::OpenPartition, 0, json!({"epoch": 1, "replicated": true, "confirmed": false}));
    renew(&core, 1);
    ok(&core, Op::Acquire, 0, json!({"key": "k", "owner": "a", "lease_ms": 1}));
    ok(&core, Op::Acquire, 0, json!({"key": "k", "owner": "b", "wait_ms": 60000, "request_id": 7}));
    // A cluster being upgraded: the master's confirmations renew leases, and none came.
    event(&core, ALL_PARTITIONS, json!({"event": "source", "copy_leases": false}));
    std::thread::sleep(std::time::Duration::from_millis(5));
    let ticked = envelope(&core, Op::Tick, 0, json!({}));
    assert_eq!(ticked["result"]["unserved"], json!([0]));
    assert_eq!(ticked["tick_in_ms"], Value::Null, "no deadline counts while it is not served");
    assert_eq!(ticked["events"], json!([]), "a's lease did not run out here, b was not granted");
}

#[test]
fn a_promoted_copy_waits_out_the_old_lease_and_a_standalone_core_serves_without_one() {
    let core = node(true);
    event(&core, 3, json!({"event": "answered"}));
    let wait = event(&core, 3, json!({"event": "promoted", "old_owner_closed": false}))["wait_ms"]
        .as_u64();
    assert!(wait > Some(800) && wait <= Some(817), "{wait:?}");
    let closed = event(&core, 3, json!({"event": "promoted", "old_owner_closed": true}));
    assert_eq!(closed["wait_ms"], 0);
    let standalone = node(false);
    ok(&standalone, Op::OpenPartition, 0, json!({"epoch": 1}));
    ok(&standalone, Op::Acquire, 0, json!({"key": "k", "owner": "a"}));
}
