//! The answer envelope `{"result", "events", "tick_in_ms"}`, written as text around the op's
//! already-serialized result.
//!
//! Building a `serde_json::Value` tree first cost more than the lock operation itself (JMH,
//! bench/RESULTS.md), so the uncontended path (no events) only concatenates strings.

use std::sync::Arc;

use lock_core::{Event, Partition, ReleaseRequest};
use serde::Serialize;
use serde_json::Value;

use super::bodies::{event_body, EventBody};
use super::error::event_error;
use super::{to_json, BridgeError};

const RESULT_MEMBER: &str = "{\"result\":";
const EVENTS_MEMBER: &str = ",\"events\":";
const TICK_MEMBER: &str = ",\"tick_in_ms\":";
const END: &str = "}";
/// The most digits a `u64` tick can take.
const MAX_TICK_DIGITS: usize = 20;
/// Everything of the envelope but the result and the events.
const FRAME_BYTES: usize =
    RESULT_MEMBER.len() + EVENTS_MEMBER.len() + TICK_MEMBER.len() + END.len() + MAX_TICK_DIGITS;

/// An event as the bridge emits it: the core's event, plus what the plugin answers its request
/// with: `"body"` for a grant or a watch's end ([`event_body`]), `"error"` for a waiter completed
/// without a grant (the details a failed call would carry, from [`event_error`]); and for a grant,
/// `"give_back"`, the releases that hand it back if its request was cancelled meanwhile.
#[derive(Serialize)]
struct EmittedEvent<'a> {
    #[serde(flatten)]
    event: &'a Event,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<EventBody<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    give_back: Option<Vec<ReleaseRequest>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

/// Drains the events of the partitions the call `touched` and wraps the envelope around
/// `result`; `tick_in_ms` is when the caller must tick next (`None`: no deadline).
pub(super) fn write(
    result: &str,
    touched: &[Arc<Partition>],
    tick_in_ms: impl FnOnce() -> Option<u64>,
) -> Result<String, BridgeError> {
    let mut events: Vec<Event> = Vec::new();
    for p in touched {
        events.extend(p.drain_events());
    }
    let events = events_json(&events)?;
    let mut envelope = String::with_capacity(result.len() + events.len() + FRAME_BYTES);
    envelope.push_str(RESULT_MEMBER);
    envelope.push_str(result);
    envelope.push_str(EVENTS_MEMBER);
    envelope.push_str(&events);
    envelope.push_str(TICK_MEMBER);
    match tick_in_ms() {
        Some(ms) => envelope.push_str(&ms.to_string()),
        None => envelope.push_str("null"),
    }
    envelope.push_str(END);
    Ok(envelope)
}

/// The events as a JSON array, each with what its request is answered with; the ones that answer
/// no request (a lease or a session ran out) are logged here.
fn events_json(events: &[Event]) -> Result<String, BridgeError> {
    let emitted: Vec<EmittedEvent<'_>> = events
        .iter()
        .map(|event| {
            log(event);
            EmittedEvent {
                event,
                body: event_body(event),
                give_back: give_back(event),
                error: event_error(event),
            }
        })
        .collect();
    to_json(&emitted)
}

/// For a grant: releasing each of its locks, by its token (a later grant of the same owner stays).
fn give_back(event: &Event) -> Option<Vec<ReleaseRequest>> {
    let Event::Granted { grants, .. } = event else { return None };
    let releases = grants.iter().map(|g| ReleaseRequest {
        key: g.key.clone(),
        owner: g.owner.clone(),
        fencing_token: Some(g.fencing_token),
        scope: g.scope,
        acquisition: None,
    });
    Some(releases.collect())
}

fn log(event: &Event) {
    match event {
        Event::LeaseExpired { key, owner, fencing_token, held_ms, .. } => tracing::info!(
            "lease of [{key}] held by [{owner}] expired (token {}, held {held_ms}ms)",
            fencing_token.0
        ),
        Event::SessionExpired { session, owner, released } => {
            tracing::info!("session [{session}] of [{owner}] expired; released {released:?}")
        }
        _ => {}
    }
}
