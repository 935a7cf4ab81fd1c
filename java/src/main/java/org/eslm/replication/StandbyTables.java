package org.eslm.replication;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.core.CoreClient;
import org.eslm.service.OwnershipProtocol;
import org.eslm.service.Standbys;

/**
 * The standby tables this node keeps as a replica of partitions (docs/ARCHITECTURE.md
 * "Replication"): the primary's batches applied to them, in order; a standby becomes the live
 * partition when this copy becomes the primary ({@link PartitionLifecycle#openFromStandby}). The tables
 * live in the core; this tracks which partitions have one.
 */
public final class StandbyTables implements Standbys {
    private final CoreClient client;
    /** When this copy last answered each partition's owner, and what a promotion waits: the core's. */
    private final OwnershipProtocol protocol;
    /** Partitions with a standby table here (this copy received a whole state). */
    private final Set<Integer> based = ConcurrentHashMap.newKeySet();
    /** Per partition: how long this copy's last recovery waited for its owner's whole state. */
    private final Map<Integer, Long> recoveryWaitsMillis = new ConcurrentHashMap<>();

    StandbyTables(CoreClient client) {
        this.client = client;
        this.protocol = new OwnershipProtocol(client);
    }

    @Override
    public boolean apply(int partition, String batchJson) {
        Map<?, ?> result = (Map<?, ?>) BridgeField.RESULT.in(client.call(NativeOp.STANDBY_APPLY, partition, batchJson));
        boolean applied = Boolean.TRUE.equals(BridgeField.APPLIED.in(result));
        if (applied) {
            based.add(partition);
        }
        return applied;
    }

    @Override
    public boolean catchUp(int partition, String stateJson) {
        return apply(partition, BridgeJson.wrap(BridgeField.CATCH_UP, stateJson));
    }

    @Override
    public void acknowledged(int partition) {
        protocol.answered(partition);
    }

    @Override
    public long promotionWaitMs(int partition, boolean oldOwnerClosed) {
        return protocol.promotionWaitMs(partition, oldOwnerClosed);
    }

    @Override
    public boolean has(int partition) {
        return based.contains(partition);
    }

    @Override
    public void drop(int partition) {
        based.remove(partition);
        client.call(NativeOp.STANDBY_EXPORT, partition, BridgeJson.toJson(BridgeField.DROP.of(true)));
    }

    @Override
    public void promoted(int partition) {
        based.remove(partition);
    }

    @Override
    public String wholeState(int partition) {
        Object full = BridgeField.FULL.in(
                (Map<?, ?>) BridgeField.RESULT.in(client.call(NativeOp.STANDBY_EXPORT, partition, "{}")));
        return full == null ? null : BridgeJson.batch(true, full);
    }

    @Override
    public void recoveryWaited(int partition, long millis) {
        recoveryWaitsMillis.put(partition, millis);
    }

    @Override
    public Map<String, Long> recoveryWaits() {
        Map<String, Long> waits = new LinkedHashMap<>();
        new TreeMap<>(recoveryWaitsMillis).forEach((partition, millis) -> waits.put(String.valueOf(partition), millis));
        return waits;
    }

    @Override
    public SortedSet<Integer> partitions() {
        return new TreeSet<>(based);
    }
}
