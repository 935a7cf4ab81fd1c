package org.eslm.replication;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;
import java.util.function.LongConsumer;
import java.util.function.ObjLongConsumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeBounds;
import org.eslm.bridge.NativeFormat;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.core.CoreClient;
import org.eslm.service.Commits;
import org.eslm.service.OwnershipProtocol;
import org.eslm.service.PartitionGate;
import org.eslm.service.ReplicationChannel;

/**
 * Group commit of the replicated partitions (docs/ARCHITECTURE.md "Replication"). A change the
 * core made is told to nobody — no answer, no grant event — until a batch that holds it reached
 * every in-sync copy of the partition's shard. Per partition at most one batch is in flight; the
 * answers that wait meanwhile all ride on the next one, so a contended key's hand-offs share
 * their round trips instead of queueing one each.
 *
 * <p>The first batch of a partition opened here is its whole state (a new epoch, or copies that
 * have none), as is any batch after {@link #requestFull}. A failed batch means this node is no
 * longer the primary in the partition's epoch: the answers waiting on it fail as retryable and
 * the partition is given up ({@code onFailure}), so nothing it decided after that is ever seen.
 */
final class GroupCommit implements Commits {
    private static final Logger logger = LogManager.getLogger(GroupCommit.class);

    private final CoreClient core;
    /**
     * Delivers the events of a committed take (expiries and the grants they caused), with the
     * {@link System#nanoTime()} the take started at (its grants' hand-offs are timed from it).
     */
    private final ObjLongConsumer<Map<String, Object>> deliver;
    /** The retryable failure answered when {@code partition} stopped being served here. */
    private final IntFunction<RuntimeException> notServed;
    /** The state format the nodes of the cluster read (cluster.PeerFormats), batches are written in it. */
    private final IntSupplier peerFormat;
    /** Whether copies renew owners' leases (heartbeats are sent only then). */
    private final PartitionGate gate;
    /** Renews this owner's lease when a batch reached every copy (docs/ARCHITECTURE.md "Silent owners"). */
    private final OwnershipProtocol protocol;
    /** Takes each batch's round trip to every copy, in nanoseconds (service.LockMetrics). */
    private final LongConsumer roundTrips;
    /** How long an owner that replicated nothing waits before it sends a heartbeat. */
    private static final long HEARTBEAT_INTERVAL_NANOS =
            TimeUnit.MILLISECONDS.toNanos(NativeBounds.HEARTBEAT_INTERVAL_MS);

    private volatile ReplicationChannel channel;
    private volatile IntConsumer onFailure = p -> {};
    private final Map<Integer, Lane> lanes = new ConcurrentHashMap<>();

    /** One partition's queue of answers waiting for a batch. */
    private static final class Lane {
        final long epoch;
        boolean inFlight;
        boolean needFull = true;
        boolean closed;
        /** {@link System#nanoTime()} of the last send of a batch or heartbeat. */
        long lastShipped = System.nanoTime();

        List<ActionListener<Void>> waiting = new ArrayList<>();
        final BatchTimes times = new BatchTimes();

        Lane(long epoch) {
            this.epoch = epoch;
        }
    }

    GroupCommit(
            CoreClient core,
            ObjLongConsumer<Map<String, Object>> deliver,
            IntFunction<RuntimeException> notServed,
            IntSupplier peerFormat,
            PartitionGate gate,
            LongConsumer roundTrips) {
        this.core = core;
        this.deliver = deliver;
        this.notServed = notServed;
        this.peerFormat = peerFormat;
        this.gate = gate;
        this.protocol = new OwnershipProtocol(core);
        this.roundTrips = roundTrips;
    }

    @Override
    public void connect(ReplicationChannel channel, IntConsumer onFailure) {
        this.channel = channel;
        this.onFailure = onFailure;
    }

    @Override
    public void opened(int partition, long epoch) {
        Lane lane = new Lane(epoch);
        Lane previous = lanes.put(partition, lane);
        if (previous != null) {
            failLane(previous, partition);
        }
        kick(partition, lane);
    }

    @Override
    public void closed(int partition) {
        Lane lane = lanes.remove(partition);
        if (lane != null) {
            failLane(lane, partition);
        }
    }

    @Override
    public boolean replicates(int partition) {
        return lanes.containsKey(partition);
    }

    @Override
    public Map<String, Object> batchTimes(int partition) {
        Lane lane = lanes.get(partition);
        return lane == null ? null : lane.times.toMap();
    }

    @Override
    public void requestFull(int partition, ActionListener<Void> whenSent) {
        Lane lane = lanes.get(partition);
        if (lane == null) {
            whenSent.onFailure(notServed.apply(partition));
            return;
        }
        synchronized (lane) {
            lane.needFull = true;
        }
        afterCommit(partition, whenSent);
    }

    @Override
    public void afterCommit(int partition, ActionListener<Void> listener) {
        Lane lane = lanes.get(partition);
        if (lane == null) {
            listener.onFailure(notServed.apply(partition));
            return;
        }
        synchronized (lane) {
            if (lane.closed == false) {
                lane.waiting.add(listener);
                listener = null;
            }
        }
        if (listener != null) {
            listener.onFailure(notServed.apply(partition));
            return;
        }
        kick(partition, lane);
    }

    /** Sends the next batch of {@code lane} unless one is in flight or nothing waits. */
    private void kick(int partition, Lane lane) {
        List<ActionListener<Void>> batch;
        boolean full;
        synchronized (lane) {
            if (lane.inFlight || lane.closed || (lane.waiting.isEmpty() && lane.needFull == false)) {
                return;
            }
            lane.inFlight = true;
            batch = lane.waiting;
            lane.waiting = new ArrayList<>();
            full = lane.needFull;
            lane.needFull = false;
        }
        ReplicationChannel channel = this.channel;
        if (channel == null) {
            failed(partition, lane, batch, new IllegalStateException("lock replication is not connected yet"));
            return;
        }
        Map<String, Object> take;
        long takenAt = System.nanoTime();
        try {
            // Written in the format every copy's node reads (docs/ARCHITECTURE.md "Formats and versions").
            take = core.call(
                    NativeOp.TAKE_BATCH,
                    partition,
                    BridgeJson.toJson(NativeFormat.batchArgs(peerFormat.getAsInt(), full)));
        } catch (RuntimeException e) {
            failed(partition, lane, batch, e);
            return;
        }
        Map<?, ?> taken = (Map<?, ?>) BridgeField.RESULT.in(take);
        if (Boolean.TRUE.equals(BridgeField.EMPTY.in(taken))) {
            // Nothing changed since the last batch (a tick or cancel that moved nothing): the
            // answers waiting on it reveal nothing new, and the core kept the seq.
            committed(partition, lane, batch, take, takenAt, () -> {});
            return;
        }
        // The core's text, shipped as it is (rust/lock-jni ops/replication.rs, take_batch), and the
        // send ticket its acknowledgement renews this owner's lease from.
        String json = (String) BridgeField.BATCH.in(taken);
        long sentUs = ((Number) BridgeField.SENT_US.in(taken)).longValue();
        long shippedAt = shipping(lane);
        channel.ship(
                partition,
                lane.epoch,
                full,
                json,
                ActionListener.wrap(
                        ignored -> {
                            long roundTrip = System.nanoTime() - shippedAt;
                            lane.times.record(roundTrip);
                            roundTrips.accept(roundTrip);
                            committed(
                                    partition,
                                    lane,
                                    batch,
                                    take,
                                    takenAt,
                                    () -> protocol.renewed(partition, lane.epoch, sentUs));
                        },
                        e -> failed(partition, lane, batch, e)));
    }

    private static long shipping(Lane lane) {
        long now = System.nanoTime();
        synchronized (lane) {
            lane.lastShipped = now;
        }
        return now;
    }

    @Override
    public void heartbeat(int partition) {
        Lane lane = lanes.get(partition);
        ReplicationChannel channel = this.channel;
        if (lane == null || channel == null || gate.copyLeases() == false) {
            return;
        }
        synchronized (lane) {
            if (lane.inFlight
                    || lane.closed
                    || lane.needFull
                    || lane.waiting.isEmpty() == false
                    || System.nanoTime() - lane.lastShipped < HEARTBEAT_INTERVAL_NANOS) {
                return;
            }
            lane.inFlight = true;
        }
        long sentUs;
        try {
            sentUs = protocol.sending();
        } catch (RuntimeException e) {
            synchronized (lane) {
                lane.inFlight = false;
            }
            logger.warn(() -> "lock partition [" + partition + "]: no heartbeat ticket from the core", e);
            return;
        }
        shipping(lane);
        channel.ship(
                partition,
                lane.epoch,
                false,
                ReplicationChannel.HEARTBEAT,
                ActionListener.wrap(
                        ignored -> {
                            protocol.renewed(partition, lane.epoch, sentUs);
                            synchronized (lane) {
                                lane.inFlight = false;
                            }
                            kick(partition, lane);
                        },
                        e -> failed(partition, lane, List.of(), e)));
    }

    /**
     * The batch is on every copy: its answers go out, then {@code renew} renews this owner's lease
     * from the batch's send (after the answers, which do not depend on it: the lease only grows,
     * and the answers need not wait for a bridge call), then its events (of the take that started at
     * {@code takenAt}) and the next batch.
     */
    private void committed(
            int partition,
            Lane lane,
            List<ActionListener<Void>> batch,
            Map<String, Object> take,
            long takenAt,
            Runnable renew) {
        for (ActionListener<Void> l : batch) {
            try {
                l.onResponse(null);
            } catch (RuntimeException e) {
                logger.error("failed to answer after a committed lock batch", e);
            }
        }
        try {
            renew.run();
        } catch (RuntimeException e) {
            // The core is closing: the answers are out, and nothing else may answer them again.
            logger.warn("could not renew the lease of lock partition [" + partition + "] after a batch", e);
        }
        deliver.accept(take, takenAt);
        synchronized (lane) {
            lane.inFlight = false;
        }
        kick(partition, lane);
    }

    private void failed(int partition, Lane lane, List<ActionListener<Void>> batch, Exception e) {
        logger.warn(
                () -> "a batch of lock partition [" + partition + "] in epoch [" + lane.epoch
                        + "] did not reach its copies; this node gives the partition up",
                e);
        for (ActionListener<Void> l : batch) {
            l.onFailure(notServed.apply(partition));
        }
        if (lanes.remove(partition, lane)) {
            failLane(lane, partition);
            onFailure.accept(partition);
        }
    }

    private void failLane(Lane lane, int partition) {
        List<ActionListener<Void>> waiting;
        synchronized (lane) {
            lane.closed = true;
            waiting = lane.waiting;
            lane.waiting = new ArrayList<>();
        }
        for (ActionListener<Void> l : waiting) {
            l.onFailure(notServed.apply(partition));
        }
    }
}
