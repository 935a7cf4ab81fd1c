package org.eslm.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.elasticsearch.action.ActionListener;
import org.eslm.NativeTestSupport;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeBounds;
import org.eslm.bridge.NativeFormat;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.CoreClient;
import org.eslm.service.PartitionGate;
import org.eslm.service.ReplicationChannel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Group commit over the real core: answers wait for their batch, answers that arrive while a
 * batch is in flight share the next one, a partition's first batch is its whole state, nothing is
 * sent for a take that changed nothing, and a failed batch gives the partition up.
 */
class GroupCommitTest {
    @BeforeAll
    static void loadLibrary() {
        NativeTestSupport.setUp();
    }

    /** The batches handed to replication, each answered by the test. */
    private static final class RecordingChannel implements ReplicationChannel {
        record Shipped(int partition, long epoch, boolean full, String json, ActionListener<Void> listener) {}

        final List<Shipped> shipped = new ArrayList<>();

        @Override
        public void ship(int partition, long epoch, boolean full, String batchJson, ActionListener<Void> listener) {
            shipped.add(new Shipped(partition, epoch, full, batchJson, listener));
        }
    }

    /** The ownership bookkeeping, as far as group commit reads it: whether copies renew leases. */
    private static final class Gate implements PartitionGate {
        boolean copyLeases = true;

        @Override
        public boolean serves(int partition) {
            return true;
        }

        @Override
        public Set<Integer> served() {
            return Set.of(0);
        }

        @Override
        public boolean copyLeases() {
            return copyLeases;
        }
    }

    /** Partition 0's lease as the core's diagnostics show it: whether current, and what is left (ms). */
    private static long[] lease(CoreClient core) {
        Map<?, ?> result = (Map<?, ?>) BridgeField.RESULT.in(core.call(NativeOp.DIAGNOSTICS, -1, "{}"));
        Map<?, ?> partition = (Map<?, ?>) ((List<?>) BridgeField.PARTITIONS.in(result)).get(0);
        boolean confirmed = Boolean.TRUE.equals(BridgeField.CONFIRMED.in(partition));
        return new long[] {confirmed ? 1 : 0, ((Number) BridgeField.LEASE_LEFT_MS.in(partition)).longValue()};
    }

    /** An answer waiting for the commit: null while waiting, then "ok" or the failure. */
    private static ActionListener<Void> waiting(AtomicReference<Object> outcome) {
        return ActionListener.wrap(v -> outcome.set("ok"), outcome::set);
    }

    private static void acquire(CoreClient core, String key) {
        core.call(NativeOp.ACQUIRE, 0, "{\"key\":\"" + key + "\",\"owner\":\"a\"}");
    }

    @Test
    void answersWaitForTheirBatchAndShareTheNextOne() {
        try (CoreClient core = new CoreClient(NativeLockCore.create("{\"partitions\":[]}"))) {
            core.call(NativeOp.OPEN_PARTITION, 0, "{\"epoch\":3,\"replicated\":true}");
            RecordingChannel channel = new RecordingChannel();
            List<Map<String, Object>> delivered = new ArrayList<>();
            List<Long> roundTrips = new ArrayList<>();
            long before = System.nanoTime();
            GroupCommit commits = new GroupCommit(
                    core,
                    (take, takenAt) -> {
                        assertTrue(takenAt - before >= 0, "the take's start is a nanoTime of the test");
                        delivered.add(take);
                    },
                    p -> new IllegalStateException("gone " + p),
                    () -> NativeFormat.STATE_FORMAT,
                    new Gate(),
                    roundTrips::add);
            commits.connect(channel, p -> {});

            commits.opened(0, 3);
            assertEquals(1, channel.shipped.size(), "the whole state goes out at once");
            assertTrue(channel.shipped.get(0).full()
                    && channel.shipped.get(0).json().startsWith("{\"full\":"));
            assertEquals(3, channel.shipped.get(0).epoch());

            AtomicReference<Object> first = new AtomicReference<>();
            AtomicReference<Object> second = new AtomicReference<>();
            acquire(core, "k1");
            commits.afterCommit(0, waiting(first));
            acquire(core, "k2");
            commits.afterCommit(0, waiting(second));
            assertEquals(1, channel.shipped.size(), "one batch in flight at a time");
            assertNull(first.get());

            channel.shipped.get(0).listener().onResponse(null);
            assertEquals(2, channel.shipped.size());
            String delta = channel.shipped.get(1).json();
            assertTrue(delta.startsWith("{\"delta\":") && delta.contains("k1") && delta.contains("k2"), delta);
            assertNull(first.get(), "told only once the batch holding it is on every copy");
            channel.shipped.get(1).listener().onResponse(null);
            assertEquals(List.of("ok", "ok"), List.of(first.get(), second.get()));
            assertEquals(2, delivered.size(), "each committed take's events are delivered");

            AtomicReference<Object> nothing = new AtomicReference<>();
            commits.afterCommit(0, waiting(nothing));
            assertEquals("ok", nothing.get(), "a take that changed nothing is not sent");
            assertEquals(2, channel.shipped.size());
            assertEquals(2L, commits.batchTimes(0).get("batches"), "only batches sent are timed");
            assertEquals(2, roundTrips.size(), "each batch sent reports its round trip to the metrics");
            assertTrue(commits.batchTimes(0).containsKey("round_trip_ms"));
            assertNull(commits.batchTimes(1), "a partition not replicated here has no batches");
        }
    }

    /**
     * docs/ARCHITECTURE.md "Silent owners": a batch every copy took renews the owner's lease from its
     * send; an owner with nothing to replicate sends empty heartbeats, but not while a batch is in
     * flight, not sooner than the interval after the last send, and not before every node answers
     * them; a heartbeat that fails gives the partition up like a batch.
     */
    @Test
    void committedBatchesAndIdleHeartbeatsRenewTheLeaseFromTheirSend() throws InterruptedException {
        String node = "{\"partitions\":[],\"leases\":true}";
        try (CoreClient core = new CoreClient(NativeLockCore.create(node))) {
            core.call(NativeOp.OPEN_PARTITION, 0, "{\"epoch\":2,\"replicated\":true}");
            RecordingChannel channel = new RecordingChannel();
            Gate gate = new Gate();
            List<Integer> givenUp = new ArrayList<>();
            GroupCommit commits = new GroupCommit(
                    core,
                    (e, t) -> {},
                    p -> new IllegalStateException("gone " + p),
                    () -> NativeFormat.STATE_FORMAT,
                    gate,
                    t -> {});
            commits.connect(channel, givenUp::add);
            commits.opened(0, 2);
            commits.heartbeat(0);
            assertEquals(1, channel.shipped.size(), "no heartbeat while the whole state is in flight");
            assertEquals(0, lease(core)[0], "no lease before the first batch is on every copy");
            channel.shipped.get(0).listener().onResponse(null);
            assertEquals(1, lease(core)[0], "the core renewed the lease from the batch's send");

            commits.heartbeat(0);
            assertEquals(1, channel.shipped.size(), "the last send is more recent than the interval");
            Thread.sleep(NativeBounds.HEARTBEAT_INTERVAL_MS + 20);
            gate.copyLeases = false;
            commits.heartbeat(0);
            assertEquals(1, channel.shipped.size(), "no heartbeat while a node could not answer it");
            gate.copyLeases = true;
            commits.heartbeat(0);
            assertEquals(2, channel.shipped.size());
            assertEquals(ReplicationChannel.HEARTBEAT, channel.shipped.get(1).json());
            assertFalse(channel.shipped.get(1).full());
            long beforeHeartbeat = lease(core)[1];
            assertTrue(beforeHeartbeat < NativeBounds.COPY_LEASE_MS - NativeBounds.HEARTBEAT_INTERVAL_MS);
            channel.shipped.get(1).listener().onResponse(null);
            long afterHeartbeat = lease(core)[1];
            assertTrue(afterHeartbeat > beforeHeartbeat, afterHeartbeat + " after, " + beforeHeartbeat + " before");

            Thread.sleep(NativeBounds.HEARTBEAT_INTERVAL_MS + 20);
            commits.heartbeat(0);
            long beforeRefusal = lease(core)[1];
            channel.shipped.get(2).listener().onFailure(new IllegalStateException("refused: a higher term"));
            assertEquals(List.of(0), givenUp, "a heartbeat refused gives the partition up");
            assertTrue(lease(core)[1] <= beforeRefusal, "a refused heartbeat renews nothing");
        }
    }

    @Test
    void aFailedBatchFailsItsAnswersAndGivesThePartitionUp() {
        try (CoreClient core = new CoreClient(NativeLockCore.create("{\"partitions\":[]}"))) {
            core.call(NativeOp.OPEN_PARTITION, 0, "{\"epoch\":1,\"replicated\":true}");
            RecordingChannel channel = new RecordingChannel();
            List<Integer> givenUp = new ArrayList<>();
            GroupCommit commits = new GroupCommit(
                    core,
                    (e, t) -> {},
                    p -> new IllegalStateException("gone " + p),
                    () -> NativeFormat.STATE_FORMAT,
                    new Gate(),
                    t -> {});
            commits.connect(channel, givenUp::add);
            commits.opened(0, 1);
            channel.shipped.get(0).listener().onResponse(null);

            AtomicReference<Object> answer = new AtomicReference<>();
            acquire(core, "k");
            commits.afterCommit(0, waiting(answer));
            channel.shipped.get(1).listener().onFailure(new IllegalStateException("term moved on"));
            assertInstanceOf(IllegalStateException.class, answer.get());
            assertEquals("gone 0", ((Exception) answer.get()).getMessage(), "failed as retryable, not as the cause");
            assertEquals(List.of(0), givenUp);
            assertFalse(commits.replicates(0));
            assertNull(commits.batchTimes(0));

            AtomicReference<Object> late = new AtomicReference<>();
            commits.afterCommit(0, waiting(late));
            assertInstanceOf(IllegalStateException.class, late.get(), "nothing is answered for a partition given up");
        }
    }

    /** Batches are written in the format every node reads: format 1 while a node of the plugin before formats is in. */
    @Test
    void batchesAreWrittenInTheFormatThePeersRead() {
        try (CoreClient core = new CoreClient(NativeLockCore.create("{\"partitions\":[]}"))) {
            core.call(NativeOp.OPEN_PARTITION, 0, "{\"epoch\":1,\"replicated\":true}");
            RecordingChannel channel = new RecordingChannel();
            AtomicInteger peers = new AtomicInteger(NativeFormat.OLDEST_STATE_FORMAT);
            GroupCommit commits = new GroupCommit(
                    core, (e, t) -> {}, p -> new IllegalStateException("gone " + p), peers::get, new Gate(), t -> {});
            commits.connect(channel, p -> {});
            commits.opened(0, 1);
            acquire(core, "k1");
            commits.afterCommit(0, ActionListener.noop());
            channel.shipped.get(0).listener().onResponse(null);
            peers.set(NativeFormat.STATE_FORMAT); // the last old node left
            acquire(core, "k2");
            commits.afterCommit(0, ActionListener.noop());
            channel.shipped.get(1).listener().onResponse(null);
            List<String> json =
                    channel.shipped.stream().map(RecordingChannel.Shipped::json).toList();
            assertEquals(3, json.size(), "" + json);
            assertFalse(json.get(0).contains("\"format\""), json.get(0));
            assertFalse(json.get(1).contains("\"format\""), json.get(1));
            assertTrue(
                    json.get(2).startsWith("{\"delta\":{\"format\":" + NativeFormat.STATE_FORMAT + ","), json.get(2));
        }
    }
}
