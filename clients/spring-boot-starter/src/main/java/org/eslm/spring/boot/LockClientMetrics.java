package org.eslm.spring.boot;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eslm.client.HeldLock;
import org.eslm.client.LockClientListener;
import org.eslm.client.LockScope;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockWaitTimeoutException;

/**
 * The lock client's events as Micrometer meters ({@link LockClientListener}, added to the
 * auto-configured client). Tags are of low cardinality: never the key.
 *
 * <table>
 *   <caption>meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@value #ACQUIRE}</td><td>timer</td><td>{@code scope}, {@code outcome}: {@code acquired},
 *       {@code busy} (a try-lock of a held key), {@code timeout} (the wait ran out), {@code error}</td>
 *       <td>acquire latency, from sending the request to the hand-over (or failure)</td></tr>
 *   <tr><td>{@value #WAIT}</td><td>timer</td><td>{@code scope}</td><td>how long grants queued on the
 *       server behind other holders ({@code waited_ms}); recorded for the grants that queued only, so
 *       its count is the number of contended acquires</td></tr>
 *   <tr><td>{@value #HOLD}</td><td>timer</td><td>{@code scope}</td><td>how long released locks were
 *       held</td></tr>
 *   <tr><td>{@value #RENEWALS}</td><td>counter</td><td>{@code scope}, {@code outcome}: {@code success},
 *       {@code failure}</td><td>lease renewals (the watchdog's and explicit ones)</td></tr>
 *   <tr><td>{@value #LOST}</td><td>counter</td><td>{@code scope}, {@code cause}: the error type that
 *       revealed it (e.g. {@code lock_not_held_exception})</td><td>locks found lost while held</td></tr>
 *   <tr><td>{@value LockClientMeterBinder#HELD}</td><td>gauge</td><td></td><td>locks the client holds
 *       now ({@link LockClientMeterBinder})</td></tr>
 * </table>
 */
public class LockClientMetrics implements LockClientListener {
    public static final String ACQUIRE = "eslm.lock.acquire";
    public static final String WAIT = "eslm.lock.wait";
    public static final String HOLD = "eslm.lock.hold";
    public static final String RENEWALS = "eslm.lock.renewals";
    public static final String LOST = "eslm.lock.lost";

    private final MeterRegistry registry;
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    public LockClientMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onAcquired(HeldLock lock, Duration took) {
        acquireTimer(lock.scope(), "acquired").record(took);
        if (lock.waitedMs() > 0) {
            timer(WAIT, "Time grants queued on the server behind other holders", lock.scope(), null)
                    .record(Duration.ofMillis(lock.waitedMs()));
        }
    }

    @Override
    public void onAcquireFailed(String key, LockScope scope, Duration took, LockException cause) {
        acquireTimer(scope, outcome(cause)).record(took);
    }

    @Override
    public void onRenewed(HeldLock lock) {
        renewals(lock.scope(), "success").increment();
    }

    @Override
    public void onRenewalFailed(HeldLock lock, LockException cause) {
        renewals(lock.scope(), "failure").increment();
    }

    @Override
    public void onLost(HeldLock lock, LockException cause) {
        String scope = name(lock.scope());
        String type = cause.type() == null ? "unknown" : cause.type();
        counters.computeIfAbsent(LOST + '|' + scope + '|' + type, id -> Counter.builder(LOST)
                        .description("Locks found lost while held")
                        .tag("scope", scope)
                        .tag("cause", type)
                        .register(registry))
                .increment();
    }

    @Override
    public void onReleased(HeldLock lock, Duration held) {
        timer(HOLD, "How long released locks were held", lock.scope(), null).record(held);
    }

    /** The outcome tag of a failed acquire. */
    static String outcome(LockException cause) {
        if (cause instanceof LockWaitTimeoutException) {
            return "timeout";
        }
        if (cause instanceof LockConflictException) {
            return "busy";
        }
        return "error";
    }

    private Timer acquireTimer(LockScope scope, String outcome) {
        return timer(ACQUIRE, "Acquire latency, from the request to the hand-over or failure", scope, outcome);
    }

    private Timer timer(String name, String description, LockScope scope, String outcome) {
        String scopeName = name(scope);
        return timers.computeIfAbsent(name + '|' + scopeName + '|' + outcome, id -> {
            Timer.Builder builder = Timer.builder(name).description(description).tag("scope", scopeName);
            if (outcome != null) {
                builder.tag("outcome", outcome);
            }
            return builder.register(registry);
        });
    }

    private Counter renewals(LockScope scope, String outcome) {
        String scopeName = name(scope);
        return counters.computeIfAbsent(RENEWALS + '|' + scopeName + '|' + outcome, id -> Counter.builder(RENEWALS)
                .description("Lease renewals of held locks")
                .tag("scope", scopeName)
                .tag("outcome", outcome)
                .register(registry));
    }

    private static String name(LockScope scope) {
        return scope.name().toLowerCase(Locale.ROOT);
    }
}
