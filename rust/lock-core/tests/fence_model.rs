//! Fenced changes under every interleaving (`lock_core::fence`, docs/ARCHITECTURE.md "Protected
//! data"): holders with rising tokens change one counter document, some by a read-modify-write (a
//! fenced read, then the whole document written back from what was read), some by a field
//! operation, their steps interleaved at random as pauses past a lease would interleave them. After
//! every step the fence never falls; at the end the counter holds exactly one increment per
//! acknowledged change: no acknowledged change is lost, none refused is in it.

use lock_core::fence::{apply, FenceOutcome, FenceRequest, Object};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common;

/// What a holder does: a read-modify-write (two steps) or one increment (one step).
#[derive(Debug, Clone, Copy)]
enum Kind {
    ReadModifyWrite,
    Increment,
}

fn request(token: u64, change: Value) -> FenceRequest {
    let mut params = match change {
        Value::Object(o) => o,
        _ => unreachable!("changes are objects"),
    };
    params.insert("token".into(), json!(token));
    params.insert("key".into(), json!("k"));
    FenceRequest::from_params(&params).expect("valid")
}

fn counter(doc: &Option<Object>) -> i64 {
    doc.as_ref().and_then(|d| d.get("n")).and_then(Value::as_i64).unwrap_or(0)
}

fn fence(doc: &Option<Object>) -> u64 {
    lock_core::fence::fence_of(doc.as_ref()).expect("a fence").map_or(0, |f| f.token)
}

/// Applies one change: whether it was acknowledged (written, or unchanged).
fn step(doc: &mut Option<Object>, token: u64, change: Value) -> bool {
    let before = fence(doc);
    let outcome = apply(doc.as_ref(), &request(token, change)).expect("fits");
    let acknowledged = match outcome {
        FenceOutcome::Write(source) => {
            *doc = Some(source);
            true
        }
        FenceOutcome::Unchanged { .. } => true,
        FenceOutcome::Stale { fence } => {
            assert!(fence > token, "stale only below the fence");
            false
        }
    };
    assert!(fence(doc) >= before, "the fence never falls");
    assert_eq!(
        acknowledged,
        token >= before,
        "applied exactly when the token is at least the fence"
    );
    acknowledged
}

fn holders() -> impl Strategy<Value = (Vec<Kind>, Vec<usize>)> {
    prop::collection::vec(prop_oneof![Just(Kind::ReadModifyWrite), Just(Kind::Increment)], 1..8)
        .prop_flat_map(|kinds| {
            let steps: Vec<usize> = kinds
                .iter()
                .enumerate()
                .flat_map(|(h, k)| match k {
                    Kind::ReadModifyWrite => vec![h, h],
                    Kind::Increment => vec![h],
                })
                .collect();
            (Just(kinds), Just(steps).prop_shuffle())
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(), ..ProptestConfig::default() })]

    #[test]
    fn no_acknowledged_change_is_lost_in_any_interleaving((kinds, order) in holders()) {
        let mut doc: Option<Object> = None;
        let mut read: Vec<Option<i64>> = vec![None; kinds.len()];
        let mut acknowledged = 0;
        for h in order {
            let token = h as u64 + 1; // holder h was granted the key h-th
            match (kinds[h], read[h]) {
                (Kind::Increment, _) => {
                    acknowledged += i64::from(step(&mut doc, token, json!({"ops": [{"op": "inc", "field": "n", "value": 1}]})));
                }
                (Kind::ReadModifyWrite, None) => {
                    // A fenced read: the touch, then the document it left (a refused read reads nothing).
                    read[h] = Some(if step(&mut doc, token, json!({})) { counter(&doc) } else { -1 });
                }
                (Kind::ReadModifyWrite, Some(n)) => {
                    if n >= 0 {
                        acknowledged += i64::from(step(&mut doc, token, json!({"replace": {"n": n + 1}})));
                    }
                }
            }
        }
        prop_assert_eq!(counter(&doc), acknowledged);
    }
}
