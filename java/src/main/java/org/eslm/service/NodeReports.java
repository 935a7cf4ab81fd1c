package org.eslm.service;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.core.CoreCall;
import org.eslm.settings.LockSettings;

/**
 * What this node reports about its locks: {@code _locks/_stats}, {@code _locks/_node/diagnostics}
 * (docs/API.md), and the lock history it drains from the core and counts (docs/API.md "Lock
 * history"). Reads: partitions whose lease is current are brought up to now first.
 */
public final class NodeReports {
    private final CoreCall answer;
    /** Brings every partition served here whose lease is current up to now (Deliveries.tickServed). */
    private final Runnable tickServed;
    /** {@code node} ({@code id}, {@code name}) and {@code plugin} (build info) for diagnostics. */
    private final Supplier<Map<String, Object>> nodeInfo;

    private final Supplier<LockSettings.Values> settings;
    private final IntSupplier pendingRequests;
    private final Commits commits;
    private final Standbys standbys;
    /** Lock history documents written by this node, and lost because a write failed (org.eslm.cluster.LockHistory). */
    private final LongAdder historyIndexed = new LongAdder();

    private final LongAdder historyFailed = new LongAdder();

    NodeReports(
            CoreCall answer,
            Runnable tickServed,
            Supplier<Map<String, Object>> nodeInfo,
            Supplier<LockSettings.Values> settings,
            IntSupplier pendingRequests,
            Commits commits,
            Standbys standbys) {
        this.answer = answer;
        this.tickServed = tickServed;
        this.nodeInfo = nodeInfo;
        this.settings = settings;
        this.pendingRequests = pendingRequests;
        this.commits = commits;
        this.standbys = standbys;
    }

    /**
     * This node's lock statistics (counters, gauges, wait/hold percentiles, hot keys), with the
     * lock history's: the core's {@code audit_recorded}, {@code audit_dropped} and
     * {@code audit_buffered}, and this node's {@code audit_indexed} and {@code audit_failed}.
     */
    public Map<String, Object> stats() {
        tickServed.run();
        Map<String, Object> stats = new LinkedHashMap<>(BridgeJson.object(
                BridgeField.RESULT.in(answer.answer(NativeOp.STATS, NativeLockCore.ALL_PARTITIONS, "{}"))));
        stats.put("audit_indexed", historyIndexed.sum());
        stats.put("audit_failed", historyFailed.sum());
        return stats;
    }

    /**
     * Takes up to {@code max} lock history records from this node's partitions, oldest first per
     * partition (docs/API.md "Lock history"). Never blocks: the core copies them out of its buffer.
     */
    public LockHistoryBatch drainHistory(int max) {
        Map<String, Object> result = BridgeJson.object(BridgeField.RESULT.in(answer.answer(
                NativeOp.AUDIT_DRAIN, NativeLockCore.ALL_PARTITIONS, BridgeJson.toJson(BridgeField.MAX.of(max)))));
        return new LockHistoryBatch(
                (String) BridgeField.BULK.in(result), ((Number) BridgeField.DOCUMENTS.in(result)).intValue());
    }

    /** Counts lock history documents written ({@code indexed}) and lost to a failed write ({@code failed}). */
    public void countHistory(long indexed, long failed) {
        historyIndexed.add(indexed);
        historyFailed.add(failed);
    }

    /**
     * This node's diagnostics as {@code GET /_locks/_node/diagnostics} shows them (docs/API.md):
     * node and build, effective settings, and the partitions it serves, each with the core's
     * {@code confirmed} (whether this node's lease is current) and {@code lease_left_ms}.
     */
    public Map<String, Object> diagnostics() {
        tickServed.run();
        Map<String, Object> envelope = answer.answer(NativeOp.DIAGNOSTICS, NativeLockCore.ALL_PARTITIONS, "{}");
        Map<String, Object> body = new LinkedHashMap<>(nodeInfo.get());
        Map<String, Object> effective = new LinkedHashMap<>(settings.get().asMap());
        if (body.remove("static_settings") instanceof Map<?, ?> fixed) {
            fixed.forEach((k, v) -> effective.put(String.valueOf(k), v));
        }
        body.put("settings", effective);
        body.put("pending_requests", pendingRequests.getAsInt());
        body.put("core", withReplication(BridgeField.RESULT.in(envelope)));
        body.put("standbys", standbys.partitions());
        body.put("standby_recovery_waits_ms", standbys.recoveryWaits());
        return body;
    }

    /**
     * The core's diagnostics (each partition says itself whether this node's right to serve it is
     * current, {@code confirmed}) with {@code replicated} on each partition, and for a replicated
     * one its batches' round trips ({@code replication}, {@code replication.BatchTimes}).
     */
    private Map<String, Object> withReplication(Object coreDiagnostics) {
        Map<String, Object> core = new LinkedHashMap<>();
        ((Map<?, ?>) coreDiagnostics).forEach((k, v) -> core.put(String.valueOf(k), v));
        if (BridgeField.PARTITIONS.in(core) instanceof List<?> list) {
            List<Map<String, Object>> annotated = new ArrayList<>(list.size());
            for (Object entry : list) {
                Map<String, Object> partition = new LinkedHashMap<>();
                ((Map<?, ?>) entry).forEach((k, v) -> partition.put(String.valueOf(k), v));
                int id = ((Number) BridgeField.ID.in(partition)).intValue();
                partition.put("replicated", commits.replicates(id));
                Map<String, Object> batches = commits.batchTimes(id);
                if (batches != null) {
                    partition.put("replication", batches);
                }
                annotated.add(partition);
            }
            core.put(BridgeField.PARTITIONS.key(), annotated);
        }
        return core;
    }
}
