//! A panic in the core fails only its call: the call answers `LM_STATUS_CORE_PANIC` with the
//! partition it happened in, that partition is refused with the same code until it is opened
//! again, and every other partition goes on serving (docs/RELIABILITY.md, "A panic in the
//! core"). Needs the test-only fault of lock-core (`--features fault-injection`).

use std::ffi::{c_char, CStr, CString};

use eslm::c_api::{eslm_call, eslm_core_destroy, eslm_core_new, eslm_string_free};
use eslm::node::{NodeConfig, NodeCore, PartitionSpec};
use eslm::ops::{call, BridgeError, Op};
use lock_core::fault::PANIC_KEY;
use lock_core::{Config, ErrorCode};
use serde_json::{json, Value};

fn two_partitions() -> NodeCore {
    let partitions =
        Some(vec![PartitionSpec { id: 0, epoch: 1 }, PartitionSpec { id: 1, epoch: 1 }]);
    NodeCore::new(NodeConfig {
        config: Config::default(),
        partitions,
        node_name: None,
        ..NodeConfig::default()
    })
    .expect("core")
}

fn acquire(core: &NodeCore, partition: i32, key: &str) -> Result<Value, BridgeError> {
    let args = json!({ "key": key, "owner": "a", "lease_ms": 60_000 }).to_string();
    let answer = call(core, Op::Acquire as i32, partition, &args)?;
    Ok(serde_json::from_str(&answer).expect("envelope"))
}

fn details(e: &BridgeError) -> Value {
    serde_json::from_str(&e.details_json()).expect("details are JSON")
}

#[test]
fn a_panic_answers_its_code_and_fails_only_its_partition_until_reopened() {
    let core = two_partitions();
    let held = acquire(&core, 0, "held").expect("grant");
    let token = held["result"]["granted"]["fencing_token"].as_u64().expect("token");

    let e = acquire(&core, 0, PANIC_KEY).expect_err("the fault panics");
    assert_eq!(e.code(), ErrorCode::CorePanic as i32);
    assert_eq!(e.code(), 10, "the number Java maps");
    let d = details(&e);
    assert_eq!((&d["partition"], &d["epoch"]), (&json!(0), &json!(1)), "{d}");
    assert!(d["message"].as_str().expect("message").contains("fault injection"), "{d}");

    // Every later call on the partition is refused with the same code, naming it.
    for (op, args) in [
        (Op::KeyInfo, r#"{"key":"held"}"#.to_owned()),
        (Op::Renew, json!({ "key": "held", "owner": "a", "fencing_token": token }).to_string()),
        (Op::Release, r#"{"key":"held","owner":"a"}"#.to_owned()),
        (Op::Acquire, r#"{"key":"other","owner":"b"}"#.to_owned()),
        (Op::TakeBatch, "{}".to_owned()),
    ] {
        let refused = call(&core, op as i32, 0, &args).expect_err("partition 0 is failed");
        assert_eq!(refused.code(), ErrorCode::CorePanic as i32, "{op:?}");
        assert_eq!(details(&refused)["partition"], 0, "{op:?}");
    }

    // The node and its other partition go on: node-wide calls skip the failed partition.
    acquire(&core, 1, "elsewhere").expect("partition 1 still grants");
    call(&core, Op::Tick as i32, -1, "{}").expect("tick of every partition");
    let stats: Value =
        serde_json::from_str(&call(&core, Op::Stats as i32, -1, "{}").expect("stats"))
            .expect("json");
    assert_eq!(stats["result"]["held"], 1, "only partition 1's holder: {stats}");

    // Closing it exports nothing (its table may be inconsistent); opening it again serves.
    let closed = call(&core, Op::ClosePartition as i32, 0, r#"{"export":true}"#).expect("close");
    assert!(closed.contains(r#""snapshot":null"#), "{closed}");
    call(&core, Op::OpenPartition as i32, 0, r#"{"epoch":2}"#).expect("reopen");
    let again = acquire(&core, 0, "held").expect("serves again");
    let new_token = again["result"]["granted"]["fencing_token"].as_u64().expect("token");
    assert!(new_token > token && new_token >> 40 == 2, "{new_token} after {token}");
}

#[test]
fn a_panic_while_a_partition_is_open_keeps_refusing_until_opened_not_just_raised() {
    let core = two_partitions();
    acquire(&core, 0, PANIC_KEY).expect_err("panics");
    // Opening in a higher epoch is the only way back; the failed table is not reused.
    call(&core, Op::OpenPartition as i32, 0, r#"{"epoch":3}"#).expect("reopen");
    let info = call(&core, Op::KeyInfo as i32, 0, &json!({ "key": PANIC_KEY }).to_string())
        .expect("served");
    assert!(info.contains(r#""holders":[]"#), "a fresh table: {info}");
}

#[test]
fn through_the_c_abi_a_panic_is_the_core_panic_status() {
    let mut handle = 0u64;
    let mut out: *mut c_char = std::ptr::null_mut();
    let config = CString::new("{}").expect("cstring");
    let panic = CString::new(json!({ "key": PANIC_KEY, "owner": "a" }).to_string()).expect("c");
    let take = |s: *mut c_char| {
        // SAFETY: written by the library just before, freed once.
        let text = unsafe { CStr::from_ptr(s) }.to_str().expect("utf8").to_owned();
        // SAFETY: see above.
        unsafe { eslm_string_free(s) };
        text
    };
    // SAFETY: valid strings and out-pointers throughout.
    unsafe {
        assert_eq!(eslm_core_new(config.as_ptr(), &mut handle, &mut out), ErrorCode::Ok);
        take(out);
        let status = eslm_call(handle, Op::Acquire as i32, 0, panic.as_ptr(), &mut out);
        assert_eq!(status, ErrorCode::CorePanic);
        let d: Value = serde_json::from_str(&take(out)).expect("details");
        assert_eq!(d["partition"], 0, "{d}");
    }
    assert_eq!(eslm_core_destroy(handle), ErrorCode::Ok);
}
