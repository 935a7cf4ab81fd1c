//! What one field of a body may hold, and its value as the core takes it: every type check,
//! bound and conversion of a request's fields, each refusal naming the field (docs/API.md
//! "Errors"). A refusal is a parse error (`x_content_parse_exception`) when the field has a JSON
//! type it never takes, as Elasticsearch's own parsers answer, and an illegal argument otherwise.

use lock_core::{Config, Millis, MAX_ELECTION_VALUE_BYTES, MAX_OWNER_BYTES, MAX_SEMAPHORE_LIMIT};
use serde::Serialize;
use serde_json::Value;

/// Why a body was refused: rendered by the plugin as Elasticsearch's error JSON, 400.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Refusal {
    /// A JSON type the field never takes, an unknown field, a shape that is not the request's:
    /// `x_content_parse_exception`. Otherwise a bad value: `illegal_argument_exception`.
    pub parse: bool,
    pub message: String,
}

impl Refusal {
    pub fn parse(message: impl Into<String>) -> Self {
        Refusal { parse: true, message: message.into() }
    }

    pub fn illegal(message: impl Into<String>) -> Self {
        Refusal { parse: false, message: message.into() }
    }
}

/// The longest wait, lease or lock-delay a field may name, and how a refusal names that bound.
#[derive(Clone, Copy, Debug)]
pub enum Cap {
    /// `locks.wait.max` ([`Config::max_wait_ms`]).
    Wait,
    /// `locks.lease.max` ([`Config::max_lease_ms`]): leases, session TTLs, preemption grace.
    Lease,
    /// [`lock_core::MAX_LOCK_DELAY_MS`].
    LockDelay,
}

impl Cap {
    fn bound(self, config: &Config) -> (Millis, &'static str) {
        match self {
            Cap::Wait => (config.max_wait_ms, "locks.wait.max"),
            Cap::Lease => (config.max_lease_ms, "locks.lease.max"),
            Cap::LockDelay => (lock_core::MAX_LOCK_DELAY_MS, "the longest lock-delay"),
        }
    }
}

/// The kinds of field a body has.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A string, passed on as it is (the core checks what it means).
    Text,
    /// A grant's owner, however the body calls it (`owner`, `candidate`, `member`): at most
    /// [`MAX_OWNER_BYTES`].
    Owner,
    /// `exclusive` or `shared`.
    Mode,
    /// `key` or `tree`.
    Scope,
    /// Any scope a force-release may evict (docs/API.md "Administration").
    AnyScope,
    /// An integer level or a class name; the core checks range and names.
    Priority,
    /// A duration in milliseconds, at most the cap.
    Duration(Cap),
    /// A whole number at least this.
    Whole(i64),
    /// A semaphore's permits or limit: 1..=[`MAX_SEMAPHORE_LIMIT`].
    SemaphoreCount,
    /// `true` or `false`.
    Flag,
    /// An election's value: a string of at most [`MAX_ELECTION_VALUE_BYTES`].
    Value,
    /// Any JSON value but null, kept as its JSON text (a group member's capabilities; the core
    /// bounds the text).
    Json,
}

/// `value` of field `field` of body `body` as the core takes it.
pub fn read(
    kind: Kind,
    body: &str,
    field: &str,
    value: &Value,
    config: &Config,
) -> Result<Value, Refusal> {
    match kind {
        Kind::Text => text(body, field, value).map(Value::from),
        Kind::Owner => bounded(field, text(body, field, value)?, MAX_OWNER_BYTES),
        Kind::Mode => one_of(field, text(body, field, value)?, &["exclusive", "shared"]),
        Kind::Scope => one_of(field, text(body, field, value)?, &["key", "tree"]),
        Kind::AnyScope => {
            one_of(field, text(body, field, value)?, &["key", "tree", "semaphore", "election"])
        }
        Kind::Priority => priority(value),
        Kind::Duration(cap) => duration(field, value, cap, config).map(Value::from),
        Kind::Whole(min) => whole(body, field, value, min).map(Value::from),
        Kind::SemaphoreCount => semaphore_count(body, field, value),
        Kind::Flag => flag(body, field, value).map(Value::from),
        Kind::Value => bounded(field, text(body, field, value)?, MAX_ELECTION_VALUE_BYTES),
        Kind::Json if value.is_null() => Err(wrong_type(body, field, value)),
        Kind::Json => Ok(Value::from(value.to_string())),
    }
}

/// The parser's name of a JSON value's type, as Elasticsearch's errors say it.
pub fn token(value: &Value) -> &'static str {
    match value {
        Value::Null => "VALUE_NULL",
        Value::Bool(_) => "VALUE_BOOLEAN",
        Value::Number(_) => "VALUE_NUMBER",
        Value::String(_) => "VALUE_STRING",
        Value::Array(_) => "START_ARRAY",
        Value::Object(_) => "START_OBJECT",
    }
}

/// A field given a JSON type it never takes.
pub fn wrong_type(body: &str, field: &str, value: &Value) -> Refusal {
    Refusal::parse(format!("[{body}] {field} doesn't support values of type: {}", token(value)))
}

fn text<'v>(body: &str, field: &str, value: &'v Value) -> Result<&'v str, Refusal> {
    value.as_str().ok_or_else(|| wrong_type(body, field, value))
}

fn bounded(field: &str, text: &str, max: usize) -> Result<Value, Refusal> {
    if text.len() > max {
        return Err(Refusal::illegal(format!(
            "[{field}] must be at most {max} bytes (UTF-8), got [{}]",
            text.len()
        )));
    }
    Ok(Value::from(text))
}

fn one_of(field: &str, text: &str, accepted: &[&str]) -> Result<Value, Refusal> {
    if accepted.contains(&text) {
        return Ok(Value::from(text));
    }
    Err(Refusal::illegal(format!(
        "[{field}] must be one of [{}], got [{text}]",
        accepted.join(", ")
    )))
}

fn priority(value: &Value) -> Result<Value, Refusal> {
    match value {
        Value::String(_) => Ok(value.clone()),
        Value::Number(n) if n.is_i64() => Ok(value.clone()),
        Value::Number(_) => Err(Refusal::illegal(format!(
            "[priority] must be an integer 0..9, [background] or [foreground], got [{value}]"
        ))),
        _ => Err(Refusal::parse(format!("[priority] must be a number or a string, got [{value}]"))),
    }
}

/// A whole number (a JSON integer, or a string holding one, as Elasticsearch's long fields take).
fn whole(body: &str, field: &str, value: &Value, min: i64) -> Result<i64, Refusal> {
    let n = match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => return Err(wrong_type(body, field, value)),
    };
    let n = n.ok_or_else(|| {
        Refusal::parse(format!(
            "[{body}] failed to parse field [{field}]: [{value}] is not a whole number in the \
             range of a long"
        ))
    })?;
    if n < min {
        let rule =
            if min == 0 { "must not be negative" } else { "must be a positive whole number" };
        return Err(Refusal::illegal(format!("[{field}] {rule}, got [{n}]")));
    }
    Ok(n)
}

fn semaphore_count(body: &str, field: &str, value: &Value) -> Result<Value, Refusal> {
    let n = whole(body, field, value, i64::MIN)?;
    if n < 1 || n > i64::from(MAX_SEMAPHORE_LIMIT) {
        return Err(Refusal::illegal(format!(
            "[{field}] must be 1..{MAX_SEMAPHORE_LIMIT}, got [{n}]"
        )));
    }
    Ok(Value::from(n))
}

fn flag(body: &str, field: &str, value: &Value) -> Result<bool, Refusal> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s == "true" => Ok(true),
        Value::String(s) if s == "false" => Ok(false),
        Value::String(s) => Err(Refusal::parse(format!(
            "[{body}] failed to parse field [{field}]: only [true] or [false] are allowed, got [{s}]"
        ))),
        _ => Err(wrong_type(body, field, value)),
    }
}

/// A duration: an Elasticsearch time value (`500ms`, `2s`, `1m`) or whole milliseconds; never
/// negative, never above the cap.
fn duration(field: &str, value: &Value, cap: Cap, config: &Config) -> Result<Millis, Refusal> {
    let millis = match value {
        Value::Number(n) => n.as_i64().ok_or_else(|| {
            Refusal::illegal(format!(
                "[{field}] must be whole milliseconds or a time value like [500ms], got [{value}]"
            ))
        })?,
        Value::String(s) => time_value(s).ok_or_else(|| {
            Refusal::illegal(format!(
                "[{field}] must be a time value like [500ms], [2s] or [1m], got [{s}]"
            ))
        })?,
        _ => {
            return Err(Refusal::parse(format!(
                "[{field}] must be a time value like [500ms], [2s] or [1m]"
            )))
        }
    };
    let shown = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
    if millis < 0 {
        return Err(Refusal::illegal(format!("[{field}] must not be negative, got [{shown}]")));
    }
    let (max, setting) = cap.bound(config);
    if millis as u64 > max {
        return Err(Refusal::illegal(format!(
            "[{field}] must be at most [{}] ({setting}), got [{shown}]",
            human(max)
        )));
    }
    Ok(millis as u64)
}

/// Milliseconds of a time value as Elasticsearch reads one (`TimeValue.parseTimeValue`): a
/// whole number and a unit, any case, `0` and `-1` alone without one; a value too large for a
/// long of milliseconds saturates (and is then above every cap). `None` when it is not one.
pub fn time_value(text: &str) -> Option<i64> {
    const UNITS: [(&str, i64, i64); 7] = [
        ("nanos", 1, 1_000_000),
        ("micros", 1, 1_000),
        ("ms", 1, 1),
        ("s", 1_000, 1),
        ("m", 60_000, 1),
        ("h", 3_600_000, 1),
        ("d", 86_400_000, 1),
    ];
    let normalized = text.trim().to_ascii_lowercase();
    for (suffix, times, per) in UNITS {
        if let Some(number) = normalized.strip_suffix(suffix) {
            let n: i64 = number.trim().parse().ok()?;
            return Some(
                n.checked_mul(times).map_or(if n < 0 { i64::MIN } else { i64::MAX }, |v| v / per),
            );
        }
    }
    match normalized.as_str() {
        s if !s.is_empty() && s.bytes().all(|b| b == b'0') => Some(0),
        s if s.starts_with('-') && s[1..].trim_start_matches('0') == "1" => Some(-1),
        _ => None,
    }
}

/// A bound as a time value: the largest whole unit (`5m`, `10m`, `1m`), else milliseconds.
fn human(ms: Millis) -> String {
    for (unit, size) in [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)] {
        if ms >= size && ms % size == 0 {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn time_values_read_as_elasticsearch_reads_them() {
        assert_eq!(time_value("500ms"), Some(500));
        assert_eq!(time_value(" 2S "), Some(2_000));
        assert_eq!(time_value("1m"), Some(60_000));
        assert_eq!(time_value("1500micros"), Some(1));
        assert_eq!(time_value("0"), Some(0));
        assert_eq!(time_value("-1"), Some(-1));
        assert_eq!(time_value("-1s"), Some(-1_000));
        assert_eq!(time_value("999999999999999999d"), Some(i64::MAX));
        for bad in ["10", "1x", "soon", "", "1.5s", "s"] {
            assert_eq!(time_value(bad), None, "{bad}");
        }
    }

    #[test]
    fn durations_are_refused_naming_the_field_and_the_cap() {
        let config = Config::default();
        let read = |v: Value| duration("wait", &v, Cap::Wait, &config);
        assert_eq!(read(json!("2s")), Ok(2_000));
        assert_eq!(read(json!(300_000)), Ok(300_000));
        let over = read(json!("6m")).expect_err("refused");
        assert!(!over.parse && over.message.contains("at most [5m] (locks.wait.max)"), "{over:?}");
        assert!(!read(json!(-5)).expect_err("refused").parse);
        assert!(!read(json!(1e300)).expect_err("refused").parse);
        assert!(read(json!(true)).expect_err("refused").parse);
        let delay =
            duration("lock_delay", &json!("2m"), Cap::LockDelay, &config).expect_err("refused");
        assert!(delay.message.contains("[1m] (the longest lock-delay)"), "{delay:?}");
    }

    #[test]
    fn numbers_and_flags_take_what_elasticsearchs_long_and_boolean_fields_take() {
        assert_eq!(whole("b", "fencing_token", &json!("7"), 0), Ok(7));
        assert!(whole("b", "fencing_token", &json!(-5), 0)
            .expect_err("refused")
            .message
            .contains("negative"));
        assert!(
            whole("b", "fencing_token", &json!(18446744073709551619u128 as f64), 0)
                .expect_err("refused")
                .parse
        );
        assert!(whole("b", "term", &json!(0), 1)
            .expect_err("refused")
            .message
            .contains("positive"));
        assert!(flag("b", "all", &json!("yes")).expect_err("refused").parse);
        assert_eq!(flag("b", "all", &json!("true")), Ok(true));
        assert!(semaphore_count("b", "limit", &json!(65_536)).is_err());
    }
}
