//! The rules a whole request is held to once its fields are read ([`Rule`]): what it requires,
//! what it may not combine, the defaults it takes, and the path's key or session.

use std::collections::HashSet;

use lock_core::Config;
use serde_json::{Map, Value};

use super::schema::{Request, Rule, GROUP};
use super::values::Refusal;
use super::{Parsed, Read};

/// The key or session named by the request's path.
pub struct Path<'a> {
    pub key: Option<&'a str>,
    pub session: Option<&'a str>,
}

/// What a body that names `routing` on a lock is told (docs/API.md "Partitions and hash tags").
pub fn routing_refused() -> Refusal {
    Refusal::illegal(
        "[routing] is not accepted on a lock: a lock's partition follows from its key; give keys \
         locked together a common hash tag, e.g. [{order-42}items] and [{order-42}payment]",
    )
}

/// `read` held to `request`'s rule, with the path's key or session and the defaults filled in.
pub fn apply(
    request: &Request,
    read: Read,
    path: Path<'_>,
    config: &Config,
) -> Result<Parsed, Refusal> {
    let owner = request.body.owner_field();
    let Read { mut args, routing } = read;
    let mut routes_by = None;
    match request.rule {
        Rule::Acquire | Rule::SemaphoreAcquire | Rule::Campaign => {
            require(&args, "owner", owner)?;
            if request.rule == Rule::SemaphoreAcquire {
                require(&args, "limit", "limit")?;
            }
            default_wait(&mut args, config);
        }
        Rule::AcquireMany => {
            require(&args, "owner", owner)?;
            require(&args, "locks", "locks")?;
            each_key_once(&args)?;
            default_wait(&mut args, config);
        }
        Rule::Keyed => {
            require(&args, "owner", owner)?;
            names_grant(&args, request.body.token_field())?;
        }
        Rule::Downgrade => {
            require(&args, "owner", owner)?;
            require(&args, "mode", "mode")?;
            names_grant(&args, request.body.token_field())?;
        }
        Rule::ReleaseMany => routes_by = release_many(&args, routing)?,
        Rule::Session => {
            require(&args, "owner", owner)?;
            routes_by = Some(owner_routing(&args, routing)?);
        }
        Rule::SessionOwner => require(&args, "owner", owner)?,
        Rule::Join => require(&args, "owner", owner)?,
        Rule::SemaphoreLimit => require(&args, "limit", "limit")?,
        Rule::GroupUpdate => {
            require(&args, "owner", owner)?;
            args = group_update(args, path.key);
        }
        Rule::Watch => {
            require(&args, "fencing_token", "token")?;
            require(&args, "wait_ms", "wait")?;
        }
        Rule::Observe => require(&args, "wait_ms", "wait")?,
        Rule::ForceRelease => {}
    }
    match request.rule {
        Rule::Campaign => _ = args.insert("mode".into(), "exclusive".into()),
        Rule::Join => _ = args.insert("mode".into(), "shared".into()),
        _ => {}
    }
    if let Some(scope) = request.scope.filter(|_| request.rule != Rule::GroupUpdate) {
        args.insert("scope".into(), scope.into());
    }
    if let Some(key) = path.key.filter(|_| request.rule != Rule::GroupUpdate) {
        args.insert("key".into(), key.into());
    }
    if let Some(session) = path.session {
        args.insert("session".into(), session.into());
    }
    Ok(Parsed { args, routing: routes_by })
}

fn require(args: &Map<String, Value>, arg: &str, field: &str) -> Result<(), Refusal> {
    if args.contains_key(arg) {
        return Ok(());
    }
    Err(Refusal::illegal(format!("[{field}] is required")))
}

/// A release or renew names the grant it acts on, by acquisition id or token (named
/// `token_field` in its body): an owner name alone would also end a newer acquisition of the
/// same owner (docs/API.md "Acquisitions").
fn names_grant(args: &Map<String, Value>, token_field: &str) -> Result<(), Refusal> {
    if args.contains_key("acquisition") || args.contains_key("fencing_token") {
        return Ok(());
    }
    Err(grant_not_named(token_field))
}

fn grant_not_named(token_field: &str) -> Refusal {
    Refusal::illegal(format!(
        "[acquisition] or [{token_field}] is required: name the acquisition this request acts \
         on, so that it never ends a newer one of the same owner"
    ))
}

fn default_wait(args: &mut Map<String, Value>, config: &Config) {
    if !args.contains_key("wait_ms") && config.default_wait_ms > 0 {
        args.insert("wait_ms".into(), config.default_wait_ms.into());
    }
}

fn locks(args: &Map<String, Value>) -> &[Value] {
    args.get("locks").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A multi-lock names at least one key, each once (in any mode).
fn each_key_once(args: &Map<String, Value>) -> Result<(), Refusal> {
    let locks = locks(args);
    if locks.is_empty() {
        return Err(Refusal::illegal("[locks] must name at least one key"));
    }
    let mut seen = HashSet::new();
    for lock in locks {
        let key = lock["key"].as_str().unwrap_or_default();
        let scope = lock.get("scope").and_then(Value::as_str).unwrap_or("key");
        if !seen.insert((scope, key)) {
            return Err(Refusal::illegal(format!("[locks] names key [{key}] more than once")));
        }
    }
    Ok(())
}

/// A multi-release: `locks` (each naming its grant, by the acquisition or its own token) or
/// `all: true` (every lock of the owner in the partition, newer acquisitions included), not
/// both. Only `all` routes by `routing` or the owner; `locks` route by their keys.
fn release_many(
    args: &Map<String, Value>,
    routing: Option<String>,
) -> Result<Option<String>, Refusal> {
    require(args, "owner", "owner")?;
    let all = args.get("all") == Some(&Value::Bool(true));
    if all == args.contains_key("locks") {
        return Err(Refusal::illegal("[locks] or [all: true] is required, not both"));
    }
    if all {
        if args.contains_key("acquisition") {
            return Err(Refusal::illegal(
                "[acquisition] names the locks of one acquisition: give them in [locks], not \
                 with [all]",
            ));
        }
        return owner_routing(args, routing).map(Some);
    }
    if locks(args).is_empty() {
        return Err(Refusal::illegal("[locks] must name at least one key"));
    }
    if routing.is_some() {
        return Err(routing_refused());
    }
    let tokens = locks(args).iter().all(|l| l.get("fencing_token").is_some());
    if !args.contains_key("acquisition") && !tokens {
        return Err(grant_not_named("locks.fencing_token"));
    }
    Ok(None)
}

/// What a session or a release-all routes by: its `routing`, else its owner.
fn owner_routing(args: &Map<String, Value>, routing: Option<String>) -> Result<String, Refusal> {
    match routing {
        Some(r) if r.trim().is_empty() => Err(Refusal::illegal("[routing] must not be blank")),
        Some(r) => Ok(r),
        None => Ok(args["owner"].as_str().unwrap_or_default().to_owned()),
    }
}

/// The core's group update: `{"group", "member", "capabilities"?}`.
fn group_update(read: Map<String, Value>, group: Option<&str>) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert(GROUP.into(), group.unwrap_or_default().into());
    args.insert("member".into(), read["owner"].clone());
    if let Some(capabilities) = read.get("value") {
        args.insert("capabilities".into(), capabilities.clone());
    }
    args
}
