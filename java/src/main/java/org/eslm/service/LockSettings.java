package org.eslm.service;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.common.settings.Setting.Property;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.core.TimeValue;

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
    /** Most requests queued on one key. */
    public static final Setting<Integer> MAX_WAITERS =
            Setting.intSetting("locks.max_waiters", 10_000, 1, 1_000_000, Property.NodeScope, Property.Dynamic);
    /** Most keys in one multi-lock request. */
    public static final Setting<Integer> MAX_KEYS_PER_REQUEST =
            Setting.intSetting("locks.max_keys_per_request", 100, 1, 10_000, Property.NodeScope, Property.Dynamic);
    /** {@code locks.durability} value: changes replicated and persisted before they are answered. */
    public static final String DURABILITY_REPLICATED = "replicated";
    /** {@code locks.durability} value: holders in the owner's memory only (the behaviour before replication). */
    public static final String DURABILITY_MEMORY = "memory";

    /**
     * Number of lock partitions: shards of the lock index, each owned by the node holding its
     * primary. Default 1: every multi-lock, tree lock and session is atomic whatever its keys,
     * and one core partition serves millions of operations a second, far more than HTTP brings
     * to one node. More partitions spread ownership (and failover) over nodes; then locks that
     * must be taken together need a common {@code routing}. Read when the lock index is created.
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
     * started + 30s (the caller passes it: {@code LockService.highestLeaseMax}).
     */
    public static final Setting<TimeValue> RECOVERY_GRACE = Setting.timeSetting(
            "locks.recovery.grace", TimeValue.MINUS_ONE, TimeValue.MINUS_ONE, ONE_YEAR, Property.NodeScope);

    /** The grace in force for {@code settings}. */
    public static TimeValue recoveryGrace(Settings settings, TimeValue leaseMax) {
        TimeValue grace = RECOVERY_GRACE.get(settings);
        return grace.millis() >= 0
                ? grace
                : TimeValue.timeValueMillis(leaseMax.millis() + FAILURE_DETECTION_MARGIN.millis());
    }

    /** The settings whose changes are pushed to the core. */
    public static final List<Setting<?>> DYNAMIC = List.of(
            LEASE_DEFAULT, LEASE_MAX, WAIT_DEFAULT, WAIT_MAX, PRIORITY_AGING, MAX_WAITERS, MAX_KEYS_PER_REQUEST);

    /** Every setting the plugin registers. */
    public static final List<Setting<?>> ALL = List.of(
            LEASE_DEFAULT,
            LEASE_MAX,
            WAIT_DEFAULT,
            WAIT_MAX,
            PRIORITY_AGING,
            MAX_WAITERS,
            MAX_KEYS_PER_REQUEST,
            PARTITIONS,
            DURABILITY,
            RECOVERY_GRACE);

    private LockSettings() {}

    /**
     * The values in force, read once per request so a request sees one consistent set.
     */
    public record Values(
            TimeValue leaseDefault,
            TimeValue leaseMax,
            TimeValue waitDefault,
            TimeValue waitMax,
            TimeValue aging,
            int maxWaiters,
            int maxKeysPerRequest) {
        /** Reads and cross-checks the values. @throws IllegalArgumentException naming the settings */
        public static Values of(Settings settings) {
            Values v = new Values(
                    LEASE_DEFAULT.get(settings),
                    LEASE_MAX.get(settings),
                    WAIT_DEFAULT.get(settings),
                    WAIT_MAX.get(settings),
                    PRIORITY_AGING.get(settings),
                    MAX_WAITERS.get(settings),
                    MAX_KEYS_PER_REQUEST.get(settings));
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
            limits.put("max_waiters_per_key", maxWaiters);
            limits.put("max_keys_per_request", maxKeysPerRequest);
            Map<String, Object> config = new LinkedHashMap<>();
            config.put("default_lease_ms", leaseDefault.millis());
            config.put("max_lease_ms", leaseMax.millis());
            config.put("max_wait_ms", waitMax.millis());
            config.put("aging_ms", aging.millis());
            config.put("limits", limits);
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
            m.put(MAX_WAITERS.getKey(), maxWaiters);
            m.put(MAX_KEYS_PER_REQUEST.getKey(), maxKeysPerRequest);
            return m;
        }
    }
}
