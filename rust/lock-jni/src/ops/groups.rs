//! Handlers of the group ops on one partition (docs/API.md "Groups"): create, delete, list, read
//! and change a member's capabilities. Joining, leaving and heartbeats are the lock ops on the
//! group's key in scope `group` (`locks.rs`); the rules are the core's (docs/LOCK_CORE.md
//! "Groups").

use lock_core::{LockError, STATE_FORMAT_GROUPS};
use serde::Deserialize;

use super::{bodies, decode, to_json, BridgeError, Ctx};

/// Names one group.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupArgs {
    group: String,
}

/// A group read, and the version an observer knows (then the answer says whether it changed).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InfoArgs {
    group: String,
    #[serde(default)]
    observed_version: Option<u64>,
}

/// A member's new capabilities (absent: none).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    group: String,
    member: String,
    #[serde(default)]
    capabilities: Option<String>,
}

/// Creates a group; refused while a node of the cluster cannot read one (an older plugin would
/// lose it when it takes the partition over, docs/ARCHITECTURE.md "Formats and versions").
pub(super) fn create(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    if cx.core.peer_format() < STATE_FORMAT_GROUPS {
        return Err(LockError::invalid(
            "group",
            format!(
                "groups need every node of the cluster to read state format \
                 [{STATE_FORMAT_GROUPS}]: a node of an older plugin is a member (finish the \
                 rolling upgrade first)"
            ),
        )
        .into());
    }
    let args: GroupArgs = decode(args)?;
    let now = cx.now;
    cx.served()?.create_group(&args.group, now)?;
    to_json(&bodies::group_created(&args.group))
}

/// Deletes a group that has no member.
pub(super) fn delete(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let args: GroupArgs = decode(args)?;
    let now = cx.now;
    cx.served()?.delete_group(&args.group, now)?;
    to_json(&bodies::group_deleted(&args.group))
}

/// The names of the addressed partition's groups: `{"groups": [...]}` in name order.
pub(super) fn list(cx: &mut Ctx<'_>, _args: &str) -> Result<String, BridgeError> {
    let names = cx.served()?.group_names();
    to_json(&bodies::group_names(&names))
}

/// A group's members and version, as the table holds them (a read moves no time on, as
/// `key_info`); with `changed` when the caller names the version it knows.
pub(super) fn info(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let args: InfoArgs = decode(args)?;
    let info = cx.served()?.group_info(&args.group)?;
    to_json(&bodies::group_info(&info, args.observed_version))
}

/// Replaces a member's capabilities; answers the member with its group
/// ([`bodies::member_updated`]).
pub(super) fn update(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let args: UpdateArgs = decode(args)?;
    let now = cx.now;
    let member =
        cx.served()?.update_member(&args.group, &args.member, args.capabilities.as_deref(), now)?;
    to_json(&bodies::member_updated(&args.group, &member))
}

#[cfg(test)]
mod tests {
    use lock_core::Config;
    use serde_json::{json, Value};

    use crate::node::{NodeConfig, NodeCore};
    use crate::ops::{call, Op};

    fn core() -> NodeCore {
        NodeCore::new(NodeConfig {
            config: Config::default(),
            partitions: None,
            node_name: None,
            ..NodeConfig::default()
        })
        .expect("core")
    }

    fn ok(core: &NodeCore, op: Op, args: &Value) -> Value {
        let envelope = call(core, op as i32, 0, &args.to_string()).expect("call");
        serde_json::from_str::<Value>(&envelope).expect("envelope")["result"].clone()
    }

    fn refused(core: &NodeCore, op: Op, args: &Value) -> Value {
        let err = call(core, op as i32, 0, &args.to_string()).expect_err("refused");
        serde_json::from_str(&err.details_json()).expect("details")
    }

    #[test]
    fn a_group_goes_through_the_bridge_with_its_capabilities_as_json() {
        let core = core();
        assert_eq!(ok(&core, Op::GroupCreate, &json!({"group": "g"}))["created"], true);
        let caps = r#"{"zone":"a","weight":2}"#;
        let join = json!({"key": "g", "owner": "m1", "scope": "group", "mode": "shared",
                          "value": caps});
        let joined = ok(&core, Op::Acquire, &join);
        assert_eq!(joined["granted"]["capabilities"], json!({"zone": "a", "weight": 2}));
        assert!(joined["granted"].get("value").is_none(), "{joined}");
        let info = ok(&core, Op::GroupInfo, &json!({"group": "g"}));
        assert_eq!(info["members"][0]["member"], "m1");
        assert_eq!(info["members"][0]["capabilities"]["zone"], "a");
        let version = info["version"].as_u64().expect("version");
        let updated = ok(
            &core,
            Op::GroupUpdate,
            &json!({"group": "g", "member": "m1", "capabilities": "[1]"}),
        );
        assert_eq!(
            (updated["group"].clone(), updated["capabilities"].clone()),
            (json!("g"), json!([1]))
        );
        let observed =
            ok(&core, Op::GroupInfo, &json!({"group": "g", "observed_version": version}));
        assert_eq!(observed["changed"], true);
        assert_eq!(ok(&core, Op::GroupList, &json!({}))["groups"], json!(["g"]));
        let busy = refused(&core, Op::GroupDelete, &json!({"group": "g"}));
        assert_eq!((busy["code"].clone(), busy["key"].clone()), (json!(14), json!("g")));
        let twice = refused(&core, Op::Acquire, &join);
        assert_eq!((twice["code"].clone(), twice["owner"].clone()), (json!(15), json!("m1")));
        ok(&core, Op::Release, &json!({"key": "g", "owner": "m1", "scope": "group"}));
        assert_eq!(ok(&core, Op::GroupDelete, &json!({"group": "g"}))["deleted"], true);
        assert_eq!(refused(&core, Op::GroupInfo, &json!({"group": "g"}))["code"], 12);
    }

    #[test]
    fn no_group_is_created_while_a_node_reads_an_older_format() {
        let core = core();
        ok(&core, Op::PeersRead, &json!({"format": lock_core::STATE_FORMAT_GROUPS - 1}));
        let err = refused(&core, Op::GroupCreate, &json!({"group": "g"}));
        assert_eq!((err["code"].clone(), err["field"].clone()), (json!(1), json!("group")));
        ok(&core, Op::PeersRead, &json!({"format": lock_core::STATE_FORMAT_GROUPS}));
        ok(&core, Op::GroupCreate, &json!({"group": "g"}));
        assert_eq!(refused(&core, Op::GroupCreate, &json!({"group": "g"}))["code"], 13);
    }
}
