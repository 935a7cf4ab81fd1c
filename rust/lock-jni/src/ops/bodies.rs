//! The REST bodies of docs/API.md, built from the core's records: the plugin hands them on as
//! they are and reads only the few members [`super::fields`] names (docs/ARCHITECTURE.md, "The
//! bridge"). Which members a body has is decided here and nowhere else: a semaphore's holders
//! share it, so its answers carry permits, not modes (docs/API.md "Semaphores"); a multi-lock's
//! grant lists its locks under one lease (docs/API.md "Many keys"); an election is a lock renamed
//! (docs/API.md "Elections": owner → `leader`, fencing token → `term`, key → `name`).
//! A group's member shows its capabilities as JSON and only whether it has a session
//! (docs/API.md "Groups").

use lock_core::{
    DelayInfo, Event, FencingToken, Grant, GroupInfo, GroupMember, HolderInfo, KeyInfo,
    LimitChanged, Millis, Mode, Priority, Released, Renewed, Scope, SessionEnded, WaiterId,
    WaiterInfo, WatchReason, Watched,
};
use serde::Serialize;

/// A granted single-key acquire: `acquired` and the grant, without a null `session`, and
/// without `mode` for a semaphore.
#[derive(Serialize)]
pub(super) struct Acquired<'a> {
    acquired: bool,
    key: &'a str,
    owner: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<Mode>,
    fencing_token: FencingToken,
    waited_ms: Millis,
    reentrant: bool,
    scope: Scope,
    lease_ms: Millis,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permits: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remaining: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a str>,
    /// A group member's value, as the JSON it was given (docs/API.md "Groups").
    #[serde(skip_serializing_if = "Option::is_none")]
    capabilities: Option<serde_json::Value>,
}

/// A group member's capabilities as the JSON value they were joined with: the plugin keeps them
/// as their JSON text (a text that is not JSON, as an older writer may have left, stays a string).
pub(super) fn capabilities_json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_owned()))
}

pub(super) fn acquired(g: &Grant) -> Acquired<'_> {
    let group = g.scope == Scope::Group;
    Acquired {
        acquired: true,
        key: &g.key,
        owner: &g.owner,
        mode: (g.scope != Scope::Semaphore).then_some(g.mode),
        fencing_token: g.fencing_token,
        waited_ms: g.waited_ms,
        reentrant: g.reentrant,
        scope: g.scope,
        lease_ms: g.lease_ms,
        session: g.session.as_deref(),
        permits: g.permits,
        limit: g.limit,
        remaining: g.remaining,
        value: g.value.as_deref().filter(|_| !group),
        capabilities: g.value.as_deref().filter(|_| group).map(capabilities_json),
    }
}

/// One lock of a granted multi-lock.
#[derive(Serialize)]
struct LockGranted<'a> {
    key: &'a str,
    mode: Mode,
    scope: Scope,
    fencing_token: FencingToken,
}

/// A granted multi-lock: its locks in request order under the shortest lease, and the longest
/// any of them waited.
#[derive(Serialize)]
pub(super) struct MultiAcquired<'a> {
    acquired: bool,
    owner: Option<&'a str>,
    locks: Vec<LockGranted<'a>>,
    lease_ms: Millis,
    waited_ms: Millis,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
}

pub(super) fn multi_acquired(grants: &[Grant]) -> MultiAcquired<'_> {
    let locks = grants
        .iter()
        .map(|g| LockGranted {
            key: &g.key,
            mode: g.mode,
            scope: g.scope,
            fencing_token: g.fencing_token,
        })
        .collect();
    MultiAcquired {
        acquired: true,
        owner: grants.last().map(|g| g.owner.as_str()),
        locks,
        lease_ms: grants.iter().map(|g| g.lease_ms).min().unwrap_or(0),
        waited_ms: grants.iter().map(|g| g.waited_ms).max().unwrap_or(0),
        session: grants.last().and_then(|g| g.session.as_deref()),
    }
}

/// A granted acquire, single or multi.
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum GrantBody<'a> {
    One(Acquired<'a>),
    Many(MultiAcquired<'a>),
}

/// The body of a waiter's grant: a multi-lock's shape when it was one, else its one grant's.
pub(super) fn granted(grants: &[Grant], multi: bool) -> GrantBody<'_> {
    match grants {
        [one] if !multi => GrantBody::One(acquired(one)),
        _ => GrantBody::Many(multi_acquired(grants)),
    }
}

/// What a watch answers: `changed` with the `reason` the lock ended, or `changed: false, held:
/// true` when it is still held at the end of the wait (docs/API.md "Watch a lock").
#[derive(Serialize)]
pub(super) struct WatchBody<'a> {
    key: &'a str,
    scope: Scope,
    fencing_token: FencingToken,
    changed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<WatchReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    held: Option<bool>,
    waited_ms: Millis,
    /// A revoke notice: the grace left before the lock is taken away.
    #[serde(skip_serializing_if = "Option::is_none")]
    grace_ms: Option<Millis>,
}

pub(super) fn watched(w: &Watched) -> WatchBody<'_> {
    watch_body(&w.key, w.scope, w.fencing_token, w.reason, 0, w.grace_ms)
}

/// A watch's body: `changed` when the lock ended; a revoke notice leaves it held.
fn watch_body(
    key: &str,
    scope: Scope,
    fencing_token: FencingToken,
    reason: Option<WatchReason>,
    waited_ms: Millis,
    grace_ms: Option<Millis>,
) -> WatchBody<'_> {
    let changed = reason.is_some_and(|r| r != WatchReason::RevokeRequested);
    WatchBody {
        key,
        scope,
        fencing_token,
        changed,
        reason,
        held: (!changed).then_some(true),
        waited_ms,
        grace_ms,
    }
}

/// The body an event answers its request with, if it answers one with a body: a grant, or the
/// end of a watch. (A waiter that was not granted answers the event's `error`.)
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum EventBody<'a> {
    Grant(GrantBody<'a>),
    Watch(WatchBody<'a>),
}

pub(super) fn event_body(event: &Event) -> Option<EventBody<'_>> {
    match event {
        Event::Granted { grants, multi, .. } => Some(EventBody::Grant(granted(grants, *multi))),
        Event::WatchFired { key, scope, fencing_token, reason, waited_ms, grace_ms, .. } => {
            Some(EventBody::Watch(watch_body(
                key,
                *scope,
                *fencing_token,
                Some(*reason),
                *waited_ms,
                *grace_ms,
            )))
        }
        Event::WatchTimedOut { key, scope, fencing_token, waited_ms, .. } => {
            Some(EventBody::Watch(watch_body(key, *scope, *fencing_token, None, *waited_ms, None)))
        }
        _ => None,
    }
}

#[derive(Serialize)]
pub(super) struct ReleasedBody<'a> {
    released: bool,
    #[serde(flatten)]
    release: &'a Released,
}

pub(super) fn released(r: &Released) -> ReleasedBody<'_> {
    ReleasedBody { released: true, release: r }
}

#[derive(Serialize)]
pub(super) struct RenewedBody<'a> {
    renewed: bool,
    #[serde(flatten)]
    renewal: &'a Renewed,
}

pub(super) fn renewed(r: &Renewed) -> RenewedBody<'_> {
    RenewedBody { renewed: true, renewal: r }
}

#[derive(Serialize)]
pub(super) struct EndedBody<'a> {
    ended: bool,
    #[serde(flatten)]
    end: &'a SessionEnded,
}

pub(super) fn ended(e: &SessionEnded) -> EndedBody<'_> {
    EndedBody { ended: true, end: e }
}

/// A multi-release: the locks it released.
#[derive(Serialize)]
pub(super) struct ManyReleased<'a> {
    released: &'a [Released],
}

pub(super) fn many_released(released: &[Released]) -> ManyReleased<'_> {
    ManyReleased { released }
}

/// One holder a force-release evicted.
#[derive(Serialize)]
struct Evicted<'a> {
    owner: &'a str,
    fencing_token: FencingToken,
}

/// A force-release: the holders it evicted.
#[derive(Serialize)]
pub(super) struct ForceReleased<'a> {
    released: Vec<Evicted<'a>>,
}

pub(super) fn force_released(released: &[Released]) -> ForceReleased<'_> {
    let released = released
        .iter()
        .map(|r| Evicted { owner: &r.owner, fencing_token: r.fencing_token })
        .collect();
    ForceReleased { released }
}

/// A semaphore's changed limit (`POST /_semaphores/{name}/_limit`, docs/API.md "Semaphores").
#[derive(Serialize)]
pub(super) struct LimitBody<'a> {
    key: &'a str,
    #[serde(flatten)]
    changed: LimitChanged,
}

pub(super) fn limit_changed(key: &str, changed: LimitChanged) -> LimitBody<'_> {
    LimitBody { key, changed }
}

/// One holder of a key as `GET /_locks/{key}` shows it, with the node serving it.
#[derive(Serialize)]
struct HolderBody<'a> {
    owner: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<Mode>,
    fencing_token: FencingToken,
    held_ms: Millis,
    lease_ms: Millis,
    #[serde(skip_serializing_if = "Option::is_none")]
    intention: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permits: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<&'a str>,
}

/// One waiter of a key.
#[derive(Serialize)]
struct WaiterBody<'a> {
    waiter_id: WaiterId,
    owner: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<Mode>,
    priority: Priority,
    waited_ms: Millis,
    wait_left_ms: Millis,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permits: Option<u32>,
}

/// A key's holders and waiters; a semaphore's without modes.
#[derive(Serialize)]
pub(super) struct KeyBody<'a> {
    key: &'a str,
    scope: Scope,
    holders: Vec<HolderBody<'a>>,
    waiters: Vec<WaiterBody<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<u32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    lock_delays: &'a [DelayInfo],
}

pub(super) fn key_info<'a>(info: &'a KeyInfo, node: Option<&'a str>) -> KeyBody<'a> {
    let modes = info.scope != Scope::Semaphore;
    let holders = info.holders.iter().map(|h| holder(h, modes, node)).collect();
    let waiters = info.waiters.iter().map(|w| waiter(w, modes)).collect();
    KeyBody {
        key: &info.key,
        scope: info.scope,
        holders,
        waiters,
        limit: info.limit,
        lock_delays: &info.lock_delays,
    }
}

fn holder<'a>(h: &'a HolderInfo, modes: bool, node: Option<&'a str>) -> HolderBody<'a> {
    HolderBody {
        owner: &h.owner,
        mode: modes.then_some(h.mode),
        fencing_token: h.fencing_token,
        held_ms: h.held_ms,
        lease_ms: h.lease_ms,
        intention: modes.then_some(h.intention),
        permits: h.permits,
        value: h.value.as_deref(),
        node,
    }
}

fn waiter(w: &WaiterInfo, modes: bool) -> WaiterBody<'_> {
    WaiterBody {
        waiter_id: w.waiter_id,
        owner: &w.owner,
        mode: modes.then_some(w.mode),
        priority: w.priority,
        waited_ms: w.waited_ms,
        wait_left_ms: w.wait_left_ms,
        key: w.key.as_deref(),
        permits: w.permits,
    }
}

/// A group created or deleted (docs/API.md "Groups"): `{"created": true, "group"}` or
/// `{"deleted": true, "group"}`.
///
/// The members of the group bodies are declared in name order: the order these bodies have had
/// since they were first written, as JSON maps (which sort their members).
#[derive(Serialize)]
pub(super) struct GroupChanged<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    created: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deleted: Option<bool>,
    group: &'a str,
}

pub(super) fn group_created(group: &str) -> GroupChanged<'_> {
    GroupChanged { created: Some(true), deleted: None, group }
}

pub(super) fn group_deleted(group: &str) -> GroupChanged<'_> {
    GroupChanged { created: None, deleted: Some(true), group }
}

/// The names of a partition's groups, in name order.
#[derive(Serialize)]
pub(super) struct GroupNames<'a> {
    groups: &'a [String],
}

pub(super) fn group_names(groups: &[String]) -> GroupNames<'_> {
    GroupNames { groups }
}

/// A group member: its capabilities as the JSON they were given (null when none), and whether
/// it is a member under a session (a session's id is its owner's credential, never shown to
/// others, as in a listing: docs/API.md "GET /_locks"). With its `group` when it answers an
/// update of its capabilities.
#[derive(Serialize)]
pub(super) struct MemberBody<'a> {
    capabilities: Option<serde_json::Value>,
    fencing_token: FencingToken,
    #[serde(skip_serializing_if = "Option::is_none")]
    group: Option<&'a str>,
    lease_ms: Millis,
    member: &'a str,
    session: bool,
}

fn member<'a>(m: &'a GroupMember, group: Option<&'a str>) -> MemberBody<'a> {
    MemberBody {
        capabilities: m.capabilities.as_deref().map(capabilities_json),
        fencing_token: m.fencing_token,
        group,
        lease_ms: m.lease_ms,
        member: &m.member,
        session: m.session.is_some(),
    }
}

/// A member whose capabilities were replaced, with its group.
pub(super) fn member_updated<'a>(group: &'a str, m: &'a GroupMember) -> MemberBody<'a> {
    member(m, Some(group))
}

/// A group's members (in name order) and version; with `changed` when it answers a read that
/// names the version the caller knows (`observed_version`).
#[derive(Serialize)]
pub(super) struct GroupBody<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    changed: Option<bool>,
    group: &'a str,
    members: Vec<MemberBody<'a>>,
    version: u64,
}

pub(super) fn group_info(info: &GroupInfo, observed_version: Option<u64>) -> GroupBody<'_> {
    GroupBody {
        changed: observed_version.map(|observed| observed != info.version),
        group: &info.group,
        members: info.members.iter().map(|m| member(m, None)).collect(),
        version: info.version,
    }
}

/// A campaign's grant: the candidate is the leader.
#[derive(Serialize)]
pub(super) struct Elected<'a> {
    name: &'a str,
    leader: &'a str,
    value: Option<&'a str>,
    term: FencingToken,
    lease_ms: Millis,
    waited_ms: Millis,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
}

pub(super) fn elected(g: &Grant) -> Elected<'_> {
    Elected {
        name: &g.key,
        leader: &g.owner,
        value: g.value.as_deref(),
        term: g.fencing_token,
        lease_ms: g.lease_ms,
        waited_ms: g.waited_ms,
        session: g.session.as_deref(),
    }
}

/// An election's state: its leader (term 0 and no leader when none) and the queued candidates;
/// with `changed` when it answers an observe of `observed_term`.
#[derive(Serialize)]
pub(super) struct ElectionState<'a> {
    name: &'a str,
    leader: Option<&'a str>,
    value: Option<&'a str>,
    term: FencingToken,
    lease_ms: Millis,
    candidates: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changed: Option<bool>,
}

pub(super) fn election_state(
    info: &KeyInfo,
    observed_term: Option<FencingToken>,
) -> ElectionState<'_> {
    let leader = info.holders.first();
    let term = leader.map_or(FencingToken(0), |h| h.fencing_token);
    ElectionState {
        name: &info.key,
        leader: leader.map(|h| h.owner.as_str()),
        value: leader.and_then(|h| h.value.as_deref()),
        term,
        lease_ms: leader.map_or(0, |h| h.lease_ms),
        candidates: info.waiters.iter().map(|w| w.owner.as_str()).collect(),
        changed: observed_term.map(|observed| observed != term),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use lock_core::Config;
    use serde_json::{json, Value};

    use crate::node::{NodeConfig, NodeCore, PartitionSpec};
    use crate::ops::{call, Op, ALL_PARTITIONS};

    fn core() -> NodeCore {
        let partitions = Some(vec![PartitionSpec { id: 0, epoch: 1 }]);
        let node = NodeConfig {
            config: Config::default(),
            partitions,
            node_name: Some("n1".into()),
            ..NodeConfig::default()
        };
        NodeCore::new(node).expect("core")
    }

    fn run(core: &NodeCore, op: Op, args: Value) -> Value {
        let text = call(core, op as i32, 0, &args.to_string()).expect("call");
        serde_json::from_str(&text).expect("json")
    }

    /// The members of an object, as a set (`serde_json` here keeps no order).
    fn members(v: &Value) -> BTreeSet<&str> {
        v.as_object().expect("object").keys().map(String::as_str).collect()
    }

    fn set<const N: usize>(names: [&str; N]) -> BTreeSet<&str> {
        names.into_iter().collect()
    }

    #[test]
    fn a_single_grant_has_no_null_session_and_a_semaphore_no_mode() {
        let core = core();
        let g = &run(&core, Op::Acquire, json!({"key": "k", "owner": "a"}))["result"]["granted"];
        assert_eq!(g["acquired"], true);
        assert!(g.get("session").is_none(), "{g}");
        assert_eq!(g["mode"], "exclusive");
        let s = json!({"key": "s", "owner": "a", "scope": "semaphore", "limit": 2});
        let g = &run(&core, Op::Acquire, s)["result"]["granted"];
        assert!(g.get("mode").is_none(), "{g}");
        assert_eq!((g["permits"].as_u64(), g["limit"].as_u64()), (Some(1), Some(2)), "{g}");
        assert_eq!(g["remaining"], 1, "{g}");
        let s = json!({"key": "s", "owner": "b", "scope": "semaphore", "limit": 2});
        let g = &run(&core, Op::Acquire, s)["result"]["granted"];
        assert_eq!(g["remaining"], 0, "{g}");
        let info = &run(&core, Op::KeyInfo, json!({"key": "s", "scope": "semaphore"}))["result"];
        assert_eq!(
            members(&info["holders"][0]),
            set(["owner", "fencing_token", "held_ms", "lease_ms", "permits", "node"])
        );
        let info = &run(&core, Op::KeyInfo, json!({"key": "k"}))["result"];
        assert_eq!(
            (&info["holders"][0]["node"], &info["holders"][0]["mode"]),
            (&json!("n1"), &json!("exclusive"))
        );
    }

    #[test]
    fn a_multi_lock_answers_its_shape_at_once_and_after_a_wait_even_with_one_key() {
        let core = core();
        let many = json!({"owner": "a", "locks": [{"key": "x"}, {"key": "y", "mode": "shared"}], "lease_ms": 5000});
        let g = &run(&core, Op::AcquireMany, many)["result"]["granted"];
        assert_eq!(members(g), set(["acquired", "owner", "locks", "lease_ms", "waited_ms"]));
        assert_eq!(members(&g["locks"][1]), set(["key", "mode", "scope", "fencing_token"]));
        assert_eq!(g["lease_ms"], 5000);
        let one = json!({"owner": "b", "locks": [{"key": "x"}], "wait_ms": 60000, "request_id": 7});
        assert!(run(&core, Op::AcquireMany, one)["result"]["queued"].is_object());
        let released = run(&core, Op::ReleaseMany, json!({"owner": "a", "all": true}));
        assert_eq!(released["result"]["released"].as_array().map(Vec::len), Some(2));
        let event = &released["events"][0];
        assert_eq!((&event["request_id"], &event["body"]["owner"]), (&json!(7), &json!("b")));
        assert_eq!(event["body"]["locks"][0]["key"], "x", "one key, a multi-lock's shape: {event}");
        let give_back = &event["give_back"][0];
        assert_eq!(members(give_back), set(["key", "owner", "fencing_token", "scope"]));
        let back = call(&core, Op::Release as i32, 0, &give_back.to_string());
        assert!(back.is_ok(), "a give-back is a release the core takes");
    }

    #[test]
    fn an_election_is_its_lock_renamed() {
        let core = core();
        let campaign = json!({"key": "e", "owner": "c1", "scope": "election", "value": "v"});
        let g = run(&core, Op::Acquire, campaign)["result"]["granted"].clone();
        let view = |args: Value| {
            let text = call(&core, Op::ElectionView as i32, ALL_PARTITIONS, &args.to_string());
            serde_json::from_str::<Value>(&text.expect("view")).expect("json")["result"].clone()
        };
        let elected = view(json!({"elected": g}));
        assert_eq!(
            members(&elected),
            set(["name", "leader", "value", "term", "lease_ms", "waited_ms"])
        );
        assert_eq!((&elected["leader"], &elected["term"]), (&json!("c1"), &g["fencing_token"]));
        let info =
            run(&core, Op::KeyInfo, json!({"key": "e", "scope": "election"}))["result"].clone();
        let state = view(json!({"state": info}));
        assert!(state.get("changed").is_none(), "changed only when observing: {state}");
        assert_eq!(state["candidates"], json!([]));
        let same = view(json!({"state": info, "observed_term": g["fencing_token"]}));
        assert_eq!(same["changed"], false);
        assert_eq!(view(json!({"state": info, "observed_term": 0}))["changed"], true);
        let neither = call(&core, Op::ElectionView as i32, ALL_PARTITIONS, "{}");
        assert!(neither.is_err(), "one of elected or state");
    }

    /// The text of `op`'s result as the envelope carries it, byte for byte.
    fn result_text(core: &NodeCore, op: Op, args: Value) -> String {
        let text = call(core, op as i32, 0, &args.to_string()).expect("call");
        let result = text.strip_prefix("{\"result\":").expect("envelope");
        result[..result.rfind(",\"events\":").expect("events")].to_owned()
    }

    #[test]
    fn a_group_answer_is_written_member_for_member_in_name_order() {
        let core = core();
        let created = result_text(&core, Op::GroupCreate, json!({"group": "g"}));
        assert_eq!(created, r#"{"created":true,"group":"g"}"#);
        let caps = r#"{"zone":"a","weight":2}"#;
        let join = |owner: &str, value: Option<&str>| {
            json!({"key": "g", "owner": owner, "scope": "group", "mode": "shared",
                   "lease_ms": 60000, "value": value})
        };
        let t1 = run(&core, Op::Acquire, join("m1", Some(caps)))["result"]["granted"]
            ["fencing_token"]
            .clone();
        let t2 =
            run(&core, Op::Acquire, join("m2", None))["result"]["granted"]["fencing_token"].clone();
        let lease = |text: &str, member: &str| {
            let v: Value = serde_json::from_str(text).expect("json");
            let members = v.get("members").and_then(Value::as_array).cloned();
            let m = members.map_or(v.clone(), |ms| {
                ms.into_iter().find(|m| m["member"] == member).expect("member")
            });
            m["lease_ms"].as_u64().expect("lease_ms")
        };
        let args = json!({"group": "g", "member": "m1", "capabilities": caps});
        let updated = result_text(&core, Op::GroupUpdate, args);
        let expected = format!(
            r#"{{"capabilities":{{"weight":2,"zone":"a"}},"fencing_token":{t1},"group":"g","lease_ms":{},"member":"m1","session":false}}"#,
            lease(&updated, "m1")
        );
        assert_eq!(updated, expected);
        let info = result_text(&core, Op::GroupInfo, json!({"group": "g", "observed_version": 1}));
        let version = serde_json::from_str::<Value>(&info).expect("json")["version"].clone();
        let expected = format!(
            r#"{{"changed":true,"group":"g","members":[{{"capabilities":{{"weight":2,"zone":"a"}},"fencing_token":{t1},"lease_ms":{},"member":"m1","session":false}},{{"capabilities":null,"fencing_token":{t2},"lease_ms":{},"member":"m2","session":false}}],"version":{version}}}"#,
            lease(&info, "m1"),
            lease(&info, "m2")
        );
        assert_eq!(info, expected);
        let unobserved = result_text(&core, Op::GroupInfo, json!({"group": "g"}));
        assert!(unobserved.starts_with(r#"{"group":"g","members":[{"#), "{unobserved}");
        assert_eq!(result_text(&core, Op::GroupList, json!({})), r#"{"groups":["g"]}"#);
        for m in ["m1", "m2"] {
            run(&core, Op::Release, json!({"key": "g", "owner": m, "scope": "group"}));
        }
        let deleted = result_text(&core, Op::GroupDelete, json!({"group": "g"}));
        assert_eq!(deleted, r#"{"deleted":true,"group":"g"}"#);
    }
}
