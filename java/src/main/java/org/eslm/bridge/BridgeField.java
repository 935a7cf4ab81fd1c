package org.eslm.bridge;

import java.util.Locale;
import java.util.Map;

/**
 * The members the plugin reads in the bridge's answers (and the few arguments it writes itself):
 * rust/lock-jni's {@code ops::fields::Field},
 * emitted into {@code rust/lock-jni/include/eslm.h} as {@code ESLM_FIELD_<NAME>}, each named by its
 * constant in lower case. {@code BridgeVocabularyTest} holds this list to the header, so no member
 * name is typed in Java; a Rust test holds the names to what the bridge writes. Everything else
 * of an answer (the REST bodies, docs/API.md) goes to the client as the core wrote it.
 */
public enum BridgeField {
    // The envelope (`envelope.rs`).
    RESULT,
    EVENTS,
    TICK_IN_MS,

    // A call that may wait: an acquire answers `granted` (its body) or `queued` (its ticket), a
    // watch `answered` or `watching`; a ticket's `waiter_id` cancels it.
    GRANTED,
    QUEUED,
    ANSWERED,
    WATCHING,
    WAITER_ID,

    // An event that answers a request (`envelope.rs`): the request, and its body or error; a grant's
    // releases if its request went away.
    REQUEST_ID,
    BODY,
    GIVE_BACK,
    ERROR,

    // A failure's details (`error.rs`), as a failed call and an event's `error` carry them.
    CODE,
    MESSAGE,
    KEY,
    OWNER,
    HOLDERS,
    WAITED_MS,
    CYCLE,
    SESSION,
    RETRY_AFTER_MS,
    LIMIT,
    MAX,
    PARTITION,
    EPOCH,
    ENDED,

    // Replication, partitions and listing (`replication.rs`, `partitions.rs`, `introspection.rs`):
    // a listing's pages are read for their order, by `partition`, `locks` (each lock's `key`, `scope`
    // and `owner`) and `next`.
    BATCH,
    EMPTY,
    SNAPSHOT,
    APPLIED,
    FULL,
    PARTITIONS,
    ID,
    GRACE_LEFT_MS,
    LOCKS,
    NEXT,

    // What the plugin reads of a REST body (`bodies.rs`): a release's token (a retry names it), a
    // session (named cluster-wide on the way out), a grant as the in-node API shows it, and whether
    // an observed election changed.
    FENCING_TOKEN,
    LEASE_MS,
    SCOPE,
    REENTRANT,
    CHANGED,

    // The lock history's drain (`history.rs`): the bulk body and its number of documents.
    BULK,
    DOCUMENTS,

    // A request body read (`requests/`): the core's arguments or the refusal, and what the plugin
    // routes, cancels and logs by; the plugin also writes these arguments into the requests it
    // builds itself (a key's state, a watch) and leaves an acquisition out for an older node.
    PARSED,
    REFUSED,
    PARSE,
    ARGS,
    ROUTING,
    WAIT_MS,
    ACQUISITION,
    REASON,
    PREEMPT_MS,
    // The plugin writes this one: which request a body is ({@link NativeRequest}).
    REQUEST,

    // Arguments the plugin writes itself: a partition opened, closed, exported; a standby's batch;
    // a listing's filter.
    GRACE_MS,
    FROM_STANDBY,
    REPLICATED,
    EXPORT,
    FORMAT,
    DROP,
    CATCH_UP,
    DELTA,
    PREFIX,
    AFTER,
    SIZE,

    // The ownership protocol (`ownership.rs`, service.OwnershipProtocol): the event handed to it and
    // its members, and the decisions read back; a partition opened unconfirmed, its lease in the
    // diagnostics; the partitions a tick left as they stood; a batch's send ticket.
    EVENT,
    COPY_LEASES,
    SENT_US,
    ASKED_US,
    YOURS,
    OLD_OWNER_CLOSED,
    MASTER,
    LOCAL,
    ENABLED,
    BOUND_MS,
    PROMOTABLE,
    NODES,
    SERVES,
    ANSWER,
    CONDEMNED,
    CONFIRMED,
    LEASE_LEFT_MS,
    UNSERVED,

    // A fenced change to a document (`fence.rs`, org.eslm.script): the document and the script's
    // params the plugin writes, and what the primary writes back or why it writes nothing.
    SOURCE,
    PARAMS,
    WRITE,
    UNCHANGED,
    STALE,
    FENCE,

    // The node's figures for Elasticsearch's telemetry (`telemetry.rs`, service.LockMetrics): what
    // the plugin asks of the samples, the counters and gauges it reads, and the drained samples.
    SAMPLES,
    GRANTS,
    CONFLICTS,
    TIMEOUTS,
    EXPIRIES,
    DEADLOCKS,
    PREEMPTIONS,
    FORCE_RELEASES,
    HELD,
    WAITING,
    SESSIONS,
    MEMORY_BYTES,
    SERVED,
    UNCONFIRMED,
    WAIT_TIME_MS,
    HOLD_TIME_MS,

    // The core's settings (`lock_core::Config`, `Limits`), written by the plugin (`CONFIGURE`).
    DEFAULT_LEASE_MS,
    MAX_LEASE_MS,
    MAX_WAIT_MS,
    DEFAULT_WAIT_MS,
    AGING_MS,
    DEFAULT_LOCK_DELAY_MS,
    LIMITS,
    AUDIT_CAPACITY,
    MAX_WAITERS_PER_KEY,
    MAX_KEYS_PER_REQUEST,
    MAX_LOCKS,
    MAX_SESSIONS,
    MAX_WAITERS,
    MAX_LOCKS_PER_OWNER,
    MAX_WAITERS_PER_OWNER,
    MAX_SESSIONS_PER_OWNER,
    MAX_WATCHES,
    MAX_MEMORY_BYTES;

    /** A JSON object of one member, for the one-argument calls: {@code {"<this>": value}}. */
    public Map<String, Object> of(Object value) {
        Map<String, Object> args = new java.util.LinkedHashMap<>();
        args.put(key, value);
        return args;
    }

    private final String key = name().toLowerCase(Locale.ROOT);

    /** The member's name in the answer's JSON. */
    public String key() {
        return key;
    }

    /** This member of {@code answer}, or {@code null}. */
    public Object in(Map<?, ?> answer) {
        return answer.get(key);
    }

    /** Sets this member of {@code args}, arguments the plugin writes for the core. */
    public void put(Map<String, Object> args, Object value) {
        args.put(key, value);
    }
}
