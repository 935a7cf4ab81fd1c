package org.eslm.settings;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.common.settings.Setting.Property;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.unit.ByteSizeValue;
import org.elasticsearch.core.TimeValue;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeBounds;

/**
 * The plugin's settings (docs/API.md "Settings"). Dynamic ones can be changed with the cluster settings
 * API; every change is validated as a whole (e.g. the default lease may not exceed the max) and
 * pushed to the Rust core, which applies it to requests from then on.
 */
public final class LockSettings {
    private static final TimeValue ONE_DAY = TimeValue.timeValueDays(1);
    private static final TimeValue ONE_YEAR = TimeValue.timeValueDays(365);

    public static final Setting<TimeValue> LEASE_DEFAULT = Setting.timeSetting(
            "locks.lease.default",
            TimeValue.timeValueSeconds(30),
            TimeValue.timeValueMillis(1),
            ONE_YEAR,
            Property.NodeScope,
            Property.Dynamic);
    public static final Setting<TimeValue> LEASE_MAX = Setting.timeSetting(
            "locks.lease.max",
            TimeValue.timeValueMinutes(10),
            TimeValue.timeValueMillis(1),
            ONE_YEAR,
            Property.NodeScope,
            Property.Dynamic);
    public static final Setting<TimeValue> WAIT_DEFAULT = Setting.timeSetting(
            "locks.wait.default", TimeValue.ZERO, TimeValue.ZERO, ONE_YEAR, Property.NodeScope, Property.Dynamic);
    public static final Setting<TimeValue> WAIT_MAX = Setting.timeSetting(
            "locks.wait.max",
            TimeValue.timeValueMinutes(5),
            TimeValue.ZERO,
            ONE_YEAR,
            Property.NodeScope,
            Property.Dynamic);
    /** A waiter gains one priority level per this much waiting; 0 turns aging off. */
    public static final Setting<TimeValue> PRIORITY_AGING = Setting.timeSetting(
            "locks.priority.aging",
            TimeValue.timeValueSeconds(1),
            TimeValue.ZERO,
            ONE_DAY,
            Property.NodeScope,
            Property.Dynamic);
    /**
     * The lock-delay of a grant whose request names none (docs/API.md "Lock-delay"): after a lock
     * ends without its holder's release, its keys wait this long before another owner gets them.
     * At most a minute (the core's {@code MAX_LOCK_DELAY_MS}); 0 (the default) turns it off.
     */
    public static final Setting<TimeValue> LOCK_DELAY_DEFAULT = Setting.timeSetting(
            "locks.lock_delay.default",
            TimeValue.ZERO,
            TimeValue.ZERO,
            TimeValue.timeValueMinutes(1),
            Property.NodeScope,
            Property.Dynamic);
    /** Most requests queued on one key. */
    public static final Setting<Integer> MAX_WAITERS =
            Setting.intSetting("locks.max_waiters", 10_000, 1, 1_000_000, Property.NodeScope, Property.Dynamic);
    /** Most keys in one multi-lock request. */
    public static final Setting<Integer> MAX_KEYS_PER_REQUEST =
            Setting.intSetting("locks.max_keys_per_request", 100, 1, 10_000, Property.NodeScope, Property.Dynamic);

    // Limits per partition and per owner (docs/API.md "Settings", docs/RELIABILITY.md "Memory
    // bounds"). Past any of them new locks, waiters or sessions answer 429
    // lock_limit_exceeded_exception naming the setting; holders keep renewing and releasing.

    /** Most locks held in one partition. */
    public static final Setting<Integer> LIMIT_LOCKS = Setting.intSetting(
            "locks.limits.max_locks", 1_000_000, 1, Integer.MAX_VALUE, Property.NodeScope, Property.Dynamic);
    /** Most open sessions in one partition. */
    public static final Setting<Integer> LIMIT_SESSIONS = Setting.intSetting(
            "locks.limits.max_sessions", 100_000, 1, Integer.MAX_VALUE, Property.NodeScope, Property.Dynamic);
    /** Most queued requests in one partition. */
    public static final Setting<Integer> LIMIT_WAITERS = Setting.intSetting(
            "locks.limits.max_waiters", 100_000, 1, Integer.MAX_VALUE, Property.NodeScope, Property.Dynamic);
    /** Most locks one owner holds in one partition. */
    public static final Setting<Integer> LIMIT_LOCKS_PER_OWNER = Setting.intSetting(
            "locks.limits.max_locks_per_owner", 100_000, 1, Integer.MAX_VALUE, Property.NodeScope, Property.Dynamic);
    /** Most requests one owner has queued in one partition. */
    public static final Setting<Integer> LIMIT_WAITERS_PER_OWNER = Setting.intSetting(
            "locks.limits.max_waiters_per_owner", 10_000, 1, Integer.MAX_VALUE, Property.NodeScope, Property.Dynamic);
    /** Most open sessions of one owner in one partition. */
    public static final Setting<Integer> LIMIT_SESSIONS_PER_OWNER = Setting.intSetting(
            "locks.limits.max_sessions_per_owner", 1_000, 1, Integer.MAX_VALUE, Property.NodeScope, Property.Dynamic);
    /** Most watches ({@code GET /_locks/{key}/_watch}) registered in one partition. */
    public static final Setting<Integer> LIMIT_WATCHES = Setting.intSetting(
            "locks.limits.max_watches", 100_000, 1, Integer.MAX_VALUE, Property.NodeScope, Property.Dynamic);
    /**
     * The native memory one partition's lock table may hold (the core's estimate, reported as
     * {@code memory_bytes} by {@code GET /_locks/_stats}), as bytes ({@code 64mb}) or a share of
     * the JVM heap ({@code 10%}, the default: the heap is how Elasticsearch nodes are sized, and
     * a tenth of it outside the heap fits next to the heap on any node sized by the usual rule
     * of half the RAM for the heap).
     */
    public static final Setting<ByteSizeValue> LIMIT_MEMORY =
            Setting.memorySizeSetting("locks.limits.max_memory", "10%", Property.NodeScope, Property.Dynamic);

    /**
     * The share of one core that listing may keep busy on a node (docs/ARCHITECTURE.md
     * "Listing"): after a page that took {@code t}, the node's next page starts no earlier than
     * {@code t × (1 − share) / share} later. A lone page is never delayed; a lister paging back to
     * back is paced, like Elasticsearch's own background work (recoveries, snapshots) is
     * throttled, so that it cannot take the cores lock requests need. {@code 1.0}: no pacing.
     */
    public static final Setting<Double> LISTING_MAX_BUSY =
            Setting.doubleSetting("locks.listing.max_busy", 0.25, 0.05, 1.0, Property.NodeScope, Property.Dynamic);

    /**
     * The lock history (docs/API.md "Lock history"): grants, releases, expiries, force-releases,
     * deadlock victims and refused renewals, written by each node to the data stream
     * {@code locks-history}. Off by default.
     */
    public static final Setting<Boolean> AUDIT_ENABLED =
            Setting.boolSetting("locks.audit.enabled", false, Property.NodeScope, Property.Dynamic);
    /**
     * Lock history records each partition keeps until they are written; past it, records are
     * dropped and counted ({@code audit_dropped} in {@code _stats}), never a lock slowed.
     */
    public static final Setting<Integer> AUDIT_BUFFER_SIZE =
            Setting.intSetting("locks.audit.buffer_size", 10_000, 1, 1_000_000, Property.NodeScope, Property.Dynamic);
    /** How long the lock history keeps a document: the data stream lifecycle's {@code data_retention}. */
    public static final Setting<TimeValue> AUDIT_RETENTION = Setting.timeSetting(
            "locks.audit.retention",
            TimeValue.timeValueDays(7),
            TimeValue.timeValueHours(1),
            Property.NodeScope,
            Property.Dynamic);
    /** How often each node writes the lock history it buffered (one {@code _bulk} at a time). */
    public static final Setting<TimeValue> AUDIT_FLUSH_INTERVAL = Setting.timeSetting(
            "locks.audit.flush_interval",
            TimeValue.timeValueSeconds(1),
            TimeValue.timeValueMillis(100),
            TimeValue.timeValueMinutes(1),
            Property.NodeScope,
            Property.Dynamic);

    /** {@code locks.durability} value: changes replicated and persisted before they are answered. */
    public static final String DURABILITY_REPLICATED = "replicated";
    /** {@code locks.durability} value: holders in the owner's memory only (the behaviour before replication). */
    public static final String DURABILITY_MEMORY = "memory";

    /**
     * Number of lock partitions: shards of the lock index, each owned by the node holding its
     * primary. Default 1: every multi-lock, tree lock and session is atomic whatever its keys,
     * and one core partition serves millions of operations a second, far more than HTTP brings
     * to one node. More partitions spread ownership (and failover) over nodes; then locks that
     * must be taken together need a common hash tag ({@code {order-42}items}, docs/API.md
     * "Partitions and hash tags"). Read when the lock index is created.
     */
    public static final Setting<Integer> PARTITIONS =
            Setting.intSetting("locks.partitions", 1, 1, 1024, Property.NodeScope);
    /**
     * Where holders live (docs/ARCHITECTURE.md "Durability modes"). {@code replicated} (the
     * default): every change reaches every in-sync copy of the partition's shard, and is written
     * to the shard's folder, before anyone is told of it; a promoted replica or a restarted node
     * carries on with every holder and no grace. {@code memory}: holders live in the owner's
     * memory only; a planned move hands them over, but a crashed owner's partition waits out a
     * recovery grace and a full restart forgets them.
     */
    public static final Setting<String> DURABILITY = new Setting<>(
            "locks.durability",
            DURABILITY_REPLICATED,
            value -> {
                if (DURABILITY_REPLICATED.equals(value) == false && DURABILITY_MEMORY.equals(value) == false) {
                    throw new IllegalArgumentException("[locks.durability] must be [" + DURABILITY_REPLICATED + "] or ["
                            + DURABILITY_MEMORY + "], got [" + value + "]");
                }
                return value;
            },
            Property.NodeScope);

    /**
     * What the default recovery grace adds to {@code locks.lease.max}: Elasticsearch's fault
     * detection takes up to about 30 s (3 follower checks, each of which may time out after
     * 10 s) to drop a dead node, and the dead owner's leases keep running meanwhile.
     */
    static final TimeValue FAILURE_DETECTION_MARGIN = TimeValue.timeValueSeconds(30);

    /**
     * How long a partition whose owner died grants nothing on its new owner: long enough for
     * every lease the dead owner may have granted to run out, plus the time the cluster needs to
     * notice a dead node. Unset: the highest {@code locks.lease.max} in force since the node
     * started + 30s (the caller passes it: {@code LockService.highestLeaseMax}). Set: at least
     * {@code locks.lease.max} ({@link #checkRecoveryGrace}), or a partition could grant a key whose
     * lease, granted by the dead owner, still runs.
     */
    public static final Setting<TimeValue> RECOVERY_GRACE = Setting.timeSetting(
            "locks.recovery.grace", TimeValue.MINUS_ONE, TimeValue.MINUS_ONE, ONE_YEAR, Property.NodeScope);

    /**
     * The longest lease any node of the cluster may have granted: the highest
     * {@code locks.lease.max} ever in force on a node, recorded by the plugin itself as a
     * persistent cluster setting ({@code org.eslm.cluster.LongestLeaseRecorder}). A node that
     * starts after the maximum was lowered learns it here, so its recovery grace still covers a
     * lease granted under the higher maximum (docs/RELIABILITY.md "Recovery grace"). Lower or
     * remove it only once every lease granted under a higher maximum has ended.
     */
    public static final Setting<TimeValue> LONGEST_LEASE = Setting.timeSetting(
            "locks.recovery.longest_lease",
            TimeValue.ZERO,
            TimeValue.ZERO,
            ONE_YEAR,
            Property.NodeScope,
            Property.Dynamic);

    /**
     * The grace in force for {@code settings} when leases may run up to {@code leaseMax}: never
     * shorter than that, whatever was set.
     */
    public static TimeValue recoveryGrace(Settings settings, TimeValue leaseMax) {
        TimeValue grace = RECOVERY_GRACE.get(settings);
        return grace.millis() >= 0
                ? TimeValue.timeValueMillis(Math.max(grace.millis(), leaseMax.millis()))
                : TimeValue.timeValueMillis(leaseMax.millis() + FAILURE_DETECTION_MARGIN.millis());
    }

    /**
     * Refuses an explicit {@code locks.recovery.grace} (of this node's {@code nodeSettings}) below
     * {@code leaseMax}: at start, and when {@code locks.lease.max} is raised on a running cluster.
     *
     * @throws IllegalArgumentException naming both settings
     */
    public static void checkRecoveryGrace(Settings nodeSettings, TimeValue leaseMax) {
        TimeValue grace = RECOVERY_GRACE.get(nodeSettings);
        if (grace.millis() >= 0 && grace.compareTo(leaseMax) < 0) {
            throw new IllegalArgumentException(
                    "[" + RECOVERY_GRACE.getKey() + "] (" + grace.getStringRep()
                            + ") must be at least [" + LEASE_MAX.getKey() + "] (" + leaseMax.getStringRep()
                            + "): a partition whose owner died would grant keys whose leases, granted by that owner, still run");
        }
    }

    /**
     * How long an owner's ownership confirmation by the elected master stays good
     * (docs/ARCHITECTURE.md "Cut-off owners"): an owner grants, expires and answers reads only
     * within this much of the send of the question the master last answered "yours" to, where
     * copies renew no lease. The core's bound (lock_core::ownership::bounds), read here.
     */
    public static final TimeValue OWNERSHIP_WINDOW = TimeValue.timeValueMillis(NativeBounds.OWNERSHIP_WINDOW_MS);

    /**
     * How long a replicated owner may serve after the send of a batch (or heartbeat) that every
     * in-sync copy of its partition acknowledged (docs/ARCHITECTURE.md "Silent owners"): the core's
     * bound, read here for messages and tests.
     */
    public static final TimeValue COPY_LEASE = TimeValue.timeValueMillis(NativeBounds.COPY_LEASE_MS);

    /**
     * The shortest {@link #SILENT_OWNER_FAILOVER}: longer than any confirmation an owner may still
     * hold ({@link #OWNERSHIP_WINDOW} on its clock) can last on the master's, rounded up to 100 ms,
     * so the master fails over no owner whose confirmation may still run. The core computes it
     * (lock_core::ownership::bounds); safety does not rest on it, since a promoted copy waits that
     * window out itself where the master's confirmations renew leases.
     */
    public static final TimeValue SILENT_OWNER_FAILOVER_MIN =
            TimeValue.timeValueMillis(NativeBounds.SILENT_OWNER_FAILOVER_MIN_MS);

    /**
     * How long the elected master waits, having heard no ownership check from a partition's owner,
     * before it fails that primary copy so that the in-sync replica takes over
     * (docs/ARCHITECTURE.md "Silent owners"): a frozen, stalled or cut-off owner is replaced in
     * seconds instead of after Elasticsearch's fault detection (30 s and more). Values below
     * {@link #SILENT_OWNER_FAILOVER_MIN} are refused: the old owner's confirmation could still run,
     * and its replacement could not serve sooner.
     */
    public static final Setting<TimeValue> SILENT_OWNER_FAILOVER = Setting.timeSetting(
            "locks.failover.silent_owner",
            TimeValue.timeValueMillis(NativeBounds.SILENT_OWNER_FAILOVER_DEFAULT_MS),
            SILENT_OWNER_FAILOVER_MIN,
            ONE_DAY,
            Property.NodeScope,
            Property.Dynamic);

    /**
     * Whether the copies of the lock partitions stay off the elected master while enough other
     * data nodes can hold them ({@code org.eslm.cluster.LockCopiesOffMaster}, docs/ARCHITECTURE.md
     * "Silent owners"), so that a silent master, removed only after 30 s and more, never holds
     * lock state.
     */
    public static final Setting<Boolean> AVOID_MASTER =
            Setting.boolSetting("locks.allocation.avoid_master", true, Property.NodeScope, Property.Dynamic);

    /** The settings whose changes are pushed to the core. */
    public static final List<Setting<?>> DYNAMIC = List.of(
            LEASE_DEFAULT,
            LEASE_MAX,
            WAIT_DEFAULT,
            WAIT_MAX,
            PRIORITY_AGING,
            LOCK_DELAY_DEFAULT,
            MAX_WAITERS,
            MAX_KEYS_PER_REQUEST,
            LIMIT_LOCKS,
            LIMIT_SESSIONS,
            LIMIT_WAITERS,
            LIMIT_LOCKS_PER_OWNER,
            LIMIT_WAITERS_PER_OWNER,
            LIMIT_SESSIONS_PER_OWNER,
            LIMIT_WATCHES,
            LIMIT_MEMORY,
            LISTING_MAX_BUSY,
            AUDIT_ENABLED,
            AUDIT_BUFFER_SIZE,
            AUDIT_RETENTION,
            AUDIT_FLUSH_INTERVAL);

    /** Every setting the plugin registers: the dynamic ones and those read once at start. */
    public static final List<Setting<?>> ALL = Stream.concat(
                    DYNAMIC.stream(),
                    Stream.of(
                            PARTITIONS, DURABILITY, RECOVERY_GRACE, LONGEST_LEASE, SILENT_OWNER_FAILOVER, AVOID_MASTER))
            .toList();

    private LockSettings() {}

    /** Each limit the core names in a refusal ({@code lock_core::Limits}), with the setting that sets it. */
    private static final Map<String, String> LIMIT_SETTINGS = Map.ofEntries(
            Map.entry(BridgeField.MAX_WATCHES.key(), LIMIT_WATCHES.getKey()),
            Map.entry(BridgeField.MAX_WAITERS_PER_KEY.key(), MAX_WAITERS.getKey()),
            Map.entry(BridgeField.MAX_KEYS_PER_REQUEST.key(), MAX_KEYS_PER_REQUEST.getKey()),
            Map.entry(BridgeField.MAX_LOCKS.key(), LIMIT_LOCKS.getKey()),
            Map.entry(BridgeField.MAX_SESSIONS.key(), LIMIT_SESSIONS.getKey()),
            Map.entry(BridgeField.MAX_WAITERS.key(), LIMIT_WAITERS.getKey()),
            Map.entry(BridgeField.MAX_LOCKS_PER_OWNER.key(), LIMIT_LOCKS_PER_OWNER.getKey()),
            Map.entry(BridgeField.MAX_WAITERS_PER_OWNER.key(), LIMIT_WAITERS_PER_OWNER.getKey()),
            Map.entry(BridgeField.MAX_SESSIONS_PER_OWNER.key(), LIMIT_SESSIONS_PER_OWNER.getKey()),
            Map.entry("max_memory", LIMIT_MEMORY.getKey()));

    /** The setting behind a limit the core named; a limit no setting sets keeps the core's name. */
    public static String limitSetting(String coreLimit) {
        return LIMIT_SETTINGS.getOrDefault(coreLimit, coreLimit);
    }

    /**
     * The values in force, read once per request so a request sees one consistent set.
     */
    public record Values(
            TimeValue leaseDefault,
            TimeValue leaseMax,
            TimeValue waitDefault,
            TimeValue waitMax,
            TimeValue aging,
            TimeValue lockDelayDefault,
            int maxWaiters,
            int maxKeysPerRequest,
            Limits limits,
            double listingMaxBusy,
            Audit audit) {
        /** Reads and cross-checks the values. @throws IllegalArgumentException naming the settings */
        public static Values of(Settings settings) {
            Values v = new Values(
                    LEASE_DEFAULT.get(settings),
                    LEASE_MAX.get(settings),
                    WAIT_DEFAULT.get(settings),
                    WAIT_MAX.get(settings),
                    PRIORITY_AGING.get(settings),
                    LOCK_DELAY_DEFAULT.get(settings),
                    MAX_WAITERS.get(settings),
                    MAX_KEYS_PER_REQUEST.get(settings),
                    Limits.of(settings),
                    LISTING_MAX_BUSY.get(settings),
                    Audit.of(settings));
            if (v.leaseDefault.compareTo(v.leaseMax) > 0) {
                throw new IllegalArgumentException("[" + LEASE_DEFAULT.getKey() + "] (" + v.leaseDefault
                        + ") must not exceed [" + LEASE_MAX.getKey() + "] (" + v.leaseMax + ")");
            }
            if (v.waitDefault.compareTo(v.waitMax) > 0) {
                throw new IllegalArgumentException("[" + WAIT_DEFAULT.getKey() + "] (" + v.waitDefault
                        + ") must not exceed [" + WAIT_MAX.getKey() + "] (" + v.waitMax + ")");
            }
            return v;
        }

        /** The core's {@code Config} record (rust/lock-core/src/config.rs); other fields keep their defaults. */
        public Map<String, Object> coreConfig() {
            Map<String, Object> limits = new LinkedHashMap<>();
            BridgeField.MAX_WAITERS_PER_KEY.put(limits, maxWaiters);
            BridgeField.MAX_KEYS_PER_REQUEST.put(limits, maxKeysPerRequest);
            limits.putAll(this.limits.coreLimits());
            Map<String, Object> config = new LinkedHashMap<>();
            BridgeField.DEFAULT_LEASE_MS.put(config, leaseDefault.millis());
            BridgeField.MAX_LEASE_MS.put(config, leaseMax.millis());
            BridgeField.MAX_WAIT_MS.put(config, waitMax.millis());
            BridgeField.DEFAULT_WAIT_MS.put(config, waitDefault.millis());
            BridgeField.AGING_MS.put(config, aging.millis());
            BridgeField.DEFAULT_LOCK_DELAY_MS.put(config, lockDelayDefault.millis());
            BridgeField.LIMITS.put(config, limits);
            BridgeField.AUDIT_CAPACITY.put(config, audit.enabled() ? audit.bufferSize() : 0);
            return config;
        }

        /** The effective settings, for diagnostics. */
        public Map<String, Object> asMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(LEASE_DEFAULT.getKey(), leaseDefault.getStringRep());
            m.put(LEASE_MAX.getKey(), leaseMax.getStringRep());
            m.put(WAIT_DEFAULT.getKey(), waitDefault.getStringRep());
            m.put(WAIT_MAX.getKey(), waitMax.getStringRep());
            m.put(PRIORITY_AGING.getKey(), aging.getStringRep());
            m.put(LOCK_DELAY_DEFAULT.getKey(), lockDelayDefault.getStringRep());
            m.put(MAX_WAITERS.getKey(), maxWaiters);
            m.put(MAX_KEYS_PER_REQUEST.getKey(), maxKeysPerRequest);
            m.putAll(limits.asMap());
            m.put(LISTING_MAX_BUSY.getKey(), listingMaxBusy);
            m.putAll(audit.asMap());
            return m;
        }

        /**
         * The largest body a request may send (checked before it is parsed, docs/API.md
         * "Limits"): per key of a multi-lock, room for a key and its fields with every byte
         * JSON-escaped (six characters each for a 512-byte key) and the rest of the
         * body (owner, options) on top.
         */
        public long maxBodyBytes() {
            return BODY_BASE_BYTES + (long) maxKeysPerRequest * BODY_BYTES_PER_KEY;
        }
    }

    /** Room in a body for everything but its keys: an escaped 512-byte owner, options, whitespace. */
    static final long BODY_BASE_BYTES = 16 * 1024;
    /** Room in a body per key: an escaped 512-byte key with its mode, scope and punctuation. */
    static final long BODY_BYTES_PER_KEY = 4 * 1024;

    /** The {@code locks.audit.*} values (docs/API.md "Lock history"). */
    public record Audit(boolean enabled, int bufferSize, TimeValue retention, TimeValue flushInterval) {
        static Audit of(Settings settings) {
            return new Audit(
                    AUDIT_ENABLED.get(settings),
                    AUDIT_BUFFER_SIZE.get(settings),
                    AUDIT_RETENTION.get(settings),
                    AUDIT_FLUSH_INTERVAL.get(settings));
        }

        Map<String, Object> asMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(AUDIT_ENABLED.getKey(), enabled);
            m.put(AUDIT_BUFFER_SIZE.getKey(), bufferSize);
            m.put(AUDIT_RETENTION.getKey(), retention.getStringRep());
            m.put(AUDIT_FLUSH_INTERVAL.getKey(), flushInterval.getStringRep());
            return m;
        }
    }

    /** The {@code locks.limits.*} values. */
    public record Limits(
            int maxLocks,
            int maxSessions,
            int maxWaiters,
            int maxLocksPerOwner,
            int maxWaitersPerOwner,
            int maxSessionsPerOwner,
            int maxWatches,
            ByteSizeValue maxMemory) {
        static Limits of(Settings settings) {
            ByteSizeValue memory = LIMIT_MEMORY.get(settings);
            if (memory.getBytes() <= 0) {
                throw new IllegalArgumentException(
                        "[" + LIMIT_MEMORY.getKey() + "] must be positive, got [" + memory.getStringRep() + "]");
            }
            return new Limits(
                    LIMIT_LOCKS.get(settings),
                    LIMIT_SESSIONS.get(settings),
                    LIMIT_WAITERS.get(settings),
                    LIMIT_LOCKS_PER_OWNER.get(settings),
                    LIMIT_WAITERS_PER_OWNER.get(settings),
                    LIMIT_SESSIONS_PER_OWNER.get(settings),
                    LIMIT_WATCHES.get(settings),
                    memory);
        }

        /** The core's names for these limits ({@code lock_core::Limits}). */
        Map<String, Object> coreLimits() {
            Map<String, Object> m = new LinkedHashMap<>();
            BridgeField.MAX_LOCKS.put(m, maxLocks);
            BridgeField.MAX_SESSIONS.put(m, maxSessions);
            BridgeField.MAX_WAITERS.put(m, maxWaiters);
            BridgeField.MAX_LOCKS_PER_OWNER.put(m, maxLocksPerOwner);
            BridgeField.MAX_WAITERS_PER_OWNER.put(m, maxWaitersPerOwner);
            BridgeField.MAX_SESSIONS_PER_OWNER.put(m, maxSessionsPerOwner);
            BridgeField.MAX_WATCHES.put(m, maxWatches);
            BridgeField.MAX_MEMORY_BYTES.put(m, maxMemory.getBytes());
            return m;
        }

        Map<String, Object> asMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(LIMIT_LOCKS.getKey(), maxLocks);
            m.put(LIMIT_SESSIONS.getKey(), maxSessions);
            m.put(LIMIT_WAITERS.getKey(), maxWaiters);
            m.put(LIMIT_LOCKS_PER_OWNER.getKey(), maxLocksPerOwner);
            m.put(LIMIT_WAITERS_PER_OWNER.getKey(), maxWaitersPerOwner);
            m.put(LIMIT_SESSIONS_PER_OWNER.getKey(), maxSessionsPerOwner);
            m.put(LIMIT_WATCHES.getKey(), maxWatches);
            m.put(LIMIT_MEMORY.getKey(), maxMemory.getStringRep());
            return m;
        }
    }
}
