package org.eslm.service;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.common.Strings;
import org.elasticsearch.common.xcontent.XContentHelper;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.tasks.CancellableTask;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.tasks.TaskCancelledException;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.eslm.action.LockOpRequest;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeLockException;
import org.eslm.bridge.NativeOp;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The node's lock service: the one place Java talks to the Rust core.
 *
 * <p>It holds no lock logic. It sends each operation across the bridge, shapes the core's answer
 * into the documented REST body, turns native outcomes into Elasticsearch exceptions, and
 * delivers what the core decides later:
 * <ul>
 *   <li><b>Waiting without threads.</b> A request that may wait gets a request id and a
 *   {@link Pending} entry before it crosses the bridge. If the core queues it, the calling thread
 *   returns at once; the request's listener is completed when the core's event for that id
 *   (granted, timed out, deadlock victim, cancelled) comes back in the answer of a later call.</li>
 *   <li><b>Time.</b> Every answer says when the core's next deadline (a lease, a wait, a
 *   session) falls; the service schedules one tick on the generic pool for the earliest such
 *   moment, so expiries happen on time with no request arriving.</li>
 *   <li><b>Clients that go away.</b> A waiting request runs in a cancellable task; cancelling it
 *   cancels the waiter. If the grant won the race, the lock is released at once, so no lock
 *   outlives a client that can no longer release it.</li>
 * </ul>
 */
public final class LockService implements Closeable {
    private static final Logger logger = LogManager.getLogger(LockService.class);

    private final NativeLockCore core;
    private final ThreadPool threadPool;
    private final Supplier<String> localNodeName;
    /** {@code node} ({@code id}, {@code name}) and {@code plugin} (build info) for diagnostics. */
    private final Supplier<Map<String, Object>> nodeInfo;
    private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
    private final AtomicLong requestIds = new AtomicLong();
    /** {@link System#nanoTime()} of the earliest scheduled tick, or {@link Long#MAX_VALUE}. */
    private final AtomicLong nextTickNanos = new AtomicLong(Long.MAX_VALUE);
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Partitions this node serves, with their epochs. Only the cluster-state listener changes it. */
    private final Map<Integer, Long> openPartitions = new ConcurrentHashMap<>();
    /**
     * When the elected master last confirmed this node's ownership of each partition
     * ({@link System#nanoTime()} of the question). A partition whose confirmation is older than
     * {@link #OWNERSHIP_WINDOW} changes nothing: this node may be cut off, and a new owner may
     * already be counting down its recovery grace.
     */
    private final Map<Integer, Long> confirmedAt = new ConcurrentHashMap<>();
    /** How long an ownership confirmation stays good; well below any recovery grace. */
    public static final TimeValue OWNERSHIP_WINDOW = TimeValue.timeValueSeconds(3);
    private volatile LockSettings.Values settings;

    public LockService(
        NativeLockCore core,
        ThreadPool threadPool,
        Supplier<String> localNodeName,
        Supplier<Map<String, Object>> nodeInfo,
        LockSettings.Values settings
    ) {
        this.core = core;
        this.threadPool = threadPool;
        this.localNodeName = localNodeName;
        this.nodeInfo = nodeInfo;
        this.settings = settings;
    }

    /** The settings in force. */
    public LockSettings.Values settings() {
        return settings;
    }

    /** Pushes changed dynamic settings to the core. @throws IllegalArgumentException when the core refuses them */
    public void applySettings(LockSettings.Values values) {
        handle(call(NativeOp.CONFIGURE, NativeLockCore.ALL_PARTITIONS, toJson(values.coreConfig())));
        this.settings = values;
    }

    /** A request waiting for the core's decision. */
    private static final class Pending {
        final long requestId;
        final NativeOp op;
        final int partition;
        final ActionListener<Map<String, Object>> listener;
        volatile Long waiterId;
        volatile boolean cancelled;

        Pending(long requestId, NativeOp op, int partition, ActionListener<Map<String, Object>> listener) {
            this.requestId = requestId;
            this.op = op;
            this.partition = partition;
            this.listener = listener;
        }
    }

    /**
     * Runs one operation and completes {@code listener} with the documented REST body: at once,
     * or — for an acquire that queues — when the core grants, times out, picks it as a deadlock
     * victim or drops it. Never blocks the calling thread.
     */
    public void execute(LockOpRequest request, Task task, ActionListener<Map<String, Object>> listener) {
        if (closed.get()) {
            listener.onFailure(new ElasticsearchStatusException("lock service is closed", RestStatus.SERVICE_UNAVAILABLE));
            return;
        }
        int partition = request.key() == null ? NativeLockCore.ALL_PARTITIONS : request.partition();
        if (partition != NativeLockCore.ALL_PARTITIONS && openPartitions.containsKey(partition) == false) {
            listener.onFailure(notServed(partition));
            return;
        }
        if (partition != NativeLockCore.ALL_PARTITIONS && request.op() != NativeOp.KEY_INFO && confirmed(partition) == false) {
            listener.onFailure(new LockPartitionUnavailableException(
                "node [" + localNodeName.get() + "] cannot confirm with the elected master that it still owns lock partition ["
                    + partition + "]; retry",
                0
            ));
            return;
        }
        switch (request.op()) {
            case ACQUIRE, ACQUIRE_MANY -> acquire(request, partition, task, listener);
            case DIAGNOSTICS -> ActionListener.completeWith(listener, this::diagnostics);
            default -> ActionListener.completeWith(listener, () -> {
                Map<String, Object> envelope = callRouted(request.op(), partition, toJson(request.args()));
                handle(envelope);
                return ResponseShapes.shape(request.op(), envelope.get("result"), localNodeName.get());
            });
        }
    }

    private LockPartitionUnavailableException notServed(int partition) {
        return new LockPartitionUnavailableException(
            "lock partition [" + partition + "] is not served by node [" + localNodeName.get() + "] (it is moving); retry",
            0
        );
    }

    /** A call on one partition; if the partition closed under it, the failure is the retryable one. */
    private Map<String, Object> callRouted(NativeOp op, int partition, String argsJson) {
        try {
            return call(op, partition, argsJson);
        } catch (IllegalArgumentException e) {
            if (partition >= 0 && openPartitions.containsKey(partition) == false) {
                throw notServed(partition);
            }
            throw e;
        }
    }

    /** Records that the master confirmed this node's ownership of {@code partition} as asked at {@code askedAtNanos}. */
    public void confirmOwnership(int partition, long askedAtNanos) {
        confirmedAt.merge(partition, askedAtNanos, Math::max);
    }

    private boolean confirmed(int partition) {
        Long at = confirmedAt.get(partition);
        return at != null && System.nanoTime() - at < OWNERSHIP_WINDOW.nanos();
    }

    /** Whether this node serves {@code partition}. */
    public boolean isOpen(int partition) {
        return openPartitions.containsKey(partition);
    }

    /** The partitions this node serves, with their epochs. */
    public Map<Integer, Long> openPartitions() {
        return Map.copyOf(openPartitions);
    }

    /**
     * Starts serving {@code partition} in {@code epoch}: from a hand-over {@code snapshot} of the
     * previous owner (nothing lost, no grace), or empty with {@code graceMs} of recovery grace when
     * the previous owner died (no grants until its leases have surely run out).
     */
    public void openPartition(int partition, long epoch, long graceMs, Map<String, Object> snapshot) {
        Map<String, Object> args = new LinkedHashMap<>();
        args.put("epoch", epoch);
        args.put("grace_ms", graceMs);
        if (snapshot != null) {
            args.put("snapshot", snapshot);
        }
        handle(call(NativeOp.OPEN_PARTITION, partition, toJson(args)));
        confirmedAt.put(partition, System.nanoTime()); // opened from the state the master just published
        openPartitions.put(partition, epoch);
        logger.info("serving lock partition [{}] in epoch [{}]{}", partition, epoch,
            snapshot != null ? " (handed over)" : graceMs > 0 ? " after " + graceMs + "ms of recovery grace" : "");
    }

    /**
     * Stops serving {@code partition}: its waiting requests fail as retryable (their coordinators
     * re-queue them at the new owner); with {@code export}, answers its state for the new owner.
     */
    public Map<String, Object> closePartition(int partition, boolean export) {
        if (openPartitions.remove(partition) == null) {
            return null;
        }
        confirmedAt.remove(partition);
        Map<String, Object> envelope = call(NativeOp.CLOSE_PARTITION, partition, "{\"export\":" + export + "}");
        for (Pending p : pending.values()) {
            if (p.partition == partition && pending.remove(p.requestId) != null) {
                p.listener.onFailure(notServed(partition));
            }
        }
        logger.info("stopped serving lock partition [{}]", partition);
        @SuppressWarnings("unchecked")
        Map<String, Object> snapshot = (Map<String, Object>) ((Map<?, ?>) envelope.get("result")).get("snapshot");
        return snapshot;
    }

    private void acquire(LockOpRequest request, int partition, Task task, ActionListener<Map<String, Object>> listener) {
        long requestId = requestIds.incrementAndGet();
        Map<String, Object> args = new LinkedHashMap<>(request.args());
        args.put("request_id", requestId);
        Pending p = new Pending(requestId, request.op(), partition, listener);
        // Registered before the call: the grant event may be drained by another thread's call
        // before this one returns.
        pending.put(requestId, p);
        Map<String, Object> envelope;
        try {
            envelope = callRouted(request.op(), partition, toJson(args));
        } catch (Exception e) {
            pending.remove(requestId);
            listener.onFailure(e);
            tickSoon();
            return;
        }
        Map<?, ?> result = (Map<?, ?>) envelope.get("result");
        if (result.containsKey("granted")) {
            pending.remove(requestId);
            listener.onResponse(ResponseShapes.granted(request.op(), result.get("granted")));
        } else {
            Map<?, ?> queued = (Map<?, ?>) result.get("queued");
            p.waiterId = ((Number) queued.get("waiter_id")).longValue();
            if (task instanceof CancellableTask cancellable) {
                cancellable.addListener(() -> cancel(p));
            }
        }
        handle(envelope);
    }

    /** The client went away: drop its waiter (or give back a grant that won the race). */
    private void cancel(Pending p) {
        p.cancelled = true;
        Long waiterId = p.waiterId;
        if (waiterId == null || pending.containsKey(p.requestId) == false) {
            return; // not queued yet (acquire() re-checks), or already answered
        }
        try {
            handle(call(NativeOp.CANCEL, p.partition, "{\"waiter_id\":" + waiterId + "}"));
        } catch (NativeLockException | IllegalArgumentException e) {
            logger.debug("waiter [{}] was answered before its cancellation: {}", waiterId, e.getMessage());
        }
    }

    /** Delivers the events of an answer and schedules the next tick. */
    private void handle(Map<String, Object> envelope) {
        Object events = envelope.get("events");
        if (events instanceof List<?> list) {
            for (Object event : list) {
                try {
                    dispatch((Map<?, ?>) event);
                } catch (Exception e) {
                    logger.error(() -> "failed to deliver lock event " + event, e);
                }
            }
        }
        if (envelope.get("tick_in_ms") instanceof Number inMs) {
            scheduleTick(inMs.longValue());
        }
    }

    private void dispatch(Map<?, ?> event) {
        String type = (String) event.get("event");
        switch (type) {
            case "lease_expired" -> logger.info(
                "lease of [{}] held by [{}] expired (token {}, held {}ms)",
                event.get("key"), event.get("owner"), event.get("fencing_token"), event.get("held_ms")
            );
            case "session_expired" -> logger.info(
                "session [{}] of [{}] expired; released {}", event.get("session"), event.get("owner"), event.get("released")
            );
            default -> {
                long requestId = ((Number) event.get("request_id")).longValue();
                Pending p = pending.remove(requestId);
                if (type.equals("granted")) {
                    deliverGrant(p, event);
                } else if (p != null) {
                    p.listener.onFailure(waitFailure(type, event));
                }
            }
        }
    }

    private void deliverGrant(Pending p, Map<?, ?> event) {
        List<?> grants = (List<?>) event.get("grants");
        if (p == null) {
            // Its request was already answered (its partition closed, or the node is closing):
            // the grant lives in a partition this node no longer serves.
            logger.debug("grant for an answered request ignored: {}", event);
            return;
        }
        if (p.cancelled) {
            int partition = p.partition;
            for (Object g : grants) {
                Map<?, ?> grant = (Map<?, ?>) g;
                Map<String, Object> release = new LinkedHashMap<>();
                release.put("key", grant.get("key"));
                release.put("owner", grant.get("owner"));
                release.put("fencing_token", grant.get("fencing_token"));
                release.put("scope", grant.get("scope"));
                try {
                    handle(call(NativeOp.RELEASE, partition, toJson(release)));
                    logger.debug("released [{}] granted to a request whose client went away", grant.get("key"));
                } catch (Exception e) {
                    logger.warn(() -> "could not release [" + grant.get("key") + "] granted to a cancelled request", e);
                }
            }
            p.listener.onFailure(new TaskCancelledException("client went away before the grant"));
            return;
        }
        p.listener.onResponse(ResponseShapes.granted(p.op, p.op == NativeOp.ACQUIRE ? grants.get(0) : grants));
    }

    private static Exception waitFailure(String type, Map<?, ?> event) {
        String key = String.valueOf(event.get("key"));
        String owner = String.valueOf(event.get("owner"));
        return switch (type) {
            case "wait_timed_out" -> new LockWaitTimeoutException(
                "[" + owner + "] waited " + event.get("waited_ms") + "ms for lock [" + key + "] without being granted",
                key,
                ((Number) event.get("waited_ms")).longValue()
            );
            case "deadlock_victim" -> new DeadlockException(
                "[" + owner + "] waiting for [" + key + "] was chosen as the victim of deadlock " + event.get("cycle"),
                key,
                stringList(event.get("cycle"))
            );
            case "cancelled" -> switch (String.valueOf(event.get("reason"))) {
                case "session_ended", "session_expired" -> new SessionNotFoundException(
                    "the session of [" + owner + "] ended while it waited for [" + key + "]",
                    String.valueOf(event.get("session"))
                );
                default -> new TaskCancelledException("waiting for [" + key + "] was cancelled");
            };
            default -> new ElasticsearchStatusException("unexpected lock event [" + type + "]", RestStatus.INTERNAL_SERVER_ERROR);
        };
    }

    private void scheduleTick(long inMs) {
        if (closed.get()) {
            return;
        }
        long delayMs = Math.max(1, inMs);
        long at = System.nanoTime() + TimeValue.timeValueMillis(delayMs).nanos();
        while (true) {
            long current = nextTickNanos.get();
            if (current - at <= 0 && current != Long.MAX_VALUE) {
                return; // an earlier or equal tick is already scheduled
            }
            if (nextTickNanos.compareAndSet(current, at)) {
                break;
            }
        }
        threadPool.schedule(this::tick, TimeValue.timeValueMillis(delayMs), threadPool.generic());
    }

    private void tickSoon() {
        scheduleTick(1);
    }

    private void tick() {
        nextTickNanos.set(Long.MAX_VALUE);
        if (closed.get()) {
            return;
        }
        // Only partitions whose ownership is confirmed move on: expiries hand locks to waiters.
        // The others are ticked again once confirmed (or closed).
        boolean waitingForConfirmation = false;
        for (Integer partition : openPartitions.keySet()) {
            if (confirmed(partition) == false) {
                waitingForConfirmation = true;
                continue;
            }
            try {
                handle(call(NativeOp.TICK, partition, "{}"));
            } catch (Exception e) {
                logger.error("lock core tick of partition [" + partition + "] failed; retrying in 1s", e);
                scheduleTick(1000);
            }
        }
        if (waitingForConfirmation) {
            scheduleTick(500);
        }
    }

    /** This node's lock statistics (counters, gauges, wait/hold percentiles, hot keys). */
    public Map<String, Object> stats() {
        Map<String, Object> envelope = call(NativeOp.STATS, NativeLockCore.ALL_PARTITIONS, "{}");
        handle(envelope);
        @SuppressWarnings("unchecked")
        Map<String, Object> stats = (Map<String, Object>) envelope.get("result");
        return stats;
    }

    private Map<String, Object> diagnostics() {
        Map<String, Object> envelope = call(NativeOp.DIAGNOSTICS, NativeLockCore.ALL_PARTITIONS, "{}");
        handle(envelope);
        Map<String, Object> body = new LinkedHashMap<>(nodeInfo.get());
        Map<String, Object> effective = new LinkedHashMap<>(settings.asMap());
        if (body.remove("static_settings") instanceof Map<?, ?> fixed) {
            fixed.forEach((k, v) -> effective.put(String.valueOf(k), v));
        }
        body.put("settings", effective);
        body.put("pending_requests", pending.size());
        body.put("core", envelope.get("result"));
        return body;
    }

    /** One bridge call, with native outcomes mapped to Elasticsearch exceptions. */
    private Map<String, Object> call(NativeOp op, int partition, String argsJson) {
        try {
            return parse(core.call(op, partition, argsJson));
        } catch (NativeLockException e) {
            throw translate(e);
        }
    }

    /** Maps a native lock outcome to the exception the REST layer renders (type and status). */
    static RuntimeException translate(NativeLockException e) {
        Map<String, Object> d = parse(e.detailsJson());
        String key = String.valueOf(d.get("key"));
        return switch (e.code()) {
            case NativeLockException.CONFLICT -> new LockConflictException(e.getMessage(), key, holderNames(d.get("holders")));
            case NativeLockException.NOT_HELD -> new LockNotHeldException(e.getMessage(), key, String.valueOf(d.get("owner")));
            case NativeLockException.WAIT_TIMEOUT -> new LockWaitTimeoutException(e.getMessage(), key, number(d.get("waited_ms")));
            case NativeLockException.DEADLOCK -> new DeadlockException(e.getMessage(), key, stringList(d.get("cycle")));
            case NativeLockException.SESSION_NOT_FOUND -> new SessionNotFoundException(e.getMessage(), String.valueOf(d.get("session")));
            case NativeLockException.LIMIT_EXCEEDED -> new LockLimitExceededException(
                // The keys-per-request limit is about the request's [locks] field: name it.
                ("max_keys_per_request".equals(d.get("limit")) ? "[locks] names too many keys: " : "") + e.getMessage(),
                String.valueOf(d.get("limit")),
                number(d.get("max"))
            );
            case NativeLockException.PARTITION_UNAVAILABLE -> new LockPartitionUnavailableException(
                e.getMessage(), number(d.get("retry_after_ms"))
            );
            default -> new ElasticsearchStatusException(
                "unexpected lock core outcome [" + e.code() + "]: " + e.getMessage(),
                RestStatus.INTERNAL_SERVER_ERROR
            );
        };
    }

    private static long number(Object o) {
        return o instanceof Number n ? n.longValue() : -1;
    }

    private static List<String> holderNames(Object holders) {
        List<String> names = new ArrayList<>();
        if (holders instanceof List<?> list) {
            for (Object h : list) {
                names.add(String.valueOf(((Map<?, ?>) h).get("owner")));
            }
        }
        return names;
    }

    private static List<String> stringList(Object o) {
        List<String> out = new ArrayList<>();
        if (o instanceof List<?> list) {
            list.forEach(v -> out.add(String.valueOf(v)));
        }
        return out;
    }

    /** A JSON object as a map. */
    public static Map<String, Object> parseJson(String json) {
        return parse(json);
    }

    static Map<String, Object> parse(String json) {
        return XContentHelper.convertToMap(JsonXContent.jsonXContent, json, true);
    }

    /** JSON text of a map, for the bridge. */
    public static String toJson(Map<String, ?> map) {
        try (XContentBuilder builder = JsonXContent.contentBuilder()) {
            builder.map(map);
            return Strings.toString(builder);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Number of requests waiting for the core (diagnostics, tests). */
    public int pendingRequests() {
        return pending.size();
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true) == false) {
            return;
        }
        for (Pending p : pending.values()) {
            if (pending.remove(p.requestId) != null) {
                p.listener.onFailure(new ElasticsearchStatusException("node is shutting down", RestStatus.SERVICE_UNAVAILABLE));
            }
        }
        core.close();
        logger.info("lock core closed");
    }
}
