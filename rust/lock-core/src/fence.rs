//! Fenced changes to a protected document (docs/API.md "Fenced changes"; the argument:
//! docs/ARCHITECTURE.md "Protected data").
//!
//! A lock protects data only if a holder that paused past its lease cannot change the data once a
//! newer holder exists. Elasticsearch's `version_type=external_gte` gives that for a blind write,
//! but not for a read-modify-write (a stale write landing between the newer holder's read and
//! write is accepted, then overwritten) and not for deletes once Elasticsearch forgets the
//! tombstone (`index.gc_deletes`). So the check is made where the document is applied: the
//! plugin's update script (`org.eslm.script`) hands this module the document as its primary holds
//! it and the change with its fencing token, in one `_update`, and writes back what it answers.
//!
//! The document keeps the highest token that changed it in [`FENCE_FIELD`]: `{"token", "key",
//! "deleted"?}`. A change applies only when its token is at least that token (the same holder may
//! write many times); a smaller one changes nothing and is answered [`FenceOutcome::Stale`]. The
//! key is kept too, since tokens compare only within one lock's key: a token of another key is
//! refused as a bad argument. A delete leaves a tombstone — the fence and `"deleted": true`, no
//! other field — so the fence outlives the delete; a change to a tombstone starts from an empty
//! document. A fenced touch (no change) of a missing document leaves a tombstone too, so that a
//! fenced read of a missing document also raises the fence.

use serde_json::{Map, Number, Value};

use crate::error::LockError;
use crate::validate::validate_key;

/// The field of a fenced document that holds its fence (`{"token", "key", "deleted"?}`).
pub const FENCE_FIELD: &str = "eslm_fence";

/// A JSON object: a document's source, or part of one.
pub type Object = Map<String, Value>;

/// A change asked for, with the token and key of the lock that fences it (the script's params).
#[derive(Debug, Clone, PartialEq)]
pub struct FenceRequest {
    pub token: u64,
    pub key: String,
    pub change: Change,
}

/// What a fenced request does to the document.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Only raise the fence (a fenced read: the document as it is, no stale holder after it).
    Touch,
    /// Merge a partial document, as Elasticsearch's `_update` with `doc` does: objects merged
    /// field by field, anything else replaced.
    Merge(Object),
    /// The whole new document (a fenced index).
    Replace(Object),
    /// Field operations applied in order to the document as the primary holds it, so that
    /// counters and lists need no read by the client.
    Ops(Vec<FieldOp>),
    /// Delete: leave a tombstone that keeps the fence.
    Delete,
}

/// One operation on a field, named by a dotted path (`"stats.count"`).
#[derive(Debug, Clone, PartialEq)]
pub enum FieldOp {
    /// Set the field (objects on the way are created).
    Set { path: Vec<String>, value: Value },
    /// Add a number to the field (a missing field counts as 0).
    Inc { path: Vec<String>, by: Number },
    /// Append to the list in the field (a missing field is an empty list).
    Append { path: Vec<String>, value: Value },
    /// Remove the field if it is there.
    Remove { path: Vec<String> },
}

/// The document's fence as it was before the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    pub token: u64,
    pub key: Option<String>,
    pub deleted: bool,
}

/// What the primary must do with the document.
#[derive(Debug, Clone, PartialEq)]
pub enum FenceOutcome {
    /// Write this source (it carries the new fence).
    Write(Object),
    /// Write nothing: the change leaves the document and its fence as they are.
    Unchanged { fence: u64 },
    /// Write nothing: a newer token has changed the document.
    Stale { fence: u64 },
}

impl FenceRequest {
    /// Reads the script's params: `token` and `key` required, at most one of `doc` (merge),
    /// `replace`, `ops`, `delete: true`; none of them is a touch. Refusals name the field.
    pub fn from_params(params: &Object) -> Result<Self, LockError> {
        for name in params.keys() {
            if !matches!(name.as_str(), "token" | "key" | "doc" | "replace" | "ops" | "delete") {
                return Err(LockError::invalid(
                    "params",
                    format!("unknown parameter [{name}] of a fenced change"),
                ));
            }
        }
        let token = match params.get("token") {
            Some(Value::Number(n)) => n.as_u64().filter(|t| *t > 0),
            None => return Err(LockError::invalid("token", "is required")),
            _ => None,
        }
        .ok_or_else(|| {
            LockError::invalid("token", "must be a fencing token (an integer above 0)")
        })?;
        let key = match params.get("key") {
            Some(Value::String(k)) => validate_key(k).map(|()| k.clone())?,
            None => return Err(LockError::invalid("key", "is required")),
            _ => return Err(LockError::invalid("key", "must be a string")),
        };
        Ok(FenceRequest { token, key, change: change_of(params)? })
    }
}

/// The change the params name: at most one of `doc`, `replace`, `ops`, `delete`.
fn change_of(params: &Object) -> Result<Change, LockError> {
    let named: Vec<&str> = ["doc", "replace", "ops", "delete"]
        .into_iter()
        .filter(|n| params.contains_key(*n))
        .collect();
    if named.len() > 1 {
        return Err(LockError::invalid(
            "params",
            format!(
                "a fenced change takes one of [doc], [replace], [ops], [delete], not {named:?}"
            ),
        ));
    }
    match named.first().copied() {
        None => Ok(Change::Touch),
        Some("doc") => Ok(Change::Merge(document(params, "doc")?)),
        Some("replace") => Ok(Change::Replace(document(params, "replace")?)),
        Some("ops") => ops_of(&params["ops"]).map(Change::Ops),
        _ => match params.get("delete") {
            Some(Value::Bool(true)) => Ok(Change::Delete),
            _ => Err(LockError::invalid("delete", "must be true when given")),
        },
    }
}

/// The object in `params[name]`, which must not carry the fence itself.
fn document(params: &Object, name: &'static str) -> Result<Object, LockError> {
    match params.get(name) {
        Some(Value::Object(doc)) if doc.contains_key(FENCE_FIELD) => Err(LockError::invalid(
            name,
            format!("must not set [{FENCE_FIELD}]: the fence is the plugin's to write"),
        )),
        Some(Value::Object(doc)) => Ok(doc.clone()),
        _ => Err(LockError::invalid(name, "must be an object")),
    }
}

/// The list of field operations: `[{"op": "set" | "inc" | "append" | "remove", "field", "value"?}]`.
fn ops_of(value: &Value) -> Result<Vec<FieldOp>, LockError> {
    let Value::Array(items) = value else {
        return Err(LockError::invalid("ops", "must be a list of field operations"));
    };
    items.iter().enumerate().map(|(i, item)| field_op(i, item)).collect()
}

fn field_op(i: usize, item: &Value) -> Result<FieldOp, LockError> {
    let bad = |reason: String| LockError::invalid("ops", format!("entry {i}: {reason}"));
    let Value::Object(op) = item else {
        return Err(bad("must be an object {\"op\", \"field\", \"value\"?}".into()));
    };
    if let Some(unknown) = op.keys().find(|k| !matches!(k.as_str(), "op" | "field" | "value")) {
        return Err(bad(format!("unknown member [{unknown}]")));
    }
    let path = match op.get("field") {
        Some(Value::String(f)) => field_path(f).map_err(bad)?,
        _ => return Err(bad("[field] is required, a dotted field name".into())),
    };
    let value = op.get("value").cloned();
    match (op.get("op").and_then(Value::as_str), value) {
        (Some("set"), Some(value)) => Ok(FieldOp::Set { path, value }),
        (Some("inc"), Some(Value::Number(by))) => Ok(FieldOp::Inc { path, by }),
        (Some("inc"), _) => Err(bad("[value] of [inc] must be a number".into())),
        (Some("append"), Some(value)) => Ok(FieldOp::Append { path, value }),
        (Some("remove"), None) => Ok(FieldOp::Remove { path }),
        (Some("remove"), Some(_)) => Err(bad("[remove] takes no [value]".into())),
        (Some("set" | "append"), None) => Err(bad("[value] is required".into())),
        (other, _) => {
            Err(bad(format!("[op] must be one of [set], [inc], [append], [remove], not {other:?}")))
        }
    }
}

/// `"a.b.c"` -> `["a", "b", "c"]`; no empty segment, and never the fence.
fn field_path(field: &str) -> Result<Vec<String>, String> {
    let path: Vec<String> = field.split('.').map(str::to_owned).collect();
    if path.iter().any(String::is_empty) {
        return Err(format!("[field] [{field}] has an empty segment"));
    }
    if path[0] == FENCE_FIELD {
        return Err(format!(
            "[field] must not name [{FENCE_FIELD}]: the fence is the plugin's to write"
        ));
    }
    Ok(path)
}

/// The fence a document carries: none on a missing document or one never fenced. A fence field
/// that is not one (a user's own field of that name) is refused rather than overwritten.
pub fn fence_of(source: Option<&Object>) -> Result<Option<Fence>, LockError> {
    let Some(value) = source.and_then(|s| s.get(FENCE_FIELD)) else {
        return Ok(None);
    };
    let not_a_fence =
        || LockError::invalid("eslm_fence", format!("of the document is not a fence: {value}"));
    let Value::Object(fence) = value else { return Err(not_a_fence()) };
    let token = fence.get("token").and_then(Value::as_u64).ok_or_else(not_a_fence)?;
    let key = match fence.get("key") {
        None => None,
        Some(Value::String(k)) => Some(k.clone()),
        Some(_) => return Err(not_a_fence()),
    };
    let deleted = match fence.get("deleted") {
        None => false,
        Some(Value::Bool(d)) => *d,
        Some(_) => return Err(not_a_fence()),
    };
    Ok(Some(Fence { token, key, deleted }))
}

/// Applies `request` to `source` (None: the document does not exist): the source to write, or
/// why nothing is written. A token of another key than the one fencing the document, or a change
/// that does not fit the document (an `inc` of text), is refused with the field named.
pub fn apply(source: Option<&Object>, request: &FenceRequest) -> Result<FenceOutcome, LockError> {
    let fence = fence_of(source)?;
    if let Some(Fence { key: Some(fenced_by), .. }) = &fence {
        if *fenced_by != request.key {
            return Err(LockError::invalid(
                "key",
                format!(
                    "[{}] is not the lock that fences this document, [{fenced_by}]: tokens of \
                     different locks do not compare",
                    request.key
                ),
            ));
        }
    }
    let seen = fence.as_ref().map_or(0, |f| f.token);
    if request.token < seen {
        return Ok(FenceOutcome::Stale { fence: seen });
    }
    let was_deleted = source.is_none() || fence.as_ref().is_some_and(|f| f.deleted);
    let mut body = match (&fence, source) {
        (Some(Fence { deleted: true, .. }), _) | (_, None) => Object::new(),
        (_, Some(s)) => without_fence(s),
    };
    let deleted = match &request.change {
        Change::Touch => was_deleted,
        Change::Merge(doc) => {
            merge(&mut body, doc);
            false
        }
        Change::Replace(doc) => {
            body = doc.clone();
            false
        }
        Change::Ops(ops) => {
            ops.iter().try_for_each(|op| apply_op(&mut body, op))?;
            false
        }
        Change::Delete => {
            body.clear();
            true
        }
    };
    let unchanged = request.token == seen
        && fence.as_ref().is_some_and(|f| f.key.is_some() && f.deleted == deleted)
        && source.is_some_and(|s| without_fence(s) == body || (deleted && was_deleted));
    if unchanged {
        return Ok(FenceOutcome::Unchanged { fence: seen });
    }
    body.insert(FENCE_FIELD.to_owned(), fence_value(request, deleted));
    Ok(FenceOutcome::Write(body))
}

fn without_fence(source: &Object) -> Object {
    let mut body = source.clone();
    body.remove(FENCE_FIELD);
    body
}

fn fence_value(request: &FenceRequest, deleted: bool) -> Value {
    let mut fence = Object::new();
    fence.insert("token".into(), Value::from(request.token));
    fence.insert("key".into(), Value::from(request.key.clone()));
    if deleted {
        fence.insert("deleted".into(), Value::Bool(true));
    }
    Value::Object(fence)
}

/// Elasticsearch's partial-document merge: objects merged member by member, anything else
/// (lists, scalars, null) replaces what was there.
fn merge(into: &mut Object, patch: &Object) {
    for (name, value) in patch {
        match (into.get_mut(name), value) {
            (Some(Value::Object(inner)), Value::Object(more)) => merge(inner, more),
            _ => {
                into.insert(name.clone(), value.clone());
            }
        }
    }
}

fn apply_op(body: &mut Object, op: &FieldOp) -> Result<(), LockError> {
    match op {
        FieldOp::Set { path, value } => {
            let (parent, last) = parent_of(body, path)?;
            parent.insert(last.to_owned(), value.clone());
        }
        FieldOp::Inc { path, by } => {
            let (parent, last) = parent_of(body, path)?;
            let sum = match parent.get(last) {
                None | Some(Value::Null) => Value::Number(by.clone()),
                Some(Value::Number(n)) => add(n, by, path)?,
                Some(other) => return Err(not_fit(path, "[inc] needs a number", other)),
            };
            parent.insert(last.to_owned(), sum);
        }
        FieldOp::Append { path, value } => {
            let (parent, last) = parent_of(body, path)?;
            match parent.entry(last.to_owned()).or_insert_with(|| Value::Array(Vec::new())) {
                Value::Array(items) => items.push(value.clone()),
                other => return Err(not_fit(path, "[append] needs a list", other)),
            }
        }
        FieldOp::Remove { path } => {
            if let Ok((parent, last)) = parent_of(body, path) {
                parent.remove(last);
            }
        }
    }
    Ok(())
}

/// The object holding the last segment of `path`, objects on the way created; a segment on the
/// way that holds something else than an object is refused.
fn parent_of<'a>(
    body: &'a mut Object,
    path: &'a [String],
) -> Result<(&'a mut Object, &'a str), LockError> {
    let (last, ancestors) = path.split_last().expect("field paths have a segment");
    let mut at = body;
    for (depth, name) in ancestors.iter().enumerate() {
        let next = at.entry(name.clone()).or_insert_with(|| Value::Object(Object::new()));
        at = match next {
            Value::Object(inner) => inner,
            other => {
                return Err(not_fit(&path[..=depth], "a field on the way must be an object", other))
            }
        };
    }
    Ok((at, last))
}

/// `a + b`: whole numbers stay whole (refused on overflow), anything else is a float.
fn add(a: &Number, b: &Number, path: &[String]) -> Result<Value, LockError> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.checked_add(y).map(Value::from).ok_or_else(|| {
            LockError::invalid(
                "ops",
                format!("[inc] of [{}] overflows a 64-bit integer", path.join(".")),
            )
        });
    }
    let sum = a.as_f64().unwrap_or(f64::NAN) + b.as_f64().unwrap_or(f64::NAN);
    Number::from_f64(sum).map(Value::Number).ok_or_else(|| {
        LockError::invalid("ops", format!("[inc] of [{}] is not a finite number", path.join(".")))
    })
}

fn not_fit(path: &[String], need: &str, found: &Value) -> LockError {
    LockError::invalid("ops", format!("{need}; the document's [{}] holds {found}", path.join(".")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Object {
        match v {
            Value::Object(o) => o,
            _ => panic!("not an object"),
        }
    }

    fn request(token: u64, change: Value) -> FenceRequest {
        let mut params = obj(change);
        params.insert("token".into(), json!(token));
        params.insert("key".into(), json!("k"));
        FenceRequest::from_params(&params).expect("valid params")
    }

    fn written(outcome: FenceOutcome) -> Value {
        match outcome {
            FenceOutcome::Write(source) => Value::Object(source),
            other => panic!("expected a write, got {other:?}"),
        }
    }

    #[test]
    fn a_missing_document_is_created_with_its_fence() {
        let out = apply(None, &request(5, json!({"doc": {"n": 1}}))).expect("applies");
        assert_eq!(written(out), json!({"n": 1, "eslm_fence": {"token": 5, "key": "k"}}));
    }

    #[test]
    fn a_smaller_token_is_stale_and_an_equal_one_applies() {
        let doc = obj(json!({"n": 1, "eslm_fence": {"token": 7, "key": "k"}}));
        assert_eq!(
            apply(Some(&doc), &request(6, json!({"doc": {"n": 2}}))).expect("answers"),
            FenceOutcome::Stale { fence: 7 }
        );
        let out = apply(Some(&doc), &request(7, json!({"doc": {"n": 2}}))).expect("applies");
        assert_eq!(written(out), json!({"n": 2, "eslm_fence": {"token": 7, "key": "k"}}));
    }

    #[test]
    fn ops_count_append_set_and_remove_on_the_primarys_document() {
        let doc =
            obj(json!({"n": 1, "items": ["a"], "gone": 1, "eslm_fence": {"token": 3, "key": "k"}}));
        let ops = json!({"ops": [
            {"op": "inc", "field": "n", "value": 2},
            {"op": "append", "field": "items", "value": "b"},
            {"op": "set", "field": "meta.by", "value": "w1"},
            {"op": "remove", "field": "gone"},
            {"op": "inc", "field": "ratio", "value": 0.5},
        ]});
        let out = apply(Some(&doc), &request(4, ops)).expect("applies");
        assert_eq!(
            written(out),
            json!({"n": 3, "items": ["a", "b"], "meta": {"by": "w1"}, "ratio": 0.5,
                   "eslm_fence": {"token": 4, "key": "k"}})
        );
    }

    #[test]
    fn a_delete_leaves_a_tombstone_whose_fence_refuses_an_older_token() {
        let doc = obj(json!({"n": 1, "eslm_fence": {"token": 3, "key": "k"}}));
        let tomb =
            obj(written(apply(Some(&doc), &request(4, json!({"delete": true}))).expect("deletes")));
        assert_eq!(
            Value::Object(tomb.clone()),
            json!({"eslm_fence": {"token": 4, "key": "k", "deleted": true}})
        );
        assert_eq!(
            apply(Some(&tomb), &request(3, json!({"doc": {"n": 9}}))).expect("answers"),
            FenceOutcome::Stale { fence: 4 }
        );
        let again = apply(
            Some(&tomb),
            &request(5, json!({"ops": [{"op": "inc", "field": "n", "value": 1}]})),
        );
        assert_eq!(
            written(again.expect("re-creates")),
            json!({"n": 1, "eslm_fence": {"token": 5, "key": "k"}})
        );
    }

    #[test]
    fn a_touch_raises_the_fence_and_is_unchanged_at_the_same_token() {
        let doc = obj(json!({"n": 1, "eslm_fence": {"token": 3, "key": "k"}}));
        let raised = obj(written(apply(Some(&doc), &request(8, json!({}))).expect("raises")));
        assert_eq!(
            Value::Object(raised.clone()),
            json!({"n": 1, "eslm_fence": {"token": 8, "key": "k"}})
        );
        assert_eq!(
            apply(Some(&raised), &request(8, json!({}))).expect("answers"),
            FenceOutcome::Unchanged { fence: 8 }
        );
        let same = apply(Some(&raised), &request(8, json!({"doc": {"n": 1}}))).expect("answers");
        assert_eq!(same, FenceOutcome::Unchanged { fence: 8 });
    }

    #[test]
    fn a_touch_of_a_missing_document_leaves_a_tombstone() {
        let out = apply(None, &request(2, json!({}))).expect("raises");
        assert_eq!(written(out), json!({"eslm_fence": {"token": 2, "key": "k", "deleted": true}}));
    }

    #[test]
    fn a_token_of_another_key_is_refused() {
        let doc = obj(json!({"eslm_fence": {"token": 3, "key": "other"}}));
        let err = apply(Some(&doc), &request(9, json!({}))).expect_err("refused");
        assert!(
            err.to_string().contains("not the lock that fences this document, [other]"),
            "{err}"
        );
    }

    #[test]
    fn bad_params_are_refused_naming_the_field() {
        let refused = |params: Value| {
            FenceRequest::from_params(&obj(params)).expect_err("refused").to_string()
        };
        assert!(refused(json!({"key": "k"})).contains("[token] is required"));
        assert!(refused(json!({"token": 0, "key": "k"})).contains("[token] must be"));
        assert!(refused(json!({"token": 1})).contains("[key] is required"));
        assert!(
            refused(json!({"token": 1, "key": "k", "doc": {}, "delete": true})).contains("one of")
        );
        assert!(refused(json!({"token": 1, "key": "k", "doc": {"eslm_fence": 1}}))
            .contains("must not set"));
        assert!(refused(json!({"token": 1, "key": "k", "ops": [{"op": "inc", "field": "n"}]}))
            .contains("[ops] entry 0"));
        assert!(refused(
            json!({"token": 1, "key": "k", "ops": [{"op": "set", "field": "a..b", "value": 1}]})
        )
        .contains("empty segment"));
        assert!(refused(json!({"token": 1, "key": "k", "tokn": 1}))
            .contains("unknown parameter [tokn]"));
    }

    #[test]
    fn a_change_that_does_not_fit_the_document_is_refused() {
        let doc = obj(json!({"n": "text", "eslm_fence": {"token": 1, "key": "k"}}));
        let err = apply(
            Some(&doc),
            &request(2, json!({"ops": [{"op": "inc", "field": "n", "value": 1}]})),
        );
        assert!(err.expect_err("refused").to_string().contains("[inc] needs a number"));
        let odd = obj(json!({"eslm_fence": "mine"}));
        assert!(apply(Some(&odd), &request(2, json!({})))
            .expect_err("refused")
            .to_string()
            .contains("not a fence"));
    }
}
