package org.eslm.rest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.xcontent.ObjectParser;
import org.elasticsearch.xcontent.ObjectParser.ValueType;
import org.elasticsearch.xcontent.ParseField;
import org.elasticsearch.xcontent.XContentParseException;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.action.RoutingValues;
import org.eslm.bridge.NativeLimits;
import org.eslm.service.LockMode;
import org.eslm.settings.LockSettings;

/**
 * Strict parsers of the REST bodies. Each turns a body into the core's argument record (see
 * rust/lock-core/src/request.rs) as a map: names are mapped ({@code wait} becomes {@code wait_ms}),
 * values are checked for type and range, durations against the configured caps. Unknown fields,
 * wrong types and bad values fail with the field named; lock rules (key syntax, priorities,
 * tree paths) are checked by the core.
 */
final class LockBodies {
    private LockBodies() {}

    /** A parsed body: the core's arguments, plus what only Java reads (routing, reason). */
    static final class Args extends LinkedHashMap<String, Object> {
        private static final long serialVersionUID = 1L;
        /** A session's or a release-all's {@code routing}: for routing only, the core never sees it. */
        String routing;
        /** A force-release's {@code reason}: for the log only. */
        String reason;
        /** Durations as written ({@code "2s"} or a number), checked against the caps after parsing. */
        final transient Map<String, Object> raw = new LinkedHashMap<>();

        /**
         * Converts the raw durations: {@code wait} to {@code wait_ms} and so on, checked against
         * the caps in force. Done after parsing so the error is a plain 400
         * {@code illegal_argument_exception} naming the field and the setting.
         */
        Args durations(LockSettings.Values settings) {
            convert("wait", "wait_ms", settings.waitMax(), LockSettings.WAIT_MAX.getKey());
            convert("lease", "lease_ms", settings.leaseMax(), LockSettings.LEASE_MAX.getKey());
            convert("ttl", "ttl_ms", settings.leaseMax(), LockSettings.LEASE_MAX.getKey());
            convert("lock_delay", "lock_delay_ms", LOCK_DELAY_MAX, LOCK_DELAY_MAX_NAME);
            convert("preempt", "preempt_ms", settings.leaseMax(), LockSettings.LEASE_MAX.getKey());
            return this;
        }

        private void convert(String field, String target, TimeValue max, String maxSetting) {
            if (raw.containsKey(field)) {
                put(target, duration(field, raw.get(field), max, maxSetting));
            }
        }

        /**
         * Requires the grant a release or renew acts on to be named: by its acquisition id, by its
         * token (named {@code tokenField} in this body), or both (docs/API.md "Acquisitions"). An
         * owner name alone would also end a newer acquisition of the same owner.
         *
         * @throws IllegalArgumentException {@code [acquisition] or [tokenField] is required} when neither is given
         */
        Args namesGrant(String tokenField) {
            if (containsKey(ACQUISITION_FIELD) == false && containsKey("fencing_token") == false) {
                throw new IllegalArgumentException(grantNotNamed(tokenField));
            }
            return this;
        }

        /** @throws IllegalArgumentException {@code [field] is required} when absent */
        Args require(String field) {
            if (containsKey(field) == false) {
                throw new IllegalArgumentException("[" + field + "] is required");
            }
            return this;
        }
    }

    private static final ParseField OWNER = new ParseField("owner");
    private static final ParseField MODE = new ParseField("mode");
    private static final ParseField SCOPE = new ParseField("scope");
    private static final ParseField PRIORITY = new ParseField("priority");
    private static final ParseField WAIT = new ParseField("wait");
    private static final ParseField LEASE = new ParseField("lease");
    private static final ParseField SESSION = new ParseField("session");
    private static final ParseField ROUTING = new ParseField("routing");
    private static final ParseField TOKEN = new ParseField("fencing_token");
    private static final ParseField KEY = new ParseField("key");
    private static final ParseField LOCKS = new ParseField("locks");
    private static final ParseField ALL = new ParseField("all");
    private static final ParseField TTL = new ParseField("ttl");
    private static final ParseField REASON = new ParseField("reason");
    private static final ParseField PERMITS = new ParseField("permits");
    private static final ParseField LIMIT = new ParseField("limit");
    private static final ParseField LOCK_DELAY = new ParseField("lock_delay");
    private static final ParseField PREEMPT = new ParseField("preempt");
    /** The acquisition id (docs/API.md "Acquisitions"); the core checks it as it checks an owner. */
    static final String ACQUISITION_FIELD = "acquisition";

    private static final ParseField ACQUISITION = new ParseField(ACQUISITION_FIELD);

    /** The refusal of a release or renew that names neither its acquisition nor its token. */
    static String grantNotNamed(String tokenField) {
        return "[" + ACQUISITION_FIELD + "] or [" + tokenField + "] is required: name the acquisition"
                + " this request acts on, so that it never ends a newer one of the same owner";
    }

    /** The longest lock-delay ({@link NativeLimits#MAX_LOCK_DELAY_MS}), and how a refusal names it. */
    static final TimeValue LOCK_DELAY_MAX = TimeValue.timeValueMillis(NativeLimits.MAX_LOCK_DELAY_MS);

    private static final String LOCK_DELAY_MAX_NAME = "the longest lock-delay";

    static final ObjectParser<Args, LockSettings.Values> ACQUIRE =
            new ObjectParser<>("lock_acquire_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> MULTI_ACQUIRE =
            new ObjectParser<>("lock_multi_acquire_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> RELEASE =
            new ObjectParser<>("lock_release_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> MULTI_RELEASE =
            new ObjectParser<>("lock_multi_release_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> RENEW = new ObjectParser<>("lock_renew_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> SESSION_CREATE =
            new ObjectParser<>("lock_session_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> SESSION_KEEPALIVE =
            new ObjectParser<>("lock_session_keepalive_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> SESSION_END =
            new ObjectParser<>("lock_session_end_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> FORCE_RELEASE =
            new ObjectParser<>("lock_force_release_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> SEMAPHORE_ACQUIRE =
            new ObjectParser<>("semaphore_acquire_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> SEMAPHORE_RELEASE =
            new ObjectParser<>("semaphore_release_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> SEMAPHORE_RENEW =
            new ObjectParser<>("semaphore_renew_request", Args::new);
    static final ObjectParser<Args, LockSettings.Values> SEMAPHORE_LIMIT =
            new ObjectParser<>("semaphore_limit_request", Args::new);
    private static final ObjectParser<Args, LockSettings.Values> LOCK_ITEM = new ObjectParser<>("lock", Args::new);
    private static final ObjectParser<Args, LockSettings.Values> RELEASE_ITEM = new ObjectParser<>("lock", Args::new);

    static {
        // The bodies that act on a grant name its owner and may name its acquisition; a session's name its owner.
        List<ObjectParser<Args, LockSettings.Values>> grants = List.of(
                ACQUIRE,
                MULTI_ACQUIRE,
                RELEASE,
                MULTI_RELEASE,
                RENEW,
                SEMAPHORE_ACQUIRE,
                SEMAPHORE_RELEASE,
                SEMAPHORE_RENEW);
        for (ObjectParser<Args, LockSettings.Values> p : grants) {
            p.declareString((a, v) -> a.put(ACQUISITION_FIELD, v), ACQUISITION);
        }
        for (ObjectParser<Args, LockSettings.Values> p : List.of(SESSION_CREATE, SESSION_KEEPALIVE, SESSION_END)) {
            p.declareString((a, v) -> a.put("owner", boundedOwner("owner", v)), OWNER);
        }
        for (ObjectParser<Args, LockSettings.Values> p : grants) {
            p.declareString((a, v) -> a.put("owner", boundedOwner("owner", v)), OWNER);
        }
        for (ObjectParser<Args, LockSettings.Values> p : List.of(ACQUIRE, LOCK_ITEM)) {
            p.declareString((a, v) -> a.put("mode", LockMode.parse(v).wireName()), MODE);
        }
        for (ObjectParser<Args, LockSettings.Values> p : List.of(ACQUIRE, LOCK_ITEM, RELEASE, RELEASE_ITEM, RENEW)) {
            p.declareString((a, v) -> a.put("scope", scope(v)), SCOPE);
        }
        FORCE_RELEASE.declareString((a, v) -> a.put("scope", forcedScope(v)), SCOPE);
        for (ObjectParser<Args, LockSettings.Values> p : List.of(ACQUIRE, MULTI_ACQUIRE, SEMAPHORE_ACQUIRE)) {
            p.declareField((a, v) -> a.put("priority", v), LockBodies::priority, PRIORITY, ValueType.VALUE);
            p.declareField((a, v) -> a.raw.put("wait", v), LockBodies::rawValue, WAIT, ValueType.VALUE);
            p.declareString((a, v) -> a.put("session", v), SESSION);
        }
        for (ObjectParser<Args, LockSettings.Values> p : List.of(ACQUIRE, MULTI_ACQUIRE)) {
            p.declareField((a, v) -> a.raw.put("lock_delay", v), LockBodies::rawValue, LOCK_DELAY, ValueType.VALUE);
        }
        ACQUIRE.declareField((a, v) -> a.raw.put("preempt", v), LockBodies::rawValue, PREEMPT, ValueType.VALUE);
        for (ObjectParser<Args, LockSettings.Values> p :
                List.of(ACQUIRE, MULTI_ACQUIRE, RENEW, SEMAPHORE_ACQUIRE, SEMAPHORE_RENEW)) {
            p.declareField((a, v) -> a.raw.put("lease", v), LockBodies::rawValue, LEASE, ValueType.VALUE);
        }
        for (ObjectParser<Args, LockSettings.Values> p :
                List.of(RELEASE, RELEASE_ITEM, RENEW, SEMAPHORE_RELEASE, SEMAPHORE_RENEW)) {
            p.declareLong((a, v) -> a.put("fencing_token", token(v)), TOKEN);
        }

        for (ObjectParser<Args, LockSettings.Values> p : List.of(MULTI_RELEASE, SESSION_CREATE)) {
            p.declareString((a, v) -> a.routing = v, ROUTING);
        }
        for (ObjectParser<Args, LockSettings.Values> p : List.of(
                ACQUIRE, MULTI_ACQUIRE, RELEASE, RENEW, SEMAPHORE_ACQUIRE, SEMAPHORE_RELEASE, SEMAPHORE_RENEW)) {
            p.declareField(
                    (a, v) -> {
                        throw RoutingValues.routingRefused();
                    },
                    (parser, s) -> parser.text(),
                    ROUTING,
                    ValueType.VALUE);
        }
        LOCK_ITEM.declareString((a, v) -> a.put("key", boundedKey("key", v)), KEY);
        RELEASE_ITEM.declareString((a, v) -> a.put("key", boundedKey("key", v)), KEY);
        MULTI_ACQUIRE.declareField(
                (a, v) -> a.put("locks", v),
                (parser, s) -> lockItems(parser, s, LOCK_ITEM),
                LOCKS,
                ValueType.OBJECT_ARRAY);
        MULTI_RELEASE.declareField(
                (a, v) -> a.put("locks", v),
                (parser, s) -> lockItems(parser, s, RELEASE_ITEM),
                LOCKS,
                ValueType.OBJECT_ARRAY);
        MULTI_RELEASE.declareBoolean((a, v) -> a.put("all", v), ALL);
        SESSION_CREATE.declareField((a, v) -> a.raw.put("ttl", v), LockBodies::rawValue, TTL, ValueType.VALUE);
        FORCE_RELEASE.declareString((a, v) -> a.reason = v, REASON);
        SEMAPHORE_ACQUIRE.declareLong((a, v) -> a.put("permits", semaphoreNumber("permits", v)), PERMITS);
        for (ObjectParser<Args, LockSettings.Values> p : List.of(SEMAPHORE_ACQUIRE, SEMAPHORE_LIMIT)) {
            p.declareLong((a, v) -> a.put("limit", semaphoreNumber("limit", v)), LIMIT);
        }
    }

    private static long token(long v) {
        if (v < 0) {
            throw new IllegalArgumentException("[fencing_token] must not be negative, got [" + v + "]");
        }
        return v;
    }

    /**
     * A semaphore's {@code permits} or {@code limit}: 1..65535 here, so the core gets a number of its
     * type; the core checks the rest (permits within the limit, the limit the semaphore has).
     */
    private static long semaphoreNumber(String field, long value) {
        if (value < 1 || value > NativeLimits.MAX_SEMAPHORE_LIMIT) {
            throw new IllegalArgumentException(
                    "[" + field + "] must be 1.." + NativeLimits.MAX_SEMAPHORE_LIMIT + ", got [" + value + "]");
        }
        return value;
    }

    /**
     * Parses a semaphore acquire body for semaphore {@code name}: a lock acquire of scope
     * {@code semaphore} with {@code permits} (default 1) and {@code limit} (required).
     */
    static Args semaphoreAcquire(String name, XContentParser parser, LockSettings.Values settings) throws IOException {
        Args args = parse(SEMAPHORE_ACQUIRE, parser, settings)
                .require("owner")
                .require("limit")
                .durations(settings);
        args.put("key", name);
        args.put("scope", SEMAPHORE);
        defaultWait(args, settings);
        return args;
    }

    /** Parses a change of semaphore {@code name}'s limit: {@code {"limit": n}} (required). */
    static Args semaphoreLimit(String name, XContentParser parser, LockSettings.Values settings) throws IOException {
        Args args = parse(SEMAPHORE_LIMIT, parser, settings).require("limit");
        args.put("key", name);
        return args;
    }

    /** Parses a semaphore release or renew body for semaphore {@code name}. */
    static Args semaphoreKeyed(
            ObjectParser<Args, LockSettings.Values> parser,
            String name,
            XContentParser body,
            LockSettings.Values settings)
            throws IOException {
        Args args = keyed(parser, name, body, settings);
        args.put("scope", SEMAPHORE);
        return args;
    }

    /** The core's name of the semaphore scope. */
    static final String SEMAPHORE = "semaphore";

    /**
     * Runs {@code p} over a body. A value our own checks refuse ({@code [field] ...}) fails as the
     * {@code illegal_argument_exception} it is, not wrapped in the parser's
     * {@code x_content_parse_exception}, which stays for bodies that are not JSON, unknown fields
     * and JSON types a field never takes (docs/API.md "Errors").
     */
    static Args parse(ObjectParser<Args, LockSettings.Values> p, XContentParser body, LockSettings.Values settings)
            throws IOException {
        try {
            return p.parse(body, settings);
        } catch (XContentParseException e) {
            for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
                if (cause instanceof IllegalArgumentException own
                        && own instanceof XContentParseException == false
                        && String.valueOf(own.getMessage()).startsWith("[")) {
                    throw own;
                }
            }
            throw e;
        }
    }

    /**
     * A body of an op on {@code key} in {@code scope} whose owner the body calls {@code ownerField}
     * (an election's {@code candidate}, a group's {@code member}): parsed by {@code p}, durations
     * converted, the owner required.
     */
    static Args ownedBy(
            String ownerField,
            ObjectParser<Args, LockSettings.Values> p,
            String key,
            String scope,
            XContentParser body,
            LockSettings.Values settings)
            throws IOException {
        Args args = parse(p, body, settings).durations(settings);
        if (args.containsKey("owner") == false) {
            throw new IllegalArgumentException("[" + ownerField + "] is required");
        }
        args.put("key", key);
        args.put("scope", scope);
        return args;
    }

    /** A key (or a name that is one: an election's, a group's) no longer than {@link NativeLimits#MAX_KEY_BYTES}. */
    static String boundedKey(String field, String value) {
        return bounded(field, value, NativeLimits.MAX_KEY_BYTES);
    }

    /** An owner (or a candidate, a member) no longer than {@link NativeLimits#MAX_OWNER_BYTES}. */
    static String boundedOwner(String field, String value) {
        return bounded(field, value, NativeLimits.MAX_OWNER_BYTES);
    }

    /** {@code value}, checked as it is parsed to be no longer than {@code max} bytes of UTF-8. */
    private static String bounded(String field, String value, int max) {
        // A char is at most 3 UTF-8 bytes (a surrogate pair, 2 chars, is 4): short names need no count.
        int bytes = value.length() * 3 <= max ? value.length() : value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > max) {
            throw new IllegalArgumentException(
                    "[" + field + "] must be at most " + max + " bytes (UTF-8), got [" + bytes + "]");
        }
        return value;
    }

    /**
     * A {@code locks} array, each entry parsed by {@code item}; the entry after
     * {@code locks.max_keys_per_request} is refused before it is parsed, so a long array never
     * becomes more than that many objects.
     */
    private static List<Args> lockItems(
            XContentParser parser, LockSettings.Values settings, ObjectParser<Args, LockSettings.Values> item)
            throws IOException {
        if (parser.currentToken() != XContentParser.Token.START_ARRAY) {
            throw new XContentParseException(parser.getTokenLocation(), "[locks] must be an array of objects");
        }
        int max = settings.maxKeysPerRequest();
        List<Args> items = new ArrayList<>();
        while (parser.nextToken() != XContentParser.Token.END_ARRAY) {
            if (items.size() == max) {
                throw new IllegalArgumentException("[locks] names more than " + max + " keys ("
                        + LockSettings.MAX_KEYS_PER_REQUEST.getKey() + ")");
            }
            if (parser.currentToken() != XContentParser.Token.START_OBJECT) {
                throw new XContentParseException(parser.getTokenLocation(), "[locks] must be an array of objects");
            }
            items.add(item.parse(parser, settings).require("key"));
        }
        return items;
    }

    /** Parses an acquire body for {@code key}; fills in the default wait. */
    static Args acquire(String key, XContentParser parser, LockSettings.Values settings) throws IOException {
        Args args = parse(ACQUIRE, parser, settings).require("owner").durations(settings);
        args.put("key", key);
        defaultWait(args, settings);
        return args;
    }

    /** The value the request routes by: see {@link RoutingValues}. */
    static String routingValue(Args args) {
        if (args.get("locks") instanceof List<?> locks && locks.isEmpty() == false) {
            Map<?, ?> first = (Map<?, ?>) locks.get(0);
            return RoutingValues.of(String.valueOf(first.get("key")), (String) first.get("scope"));
        }
        return RoutingValues.of((String) args.get("key"), (String) args.get("scope"));
    }

    /**
     * The value a session or a release-all routes by: its {@code routing}, else its owner. Locks
     * route by their keys alone ({@link RoutingValues}).
     */
    static String ownerRouting(Args args) {
        requireNonBlank("routing", args.routing);
        return args.routing != null ? args.routing : (String) args.get("owner");
    }

    /** Parses a multi-lock body: at least one key, each named once. */
    static Args multiAcquire(XContentParser parser, LockSettings.Values settings) throws IOException {
        Args args = parse(MULTI_ACQUIRE, parser, settings)
                .require("owner")
                .require("locks")
                .durations(settings);
        List<?> locks = (List<?>) args.get("locks");
        if (locks.isEmpty()) {
            throw new IllegalArgumentException("[locks] must name at least one key");
        }
        Set<String> seen = new HashSet<>();
        for (Object l : locks) {
            Map<?, ?> lock = (Map<?, ?>) l;
            Object scope = lock.containsKey("scope") ? lock.get("scope") : "key";
            String id = scope + ":" + lock.get("key");
            if (seen.add(id) == false) {
                throw new IllegalArgumentException("[locks] names key [" + lock.get("key") + "] more than once");
            }
        }
        defaultWait(args, settings);
        return args;
    }

    /** Parses a release or renew body for {@code key}. */
    static Args keyed(
            ObjectParser<Args, LockSettings.Values> parser,
            String key,
            XContentParser body,
            LockSettings.Values settings)
            throws IOException {
        Args args = parse(parser, body, settings)
                .require("owner")
                .durations(settings)
                .namesGrant("fencing_token");
        args.put("key", key);
        return args;
    }

    /** Parses a session body; the session lives in the partition of its routing (default: its owner). */
    static Args session(XContentParser body, LockSettings.Values settings) throws IOException {
        return parse(SESSION_CREATE, body, settings).require("owner").durations(settings);
    }

    /**
     * Parses a session keep-alive or end body: only {@code owner}, required, as release and renew
     * name the lock's owner. The session's id (from the path) goes in as {@code session}.
     */
    static Args sessionOwner(ObjectParser<Args, LockSettings.Values> parser, String id, XContentParser body)
            throws IOException {
        Args args = parser.parse(body, null).require("owner");
        args.put("session", id);
        return args;
    }

    /**
     * Parses a multi-release body: {@code locks} or {@code all: true}, not both. The locks name
     * their acquisition (top-level {@code acquisition}) or each its {@code fencing_token}; {@code
     * all} ends every lock of the owner in the partition, newer acquisitions included.
     */
    static Args multiRelease(XContentParser parser, LockSettings.Values settings) throws IOException {
        Args args = parse(MULTI_RELEASE, parser, settings).require("owner");
        boolean all = Boolean.TRUE.equals(args.get("all"));
        if (all == args.containsKey("locks")) {
            throw new IllegalArgumentException("[locks] or [all: true] is required, not both");
        }
        if (all == false && ((List<?>) args.get("locks")).isEmpty()) {
            throw new IllegalArgumentException("[locks] must name at least one key");
        }
        if (all == false && args.routing != null) {
            throw RoutingValues.routingRefused();
        }
        if (all && args.containsKey(ACQUISITION_FIELD)) {
            throw new IllegalArgumentException("[" + ACQUISITION_FIELD
                    + "] names the locks of one acquisition: give them in [locks], not with [all]");
        }
        if (all == false && args.containsKey(ACQUISITION_FIELD) == false) {
            for (Object item : (List<?>) args.get("locks")) {
                if (((Map<?, ?>) item).containsKey("fencing_token") == false) {
                    throw new IllegalArgumentException(grantNotNamed("locks.fencing_token"));
                }
            }
        }
        return args;
    }

    static void defaultWait(Args args, LockSettings.Values settings) {
        if (args.containsKey("wait_ms") == false && settings.waitDefault().millis() > 0) {
            args.put("wait_ms", settings.waitDefault().millis());
        }
    }

    private static void requireNonBlank(String field, String value) {
        if (value != null && value.isBlank()) {
            throw new IllegalArgumentException("[" + field + "] must not be blank");
        }
    }

    private static String scope(String value) {
        if ("key".equals(value) || "tree".equals(value)) {
            return value;
        }
        throw new IllegalArgumentException("[scope] must be one of [key, tree], got [" + value + "]");
    }

    /**
     * A force-release may evict the holders of any scope: a dead semaphore holder's permits and a
     * dead leader's election are what an admin most often needs back (docs/API.md "Administration").
     */
    private static String forcedScope(String value) {
        if (List.of("key", "tree", SEMAPHORE, ElectionBodies.ELECTION).contains(value)) {
            return value;
        }
        throw new IllegalArgumentException(
                "[scope] must be one of [key, tree, semaphore, election], got [" + value + "]");
    }

    /** An integer level or a class name; the core checks the range and the names. */
    private static Object priority(XContentParser parser, LockSettings.Values settings) throws IOException {
        if (parser.currentToken() == XContentParser.Token.VALUE_STRING) {
            return parser.text();
        }
        if (parser.currentToken() != XContentParser.Token.VALUE_NUMBER) {
            throw new XContentParseException(
                    parser.getTokenLocation(), "[priority] must be a number or a string, got [" + parser.text() + "]");
        }
        if (parser.numberType() == XContentParser.NumberType.INT
                || parser.numberType() == XContentParser.NumberType.LONG) {
            return parser.longValue();
        }
        throw new IllegalArgumentException(
                "[priority] must be an integer 0..9, [background] or [foreground], got [" + parser.text() + "]");
    }

    /**
     * A duration as written: a string, or a number (kept with its type). Another JSON type is a
     * parse error, as for every field (docs/API.md "Errors"); a bad value is checked later.
     */
    static Object rawValue(XContentParser parser, LockSettings.Values settings) throws IOException {
        return switch (parser.currentToken()) {
            case VALUE_NUMBER -> parser.numberValue();
            case VALUE_STRING -> parser.text();
            default ->
                throw new XContentParseException(
                        parser.getTokenLocation(),
                        "[" + parser.currentName() + "] must be a time value like [500ms], [2s] or [1m]");
        };
    }

    /**
     * A duration in milliseconds: an Elasticsearch time string ({@code 500ms}, {@code 2s}) or a
     * whole number of milliseconds; never negative, never above {@code max}.
     */
    static long duration(String field, Object value, TimeValue max, String maxSetting) {
        long millis;
        if (value instanceof Number n) {
            if (n instanceof Integer == false && n instanceof Long == false) {
                throw new IllegalArgumentException(
                        "[" + field + "] must be whole milliseconds or a time value like [500ms], got [" + value + "]");
            }
            millis = n.longValue();
        } else {
            try {
                millis = TimeValue.parseTimeValue(String.valueOf(value), null, field)
                        .millis();
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(
                        "[" + field + "] must be a time value like [500ms], [2s] or [1m], got [" + value + "]");
            }
        }
        if (millis < 0) {
            throw new IllegalArgumentException("[" + field + "] must not be negative, got [" + value + "]");
        }
        if (millis > max.millis()) {
            throw new IllegalArgumentException(
                    "[" + field + "] must be at most [" + max + "] (" + maxSetting + "), got [" + value + "]");
        }
        return millis;
    }
}
