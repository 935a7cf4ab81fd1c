//! Every request read as the REST layer hands it over: what the core gets, and each refusal with
//! its type and the field it names (the integration suite `test_bad_input.py` sends the same
//! bodies over HTTP).

use lock_core::Config;
use serde_json::{json, Value};

use crate::node::{NodeConfig, NodeCore};
use crate::ops::{call, Op, ALL_PARTITIONS};

fn core(config: Config) -> NodeCore {
    NodeCore::new(NodeConfig {
        config,
        partitions: Some(vec![]),
        node_name: None,
        ..NodeConfig::default()
    })
    .expect("core")
}

fn read_with(core: &NodeCore, request: &str, path: Value, body: Value) -> Value {
    let mut args = json!({"request": request, "body": body});
    if let Value::Object(p) = path {
        args.as_object_mut().expect("object").extend(p);
    }
    let text = call(core, Op::ReadRequest as i32, ALL_PARTITIONS, &args.to_string()).expect("call");
    let answer: Value = serde_json::from_str(&text).expect("json");
    answer["result"].clone()
}

fn read(request: &str, path: Value, body: Value) -> Value {
    read_with(&core(Config::default()), request, path, body)
}

/// The core's arguments of an accepted body.
fn args(request: &str, path: Value, body: Value) -> Value {
    let answer = read(request, path, body);
    assert!(answer.get("refused").is_none(), "{answer}");
    answer["parsed"]["args"].clone()
}

/// Asserts a refusal of `parse` type whose message holds every one of `names`.
fn refused(request: &str, path: Value, body: Value, parse: bool, names: &[&str]) {
    let answer = read(request, path, body.clone());
    let refusal = &answer["refused"];
    assert_eq!(refusal["parse"], json!(parse), "{body} -> {answer}");
    let message = refusal["message"].as_str().expect("message");
    for name in names {
        assert!(message.contains(name), "{name:?} not in {message:?} ({body})");
    }
}

const ACQ: &str = "lock_acquire_request";

#[test]
fn an_acquire_names_the_core_fields_and_takes_the_default_wait() {
    let config = Config { default_wait_ms: 7_000, ..Config::default() };
    let body = json!({"owner": "o", "wait": "2s", "lease": 1500, "mode": "shared", "priority": "background", "lock_delay": "1m"});
    let answer = read_with(&core(config), ACQ, json!({"key": "k"}), body);
    let expected = json!({"key": "k", "owner": "o", "wait_ms": 2000, "lease_ms": 1500, "mode": "shared", "priority": "background", "lock_delay_ms": 60000});
    assert_eq!(answer, json!({"parsed": {"args": expected}}));
    let waits = read_with(&core(config), ACQ, json!({"key": "k"}), json!({"owner": "o"}));
    assert_eq!(waits["parsed"]["args"]["wait_ms"], json!(7000));
    assert!(args(ACQ, json!({"key": "k"}), json!({"owner": "o"})).get("wait_ms").is_none());
}

#[test]
fn wrong_types_and_unknown_fields_are_parse_errors_naming_the_field() {
    let key = json!({"key": "k"});
    for (body, name) in [
        (json!({"owner": 17}), "owner"),
        (json!({"owner": null}), "owner"),
        (json!({"owner": "o", "mode": 1}), "mode"),
        (json!({"owner": "o", "scope": ["key"]}), "scope"),
        (json!({"owner": "o", "wait": true}), "wait"),
        (json!({"owner": "o", "lease": ["1s"]}), "lease"),
        (json!({"owner": "o", "priority": true}), "priority"),
        (json!({"owner": "o", "session": {}}), "session"),
        (json!({"owner": "o", "routing": []}), "routing"),
        (json!({"owner": "o", "ownr": "x"}), "unknown field [ownr]"),
        (json!({"owner": "o", "locks": []}), "unknown field [locks]"),
    ] {
        refused(ACQ, key.clone(), body, true, &[name]);
    }
    let rel = "lock_release_request";
    refused(
        rel,
        key.clone(),
        json!({"owner": "h", "fencing_token": "x"}),
        true,
        &["fencing_token"],
    );
    refused(
        rel,
        key.clone(),
        json!({"owner": "h", "fencing_token": 18446744073709551619u128 as f64}),
        true,
        &["fencing_token"],
    );
    refused(rel, key, json!({"owner": "h", "fencing_token": {}}), true, &["fencing_token"]);
    let multi = "lock_multi_acquire_request";
    refused(multi, json!({}), json!({"owner": "o", "locks": "k"}), true, &["locks"]);
    refused(multi, json!({}), json!({"owner": "o", "locks": ["k"]}), true, &["locks"]);
    refused(
        multi,
        json!({}),
        json!({"owner": "o", "locks": [{"key": "k", "wait": "1s"}]}),
        true,
        &["unknown field [wait]"],
    );
    let mrel = "lock_multi_release_request";
    refused(mrel, json!({}), json!({"owner": "h", "all": "yes"}), true, &["all"]);
    let end = "lock_session_end_request";
    refused(
        end,
        json!({"session": "s"}),
        json!({"owner": "o", "routing": "r"}),
        true,
        &[end, "routing"],
    );
}

#[test]
fn bad_values_are_illegal_arguments_naming_the_field() {
    let key = json!({"key": "k"});
    for (body, names) in [
        (json!({"mode": "shared"}), &["[owner] is required"][..]),
        (json!({"owner": "o".repeat(513)}), &["[owner]", "512"]),
        (json!({"owner": "o", "wait": "-1s"}), &["[wait]"]),
        (json!({"owner": "o", "wait": "10"}), &["[wait]"]),
        (json!({"owner": "o", "wait": 1e300}), &["[wait]"]),
        (json!({"owner": "o", "wait": "6m"}), &["[wait]", "locks.wait.max"]),
        (json!({"owner": "o", "lease": "11m"}), &["[lease]", "locks.lease.max"]),
        (json!({"owner": "o", "priority": 3.5}), &["priority"]),
        (json!({"owner": "o", "mode": "sideways"}), &["mode"]),
        (json!({"owner": "o", "scope": "forest"}), &["scope"]),
        (json!({"owner": "o", "routing": "r"}), &["[routing]", "hash tag"]),
    ] {
        refused(ACQ, key.clone(), body, false, names);
    }
    let rel = "lock_release_request";
    refused(
        rel,
        key.clone(),
        json!({"owner": "h"}),
        false,
        &["[acquisition] or [fencing_token] is required"],
    );
    refused(
        rel,
        key.clone(),
        json!({"owner": "h", "fencing_token": -5}),
        false,
        &["fencing_token"],
    );
    refused(
        "election_resign_request",
        key.clone(),
        json!({"candidate": "h"}),
        false,
        &["[acquisition] or [term] is required"],
    );
    refused(
        "election_campaign_request",
        key.clone(),
        json!({}),
        false,
        &["[candidate] is required"],
    );
    refused(
        "group_join_request",
        key.clone(),
        json!({"member": "m".repeat(600)}),
        false,
        &["[member]"],
    );
    refused(
        "semaphore_acquire_request",
        key,
        json!({"owner": "o", "limit": 65536}),
        false,
        &["[limit]", "65535"],
    );
    let session = "lock_session_request";
    refused(session, json!({}), json!({"ttl": "10s"}), false, &["[owner] is required"]);
    refused(session, json!({}), json!({"owner": "o", "ttl": "99999999999999d"}), false, &["[ttl]"]);
    refused(
        session,
        json!({}),
        json!({"owner": "o", "routing": " "}),
        false,
        &["[routing] must not be blank"],
    );
}

#[test]
fn multi_locks_name_each_key_once_and_their_grants() {
    let multi = "lock_multi_acquire_request";
    let dup = json!({"owner": "o", "locks": [{"key": "a"}, {"key": "a", "mode": "shared"}]});
    refused(multi, json!({}), dup, false, &["[locks] names key [a] more than once"]);
    refused(multi, json!({}), json!({"owner": "o", "locks": []}), false, &["locks"]);
    refused(multi, json!({}), json!({"owner": "o"}), false, &["[locks] is required"]);
    refused(
        multi,
        json!({}),
        json!({"owner": "o", "locks": [{"mode": "shared"}]}),
        false,
        &["[key] is required"],
    );
    let tree_and_key =
        json!({"owner": "o", "locks": [{"key": "a"}, {"key": "a", "scope": "tree"}]});
    assert_eq!(args(multi, json!({}), tree_and_key)["locks"].as_array().map(Vec::len), Some(2));
    let tight = Config {
        limits: lock_core::Limits { max_keys_per_request: 2, ..Default::default() },
        ..Config::default()
    };
    let three = json!({"owner": "o", "locks": [{"key": "a"}, {"key": "b"}, {"key": "c"}]});
    let answer = read_with(&core(tight), multi, json!({}), three);
    assert!(
        answer["refused"]["message"]
            .as_str()
            .expect("message")
            .contains("locks.max_keys_per_request"),
        "{answer}"
    );

    let mrel = "lock_multi_release_request";
    refused(mrel, json!({}), json!({"owner": "h"}), false, &["[locks] or [all: true]"]);
    refused(
        mrel,
        json!({}),
        json!({"owner": "h", "locks": [{"key": "k"}]}),
        false,
        &["[acquisition] or [locks.fencing_token] is required"],
    );
    refused(
        mrel,
        json!({}),
        json!({"owner": "h", "all": true, "acquisition": "a"}),
        false,
        &["[acquisition]"],
    );
    refused(
        mrel,
        json!({}),
        json!({"owner": "h", "locks": [{"key": "k", "fencing_token": 1}], "routing": "r"}),
        false,
        &["[routing]"],
    );
    let all = read(mrel, json!({}), json!({"owner": "h", "all": true}));
    assert_eq!(all["parsed"]["routing"], json!("h"));
    let routed = read(mrel, json!({}), json!({"owner": "h", "all": "true", "routing": "r"}));
    assert_eq!(routed["parsed"]["routing"], json!("r"));
    let by_keys =
        read(mrel, json!({}), json!({"owner": "h", "acquisition": "a", "locks": [{"key": "k"}]}));
    assert!(by_keys["parsed"].get("routing").is_none(), "{by_keys}");
}

#[test]
fn elections_groups_semaphores_and_sessions_are_the_lock_ops_they_are() {
    let k = json!({"key": "e"});
    let campaign =
        args("election_campaign_request", k.clone(), json!({"candidate": "c", "value": "v"}));
    assert_eq!(
        campaign,
        json!({"key": "e", "owner": "c", "value": "v", "mode": "exclusive", "scope": "election"})
    );
    let renew = args(
        "election_renew_request",
        k.clone(),
        json!({"candidate": "c", "term": "3", "lease": "1m"}),
    );
    assert_eq!(
        renew,
        json!({"key": "e", "owner": "c", "fencing_token": 3, "lease_ms": 60000, "scope": "election"})
    );
    let join =
        args("group_join_request", k.clone(), json!({"member": "m", "capabilities": {"cpu": 2}}));
    assert_eq!(
        join,
        json!({"key": "e", "owner": "m", "value": "{\"cpu\":2}", "mode": "shared", "scope": "group"})
    );
    let update =
        args("group_update_request", k.clone(), json!({"member": "m", "capabilities": [1]}));
    assert_eq!(update, json!({"group": "e", "member": "m", "capabilities": "[1]"}));
    let sem = args(
        "semaphore_acquire_request",
        k.clone(),
        json!({"owner": "o", "limit": 3, "permits": "2"}),
    );
    assert_eq!(
        sem,
        json!({"key": "e", "owner": "o", "limit": 3, "permits": 2, "scope": "semaphore"})
    );
    assert_eq!(
        args("semaphore_limit_request", k.clone(), json!({"limit": 4})),
        json!({"key": "e", "limit": 4})
    );
    let keepalive =
        args("lock_session_keepalive_request", json!({"session": "0_ab"}), json!({"owner": "o"}));
    assert_eq!(keepalive, json!({"owner": "o", "session": "0_ab"}));
    let session = read("lock_session_request", json!({}), json!({"owner": "o", "ttl": "5s"}));
    assert_eq!(
        session,
        json!({"parsed": {"args": {"owner": "o", "ttl_ms": 5000}, "routing": "o"}})
    );
    let forced = args("lock_force_release_request", k, json!({}));
    assert_eq!(forced, json!({"key": "e"}));
}

#[test]
fn of_two_bad_fields_the_first_written_is_refused() {
    let body = r#"{"request": "lock_acquire_request", "key": "k", "body": {"zz": 1, "aa": 2}}"#;
    let core = core(Config::default());
    let text = call(&core, Op::ReadRequest as i32, ALL_PARTITIONS, body).expect("call");
    assert!(text.contains("unknown field [zz]"), "{text}");
    let unknown = r#"{"request": "lock_grab_request", "body": {}}"#;
    assert!(call(&core, Op::ReadRequest as i32, ALL_PARTITIONS, unknown).is_err());
}

#[test]
fn watches_and_long_polls_read_their_query_parameters() {
    let watch = args(
        "lock_watch_request",
        json!({"key": "k"}),
        json!({"token": "5", "wait": "30s", "revoke": "true"}),
    );
    assert_eq!(watch, json!({"key": "k", "fencing_token": 5, "wait_ms": 30000, "revoke": true}));
    refused(
        "lock_watch_request",
        json!({"key": "k"}),
        json!({"wait": "1s"}),
        false,
        &["[token] is required"],
    );
    refused(
        "lock_watch_request",
        json!({"key": "k"}),
        json!({"token": "0", "wait": "1s"}),
        false,
        &["[token]"],
    );
    refused(
        "lock_watch_request",
        json!({"key": "k"}),
        json!({"token": "1", "wait": "6m"}),
        false,
        &["locks.wait.max"],
    );
    refused(
        "election_observe_request",
        json!({"key": "e"}),
        json!({"term": "1"}),
        false,
        &["[wait] is required"],
    );
    let observe =
        args("group_observe_request", json!({"key": "g"}), json!({"version": "3", "wait": "1s"}));
    assert_eq!(observe, json!({"key": "g", "fencing_token": 3, "wait_ms": 1000}));
}

#[test]
fn a_downgrade_names_its_grant_and_the_weaker_mode() {
    const DOWN: &str = "lock_downgrade_request";
    let body = json!({"owner": "o", "acquisition": "a", "mode": "shared"});
    let expected = json!({"key": "k", "owner": "o", "acquisition": "a", "mode": "shared"});
    assert_eq!(args(DOWN, json!({"key": "k"}), body), expected);
    refused(
        DOWN,
        json!({"key": "k"}),
        json!({"owner": "o", "acquisition": "a"}),
        false,
        &["[mode] is required"],
    );
    refused(
        DOWN,
        json!({"key": "k"}),
        json!({"owner": "o", "mode": "shared"}),
        false,
        &["acquisition", "fencing_token"],
    );
    refused(
        DOWN,
        json!({"key": "k"}),
        json!({"owner": "o", "fencing_token": 1, "mode": "shard"}),
        false,
        &["mode"],
    );
}
