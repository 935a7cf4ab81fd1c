//! Every check of a caller's input, in one place: key, owner and tree-path syntax, the
//! priority range, lease and TTL lengths, the epoch, and the configured per-request limits.
//!
//! The table calls these before it touches any state (the "validate" step of an acquire, see
//! `table/README.md`), so a refused request never leaves a trace.

use crate::config::{Config, Limits};
use crate::error::LockError;
use crate::types::{
    acquisition_digest, FencingToken, Millis, Priority, PriorityValue, Scope,
    MAX_ACQUISITION_BYTES, MAX_KEY_BYTES, MAX_OWNER_BYTES,
};

impl Priority {
    /// Validates a caller's priority; `None` is [`Priority::FOREGROUND`].
    pub fn parse(value: Option<&PriorityValue>) -> Result<Priority, LockError> {
        match value {
            None => Ok(Priority::FOREGROUND),
            Some(PriorityValue::Level(l)) => {
                u8::try_from(*l).ok().filter(|l| *l <= Priority::MAX.0).map(Priority).ok_or_else(
                    || LockError::invalid("priority", format!("must be 0..=9, got {l}")),
                )
            }
            Some(PriorityValue::Name(n)) => match n.as_str() {
                "background" => Ok(Priority::BACKGROUND),
                "foreground" => Ok(Priority::FOREGROUND),
                other => Err(LockError::invalid(
                    "priority",
                    format!("must be 0..=9, [background] or [foreground], got [{other}]"),
                )),
            },
        }
    }
}

/// Checks a key: 1..=512 bytes of UTF-8 (guaranteed by `&str`) with no control characters.
pub fn validate_key(key: &str) -> Result<(), LockError> {
    validate_id("key", key, MAX_KEY_BYTES)
}

/// Checks an owner id: the same rules as a key.
pub fn validate_owner(owner: &str) -> Result<(), LockError> {
    validate_id("owner", owner, MAX_OWNER_BYTES)
}

/// Checks an acquisition id (the same rules as an owner, at most
/// [`MAX_ACQUISITION_BYTES`]) and answers what the table keeps of it: its digest, or 0 for none.
pub fn acquisition(id: Option<&str>) -> Result<u64, LockError> {
    match id {
        None => Ok(0),
        Some(id) => {
            validate_id("acquisition", id, MAX_ACQUISITION_BYTES)?;
            Ok(acquisition_digest(id))
        }
    }
}

/// Checks a tree path: an absolute `/` path of non-empty segments, at most `max_depth` of them.
pub fn validate_tree_path(path: &str, max_depth: usize) -> Result<(), LockError> {
    validate_key(path)?;
    let Some(rest) = path.strip_prefix('/') else {
        return Err(LockError::invalid(
            "key",
            "a tree key must be an absolute path starting with /",
        ));
    };
    let mut depth = 0usize;
    for seg in rest.split('/') {
        if seg.is_empty() {
            return Err(LockError::invalid("key", "a tree path must not have empty segments"));
        }
        depth += 1;
    }
    if depth > max_depth {
        return Err(LockError::invalid(
            "key",
            format!("a tree path must have at most {max_depth} segments, got {depth}"),
        ));
    }
    Ok(())
}

/// The proper ancestors of a valid tree path, root first: `/a/b/c` → `/a`, `/a/b`.
pub fn tree_ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.char_indices().skip(1).filter(|(_, c)| *c == '/').map(move |(i, _)| &path[..i])
}

fn validate_id(field: &'static str, value: &str, max: usize) -> Result<(), LockError> {
    // Fast path for the common case: printable ASCII, not all spaces.
    let b = value.as_bytes();
    if b.len() <= max
        && b.iter().any(|&c| c != b' ')
        && b.iter().all(|&c| c.wrapping_sub(0x20) < 0x5f)
    {
        return Ok(());
    }
    if value.trim().is_empty() {
        return Err(LockError::invalid(field, "must not be empty or blank"));
    }
    if value.len() > max {
        return Err(LockError::invalid(
            field,
            format!("must be at most {max} bytes, got {}", value.len()),
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(LockError::invalid(field, "must not contain control characters"));
    }
    Ok(())
}

/// Checks a key against its scope's syntax and the configured `max_key_bytes`.
pub(crate) fn name(name: &str, scope: Scope, limits: &Limits) -> Result<(), LockError> {
    validate_key(name)?;
    if name.len() > limits.max_key_bytes {
        return Err(LockError::invalid(
            "key",
            format!("must be at most {} bytes, got {}", limits.max_key_bytes, name.len()),
        ));
    }
    if scope == Scope::Tree {
        validate_tree_path(name, limits.max_tree_depth)?;
    }
    Ok(())
}

/// A caller's lease length: absent is the default lease, 0 is refused, longer than the
/// maximum is capped.
pub(crate) fn lease(config: &Config, lease_ms: Option<Millis>) -> Result<Millis, LockError> {
    positive_capped(config, "lease_ms", lease_ms)
}

/// A caller's session TTL: the same rules as a lease, naming `ttl_ms`.
pub(crate) fn ttl(config: &Config, ttl_ms: Option<Millis>) -> Result<Millis, LockError> {
    positive_capped(config, "ttl_ms", ttl_ms)
}

fn positive_capped(
    config: &Config,
    field: &'static str,
    value: Option<Millis>,
) -> Result<Millis, LockError> {
    match value {
        None => Ok(config.default_lease_ms),
        Some(0) => Err(LockError::invalid(field, "must be positive")),
        Some(v) => Ok(v.min(config.max_lease_ms)),
    }
}

/// An epoch must fit the high bits of a [`FencingToken`].
pub(crate) fn epoch(epoch: u64) -> Result<(), LockError> {
    if epoch > FencingToken::MAX_EPOCH {
        return Err(LockError::invalid(
            "epoch",
            format!("must be at most {}, got {epoch}", FencingToken::MAX_EPOCH),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_validated() {
        assert!(validate_key("a").is_ok());
        assert!(validate_key(&"k".repeat(MAX_KEY_BYTES)).is_ok());
        for bad in ["", "  ", "a\nb", "\u{0}"] {
            let err = validate_key(bad).expect_err(bad);
            assert_eq!(err.field(), Some("key"));
        }
        let err = validate_key(&"k".repeat(MAX_KEY_BYTES + 1)).expect_err("too long");
        assert!(err.to_string().contains("at most 512 bytes"), "{err}");
        assert_eq!(validate_owner("").expect_err("blank").field(), Some("owner"));
    }

    #[test]
    fn priorities_are_validated_naming_the_field() {
        for bad in
            [PriorityValue::Level(10), PriorityValue::Level(-1), PriorityValue::Name("x".into())]
        {
            assert_eq!(Priority::parse(Some(&bad)).expect_err("bad").field(), Some("priority"));
        }
        assert_eq!(Priority::parse(None).expect("default"), Priority::FOREGROUND);
    }

    #[test]
    fn priority_values_read_and_write_both_wire_forms() {
        let read = |json: &str| serde_json::from_str::<PriorityValue>(json);
        assert_eq!(read("3").expect("level"), PriorityValue::Level(3));
        assert_eq!(read("-1").expect("negative"), PriorityValue::Level(-1));
        assert_eq!(read("\"background\"").expect("name"), PriorityValue::Name("background".into()));
        // Too large for i64: still a level, refused by Priority::parse with the field named.
        let huge = read("18446744073709551615").expect("u64");
        assert_eq!(Priority::parse(Some(&huge)).expect_err("range").field(), Some("priority"));
        for bad in ["1.5", "true", "null", "[1]", "{}"] {
            let err = read(bad).expect_err(bad);
            assert!(err.to_string().contains("an integer 0..=9"), "{bad}: {err}");
        }
        for v in [PriorityValue::Level(7), PriorityValue::Name("foreground".into())] {
            let text = serde_json::to_string(&v).expect("write");
            assert_eq!(read(&text).expect("round trip"), v);
        }
    }

    #[test]
    fn tree_paths() {
        assert!(validate_tree_path("/a/b/c", 8).is_ok());
        for bad in ["a/b", "/", "/a//b", "/a/", ""] {
            assert_eq!(validate_tree_path(bad, 8).expect_err(bad).field(), Some("key"), "{bad}");
        }
        assert!(validate_tree_path("/a/b/c", 2).is_err());
        assert_eq!(tree_ancestors("/a/b/c").collect::<Vec<_>>(), vec!["/a", "/a/b"]);
        assert_eq!(tree_ancestors("/a").count(), 0);
    }
}
