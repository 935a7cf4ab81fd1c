//! Every request body of docs/API.md: its name (as refusals say it), its fields, what each is to
//! the core, and the rule its whole is held to. A field a body does not list is refused as
//! unknown, so a field of one request sent to another never passes unseen.

use super::values::{Cap, Kind};

/// Where a field's value goes.
#[derive(Clone, Copy, Debug)]
pub enum To {
    /// To the core's argument of this name.
    Arg(&'static str),
    /// Kept to route by (a session's or a release-all's `routing`); the core never sees it.
    Routing,
    /// Refused: a lock's partition follows from its key (docs/API.md "Partitions and hash tags").
    NoRouting,
    /// A multi-lock's `locks`, each item a body of its own.
    Locks(&'static Body),
}

/// One field of a body.
#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub to: To,
}

/// The fields of one body, and the name its refusals give it.
#[derive(Debug)]
pub struct Body {
    pub name: &'static str,
    pub fields: &'static [Field],
}

impl Body {
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// What this body calls the grant's owner (`owner`, `candidate`, `member`).
    pub fn owner_field(&self) -> &'static str {
        self.fields.iter().find(|f| matches!(f.kind, Kind::Owner)).map_or("owner", |f| f.name)
    }

    /// What this body calls the fencing token (`fencing_token`, an election's `term`).
    pub fn token_field(&self) -> &'static str {
        self.fields
            .iter()
            .find(|f| matches!(f.to, To::Arg("fencing_token")))
            .map_or("fencing_token", |f| f.name)
    }
}

/// What a whole request must hold once its fields are read, beyond each field's own check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// An acquire of the path's key: an owner; the default wait when none is named.
    Acquire,
    /// A multi-lock: an owner and at least one lock, each key once; the default wait.
    AcquireMany,
    /// A release or renew of the path's key: an owner, and the grant named by acquisition or token.
    Keyed,
    /// A downgrade of the path's key: as [`Rule::Keyed`], and the weaker mode asked for.
    Downgrade,
    /// A multi-release: an owner, and `locks` (naming their grants) or `all: true`.
    ReleaseMany,
    /// A new session: an owner; it routes by its `routing`, else by its owner.
    Session,
    /// A session's keep-alive or end: the owner, and the path's session.
    SessionOwner,
    /// A force-release of the path's key (its body may be empty).
    ForceRelease,
    /// A semaphore acquire: an owner and the limit; the default wait.
    SemaphoreAcquire,
    /// A change of a semaphore's limit.
    SemaphoreLimit,
    /// An election campaign: an exclusive acquire of the election, waiting by default.
    Campaign,
    /// A group join: a shared acquire of the group that never waits.
    Join,
    /// A member's new capabilities: the core's group update.
    GroupUpdate,
    /// A watch of the path's key (its query parameters): the token watched and the wait.
    Watch,
    /// An election's or a group's long poll (its query parameters): the wait.
    Observe,
}

/// The requests whose bodies are read here (the last three: query parameters, read alike), as
/// the plugin names them: emitted into
/// `include/eslm.h` as `ESLM_REQUEST_*` (the plugin's `NativeRequest` is held to it), each
/// naming the body `<variant in snake case>_request` in refusals (docs/API.md "Errors").
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    LockAcquire,
    LockMultiAcquire,
    LockRelease,
    LockMultiRelease,
    LockRenew,
    LockDowngrade,
    LockSession,
    LockSessionKeepalive,
    LockSessionEnd,
    LockForceRelease,
    SemaphoreAcquire,
    SemaphoreRelease,
    SemaphoreRenew,
    SemaphoreLimit,
    ElectionCampaign,
    ElectionResign,
    ElectionRenew,
    GroupJoin,
    GroupLeave,
    GroupHeartbeat,
    GroupUpdate,
    LockWatch,
    ElectionObserve,
    GroupObserve,
}

/// One request: its kind, its body, the scope it acts in (none: the body's own), and its rule.
#[derive(Debug)]
pub struct Request {
    /// Read by the test that holds each body's name to its kind (the plugin sends the name).
    #[cfg_attr(not(test), allow(dead_code))]
    pub kind: RequestKind,
    pub body: Body,
    pub scope: Option<&'static str>,
    pub rule: Rule,
}

const fn arg(name: &'static str, kind: Kind) -> Field {
    Field { name, kind, to: To::Arg(name) }
}

const fn renamed(name: &'static str, to: &'static str, kind: Kind) -> Field {
    Field { name, kind, to: To::Arg(to) }
}

const OWNER: Field = arg("owner", Kind::Owner);
const ACQUISITION: Field = arg("acquisition", Kind::Text);
const MODE: Field = arg("mode", Kind::Mode);
const SCOPE: Field = arg("scope", Kind::Scope);
const PRIORITY: Field = arg("priority", Kind::Priority);
const SESSION: Field = arg("session", Kind::Text);
const TOKEN: Field = arg("fencing_token", Kind::Whole(0));
const WAIT: Field = renamed("wait", "wait_ms", Kind::Duration(Cap::Wait));
const LEASE: Field = renamed("lease", "lease_ms", Kind::Duration(Cap::Lease));
const LOCK_DELAY: Field = renamed("lock_delay", "lock_delay_ms", Kind::Duration(Cap::LockDelay));
const NO_ROUTING: Field = Field { name: "routing", kind: Kind::Text, to: To::NoRouting };
const ROUTING: Field = Field { name: "routing", kind: Kind::Text, to: To::Routing };
const KEY: Field = arg("key", Kind::Text);
const LIMIT: Field = arg("limit", Kind::SemaphoreCount);

const LOCK_ITEM: Body = Body { name: "lock", fields: &[KEY, MODE, SCOPE] };
const RELEASE_ITEM: Body = Body { name: "lock", fields: &[KEY, SCOPE, TOKEN] };

const CANDIDATE: Field = renamed("candidate", "owner", Kind::Owner);
const TERM: Field = renamed("term", "fencing_token", Kind::Whole(1));
const MEMBER: Field = renamed("member", "owner", Kind::Owner);
const CAPABILITIES: Field = renamed("capabilities", "value", Kind::Json);

/// The scopes the plugin names for the core (docs/LOCK_CORE.md "Scopes and tree locks").
pub const SEMAPHORE: &str = "semaphore";
pub const ELECTION: &str = "election";
pub const GROUP: &str = "group";

const fn request(
    kind: RequestKind,
    name: &'static str,
    fields: &'static [Field],
    rule: Rule,
) -> Request {
    Request { kind, body: Body { name, fields }, scope: None, rule }
}

const fn scoped(
    kind: RequestKind,
    name: &'static str,
    scope: &'static str,
    fields: &'static [Field],
    rule: Rule,
) -> Request {
    Request { kind, body: Body { name, fields }, scope: Some(scope), rule }
}

/// Every request, in [`RequestKind`] order.
pub const REQUESTS: &[Request] = &[
    request(
        RequestKind::LockAcquire,
        "lock_acquire_request",
        &[
            ACQUISITION,
            OWNER,
            MODE,
            SCOPE,
            PRIORITY,
            WAIT,
            SESSION,
            LOCK_DELAY,
            renamed("preempt", "preempt_ms", Kind::Duration(Cap::Lease)),
            LEASE,
            NO_ROUTING,
        ],
        Rule::Acquire,
    ),
    request(
        RequestKind::LockMultiAcquire,
        "lock_multi_acquire_request",
        &[
            ACQUISITION,
            OWNER,
            PRIORITY,
            WAIT,
            SESSION,
            LOCK_DELAY,
            LEASE,
            NO_ROUTING,
            Field { name: "locks", kind: Kind::Text, to: To::Locks(&LOCK_ITEM) },
        ],
        Rule::AcquireMany,
    ),
    request(
        RequestKind::LockRelease,
        "lock_release_request",
        &[ACQUISITION, OWNER, SCOPE, TOKEN, NO_ROUTING],
        Rule::Keyed,
    ),
    request(
        RequestKind::LockMultiRelease,
        "lock_multi_release_request",
        &[
            ACQUISITION,
            OWNER,
            ROUTING,
            Field { name: "locks", kind: Kind::Text, to: To::Locks(&RELEASE_ITEM) },
            arg("all", Kind::Flag),
        ],
        Rule::ReleaseMany,
    ),
    request(
        RequestKind::LockRenew,
        "lock_renew_request",
        &[ACQUISITION, OWNER, SCOPE, LEASE, TOKEN, NO_ROUTING],
        Rule::Keyed,
    ),
    request(
        RequestKind::LockDowngrade,
        "lock_downgrade_request",
        &[ACQUISITION, OWNER, MODE, SCOPE, TOKEN, NO_ROUTING],
        Rule::Downgrade,
    ),
    request(
        RequestKind::LockSession,
        "lock_session_request",
        &[OWNER, ROUTING, renamed("ttl", "ttl_ms", Kind::Duration(Cap::Lease))],
        Rule::Session,
    ),
    request(
        RequestKind::LockSessionKeepalive,
        "lock_session_keepalive_request",
        &[OWNER],
        Rule::SessionOwner,
    ),
    request(RequestKind::LockSessionEnd, "lock_session_end_request", &[OWNER], Rule::SessionOwner),
    request(
        RequestKind::LockForceRelease,
        "lock_force_release_request",
        &[arg("scope", Kind::AnyScope), arg("reason", Kind::Text)],
        Rule::ForceRelease,
    ),
    scoped(
        RequestKind::SemaphoreAcquire,
        "semaphore_acquire_request",
        SEMAPHORE,
        &[
            ACQUISITION,
            OWNER,
            PRIORITY,
            WAIT,
            SESSION,
            LEASE,
            NO_ROUTING,
            arg("permits", Kind::SemaphoreCount),
            LIMIT,
        ],
        Rule::SemaphoreAcquire,
    ),
    scoped(
        RequestKind::SemaphoreRelease,
        "semaphore_release_request",
        SEMAPHORE,
        &[ACQUISITION, OWNER, TOKEN, NO_ROUTING],
        Rule::Keyed,
    ),
    scoped(
        RequestKind::SemaphoreRenew,
        "semaphore_renew_request",
        SEMAPHORE,
        &[ACQUISITION, OWNER, LEASE, TOKEN, NO_ROUTING],
        Rule::Keyed,
    ),
    request(RequestKind::SemaphoreLimit, "semaphore_limit_request", &[LIMIT], Rule::SemaphoreLimit),
    scoped(
        RequestKind::ElectionCampaign,
        "election_campaign_request",
        ELECTION,
        &[CANDIDATE, LEASE, ACQUISITION, WAIT, SESSION, arg("value", Kind::Value), LOCK_DELAY],
        Rule::Campaign,
    ),
    scoped(
        RequestKind::ElectionResign,
        "election_resign_request",
        ELECTION,
        &[CANDIDATE, TERM, ACQUISITION],
        Rule::Keyed,
    ),
    scoped(
        RequestKind::ElectionRenew,
        "election_renew_request",
        ELECTION,
        &[CANDIDATE, TERM, LEASE, ACQUISITION],
        Rule::Keyed,
    ),
    scoped(
        RequestKind::GroupJoin,
        "group_join_request",
        GROUP,
        &[MEMBER, ACQUISITION, LEASE, CAPABILITIES, SESSION],
        Rule::Join,
    ),
    scoped(
        RequestKind::GroupLeave,
        "group_leave_request",
        GROUP,
        &[MEMBER, ACQUISITION, TOKEN],
        Rule::Keyed,
    ),
    scoped(
        RequestKind::GroupHeartbeat,
        "group_heartbeat_request",
        GROUP,
        &[MEMBER, ACQUISITION, TOKEN, LEASE],
        Rule::Keyed,
    ),
    scoped(
        RequestKind::GroupUpdate,
        "group_update_request",
        GROUP,
        &[MEMBER, CAPABILITIES],
        Rule::GroupUpdate,
    ),
    request(
        RequestKind::LockWatch,
        "lock_watch_request",
        &[
            renamed("token", "fencing_token", Kind::Whole(1)),
            WAIT,
            arg("revoke", Kind::Flag),
            SCOPE,
        ],
        Rule::Watch,
    ),
    request(
        RequestKind::ElectionObserve,
        "election_observe_request",
        &[renamed("term", "fencing_token", Kind::Whole(0)), WAIT],
        Rule::Observe,
    ),
    request(
        RequestKind::GroupObserve,
        "group_observe_request",
        &[renamed("version", "fencing_token", Kind::Whole(0)), WAIT],
        Rule::Observe,
    ),
];

/// The request whose body has this name.
pub fn request_named(name: &str) -> Option<&'static Request> {
    REQUESTS.iter().find(|r| r.body.name == name)
}

#[cfg(test)]
mod tests {
    use super::REQUESTS;

    /// Each request is listed once, in kind order, its body named after its kind.
    #[test]
    fn every_kind_is_listed_once_named_after_itself() {
        for (i, request) in REQUESTS.iter().enumerate() {
            assert_eq!(request.kind as usize, i, "{:?}", request.kind);
            let mut snake = String::new();
            for (j, c) in format!("{:?}", request.kind).chars().enumerate() {
                if c.is_uppercase() && j > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            }
            assert_eq!(request.body.name, format!("{snake}_request"));
        }
        assert_eq!(REQUESTS.len(), super::RequestKind::GroupObserve as usize + 1);
    }
}
