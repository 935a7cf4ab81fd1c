package org.eslm.spring.boot;

import java.time.Duration;
import org.eslm.client.LockClientBuilder;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code eslm.*} properties: the options of the auto-configured {@link
 * org.eslm.client.LockClient} ({@link LockClientBuilder}), and a switch and the settings of each
 * integration. An option left unset keeps the client's default.
 */
@ConfigurationProperties("eslm")
public class LockManagerProperties {
    /** Whether to auto-configure the lock manager's client and its integrations. */
    private boolean enabled = true;

    /**
     * One owner shared by every acquisition of the client: each acquire of a key it already holds
     * is then reentrant, whichever thread asks, so threads no longer exclude each other. Unset (the
     * default), every acquisition has an owner of its own, host/pid/random/n.
     */
    private String owner;

    /**
     * How long a call without a wait of its own (try-lock, renew, release) keeps retrying a 503
     * lock_partition_unavailable_exception; zero: never.
     */
    private Duration retryBudget = Duration.ofSeconds(5);

    /** The fraction of a lease after which the watchdog renews it, between 0 and 1 (the client's default: 1/3). */
    private Double renewFraction;

    /**
     * How many held locks are watched at once (GET /_locks/{key}/_watch) so that their loss is
     * reported as soon as the server ends them; each watch holds one connection of the REST
     * client's pool.
     */
    private int lossWatches = 4;

    private final ShedLock shedlock = new ShedLock();

    private final LockRegistry lockRegistry = new LockRegistry();

    private final Health health = new Health();

    private final Metrics metrics = new Metrics();

    /** These options applied to {@code builder}. */
    void applyTo(LockClientBuilder builder) {
        if (owner != null && !owner.isBlank()) {
            builder.owner(owner);
        }
        builder.retryBudget(retryBudget);
        if (renewFraction != null) {
            builder.renewFraction(renewFraction);
        }
        builder.lossWatches(lossWatches);
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getOwner() {
        return owner;
    }

    public void setOwner(String owner) {
        this.owner = owner;
    }

    public Duration getRetryBudget() {
        return retryBudget;
    }

    public void setRetryBudget(Duration retryBudget) {
        this.retryBudget = retryBudget;
    }

    public Double getRenewFraction() {
        return renewFraction;
    }

    public void setRenewFraction(Double renewFraction) {
        this.renewFraction = renewFraction;
    }

    public int getLossWatches() {
        return lossWatches;
    }

    public void setLossWatches(int lossWatches) {
        this.lossWatches = lossWatches;
    }

    public ShedLock getShedlock() {
        return shedlock;
    }

    public LockRegistry getLockRegistry() {
        return lockRegistry;
    }

    public Health getHealth() {
        return health;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    /** The ShedLock {@code LockProvider}, when ShedLock is on the class path. */
    public static class ShedLock {
        /** Whether to define the ShedLock LockProvider (LockManagerLockProvider). */
        private boolean enabled = true;

        /** The prefix of the lock manager's key of each ShedLock name. */
        private String prefix = "shedlock-";

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getPrefix() {
            return prefix;
        }

        public void setPrefix(String prefix) {
            this.prefix = prefix;
        }
    }

    /** The Spring Integration {@code LockRegistry}, when Spring Integration is on the class path. */
    public static class LockRegistry {
        /** Whether to define the Spring Integration LockRegistry (LockManagerLockRegistry). */
        private boolean enabled = true;

        /** The prefix of the lock manager's key of each registry key (keys are prefix + lockKey). */
        private String prefix = "";

        /**
         * The lease of the registry's locks, renewed by the watchdog while held; unset: the
         * server's locks.lease.default (30 s).
         */
        private Duration lease;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getPrefix() {
            return prefix;
        }

        public void setPrefix(String prefix) {
            this.prefix = prefix;
        }

        public Duration getLease() {
            return lease;
        }

        public void setLease(Duration lease) {
            this.lease = lease;
        }
    }

    /** The Actuator health indicator, when Spring Boot's health support is on the class path. */
    public static class Health {
        /** Whether to define the health indicator (lockManager). */
        private boolean enabled = true;

        /** How long a health check waits for GET _health_report/lock_partitions before it says DOWN. */
        private Duration timeout = Duration.ofSeconds(5);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    /** The client's Micrometer meters, when Micrometer and a MeterRegistry bean are there. */
    public static class Metrics {
        /** Whether to record the client's meters (eslm.lock.*). */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
