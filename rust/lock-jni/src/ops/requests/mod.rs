//! The request bodies of docs/API.md, checked and turned into the core's arguments
//! ([`super::Op::ReadRequest`]). Every request's name, fields, bounds and refusal messages are
//! here and nowhere else: the plugin reads a body with Elasticsearch's tokenizer into one JSON
//! value (so any content type works and a body that is not JSON is refused as Elasticsearch
//! refuses one), hands it over with the key or session of the path, and gets back the core's
//! arguments, or the refusal it renders as a 400 naming the field (docs/ARCHITECTURE.md "The
//! path of one request"). It reads only what routing needs: the key, the locks' keys and scopes, and
//! a session's `routing`.
//!
//! | module | role |
//! |---|---|
//! | `schema` | every request: its body's fields and the rule its whole is held to |
//! | `values` | every field kind: type, bound, conversion, refusal |
//! | `rules` | the rules a whole request is held to |

mod rules;
mod schema;
mod values;

use std::fmt;

use lock_core::{Config, LockError};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use self::schema::{Body, To};
use self::values::{wrong_type, Refusal};
use super::{decode, to_json, BridgeError, Ctx};

/// `{"request", "key"?, "session"?, "body"}`: the request's name (as its refusals name its
/// body), the key or session of its path, and its body as the client sent it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    request: String,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    session: Option<String>,
    body: Ordered,
}

/// A JSON object's members in the order the client wrote them, so that of two bad fields the
/// first is the one refused, as Elasticsearch's parsers do.
struct Ordered(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Value>()? {
                    members.push(member);
                }
                Ok(Ordered(members))
            }
        }
        d.deserialize_map(Members)
    }
}

/// A request's fields as read, before its rule.
#[derive(Default)]
struct Read {
    args: Map<String, Value>,
    /// The body's `routing`, for a request that routes by it.
    routing: Option<String>,
}

/// The answer: the core's arguments and, for a request that routes by neither its key nor its
/// locks' keys, the value it routes by.
#[derive(Serialize)]
struct Parsed {
    args: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    routing: Option<String>,
}

/// The answer of [`super::Op::ReadRequest`]: `{"parsed": {"args", "routing"?}}` or
/// `{"refused": {"parse", "message"}}`. A refusal is an answer, not a failed call: the plugin
/// renders it as the error type it names.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    Parsed(Parsed),
    Refused(Refusal),
}

/// Reads one request body (see the module's documentation). Touches no partition.
pub(super) fn read(cx: &mut Ctx<'_>, args: &str) -> Result<String, BridgeError> {
    let a: ReadArgs = decode(args)?;
    let request = schema::request_named(&a.request).ok_or_else(|| {
        LockError::invalid("request", format!("no request is named [{}]", a.request))
    })?;
    let config = cx.core.config();
    let answer = match read_request(request, &a, &config) {
        Ok(parsed) => Answer::Parsed(parsed),
        Err(refusal) => Answer::Refused(refusal),
    };
    to_json(&answer)
}

fn read_request(
    request: &schema::Request,
    a: &ReadArgs,
    config: &Config,
) -> Result<Parsed, Refusal> {
    let mut read = Read::default();
    for (name, value) in &a.body.0 {
        read_field(&request.body, name, value, config, &mut read)?;
    }
    let path = rules::Path { key: a.key.as_deref(), session: a.session.as_deref() };
    rules::apply(request, read, path, config)
}

fn read_field(
    body: &Body,
    name: &str,
    value: &Value,
    config: &Config,
    read: &mut Read,
) -> Result<(), Refusal> {
    let field = body
        .field(name)
        .ok_or_else(|| Refusal::parse(format!("[{}] unknown field [{name}]", body.name)))?;
    match field.to {
        To::Arg(to) => {
            let v = values::read(field.kind, body.name, name, value, config)?;
            read.args.insert(to.to_owned(), v);
        }
        To::Routing => {
            let v = values::read(field.kind, body.name, name, value, config)?;
            read.routing = v.as_str().map(str::to_owned);
        }
        To::NoRouting if value.is_array() || value.is_object() => {
            return Err(wrong_type(body.name, name, value))
        }
        To::NoRouting => return Err(rules::routing_refused()),
        To::Locks(item) => {
            let locks = read_locks(item, value, config)?;
            read.args.insert(name.to_owned(), Value::Array(locks));
        }
    }
    Ok(())
}

/// A `locks` array, each item read as a body of its own; the item after
/// `locks.max_keys_per_request` is refused before it is read.
fn read_locks(item: &Body, value: &Value, config: &Config) -> Result<Vec<Value>, Refusal> {
    let not_objects = || Refusal::parse("[locks] must be an array of objects");
    let items = value.as_array().ok_or_else(not_objects)?;
    let max = config.limits.max_keys_per_request;
    let mut locks = Vec::with_capacity(items.len().min(max));
    for lock in items {
        if locks.len() == max {
            return Err(Refusal::illegal(format!(
                "[locks] names more than {max} keys (locks.max_keys_per_request)"
            )));
        }
        let members = lock.as_object().ok_or_else(not_objects)?;
        let mut read = Read::default();
        for (name, value) in members {
            read_field(item, name, value, config, &mut read)?;
        }
        if !read.args.contains_key("key") {
            return Err(Refusal::illegal("[key] is required"));
        }
        locks.push(Value::Object(read.args));
    }
    Ok(locks)
}

#[cfg(test)]
mod tests;
