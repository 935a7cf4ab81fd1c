package org.eslm.cluster;

import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.admin.cluster.settings.ClusterUpdateSettingsRequest;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.ClusterChangedEvent;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.ClusterStateListener;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.util.concurrent.ThreadContext;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.gateway.GatewayService;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.service.LockService;
import org.eslm.settings.LockSettings;

/**
 * Keeps {@code locks.recovery.longest_lease} at least the highest {@code locks.lease.max} this
 * node has had in force (docs/RELIABILITY.md "Recovery grace"): a lease granted under a maximum
 * that was lowered since may still run, and the recovery grace of every node — also one started
 * after the lowering — must cover it. Each node records its own highest maximum (a node setting may
 * differ from the cluster's), as a persistent cluster setting, once it sees the recorded one is
 * lower. Two nodes recording different maximums at once may leave the lower one; the other node
 * sees that in the next cluster state and records its own again, so the highest one stays.
 */
public final class LongestLeaseRecorder implements ClusterStateListener {
    private static final Logger logger = LogManager.getLogger(LongestLeaseRecorder.class);

    private final LockService locks;
    private final Client client;
    private final ThreadPool threadPool;
    private final AtomicBoolean recording = new AtomicBoolean();
    /** The master and acknowledgement timeouts of the settings update. */
    private static final TimeValue TIMEOUT = TimeValue.timeValueSeconds(30);

    public LongestLeaseRecorder(LockService locks, Client client, ThreadPool threadPool) {
        this.locks = locks;
        this.client = client;
        this.threadPool = threadPool;
    }

    /** The longest lease recorded in {@code state}'s cluster settings. */
    public static TimeValue recorded(ClusterState state) {
        return LockSettings.LONGEST_LEASE.get(state.metadata().settings());
    }

    @Override
    public void clusterChanged(ClusterChangedEvent event) {
        ClusterState state = event.state();
        if (state.nodes().getMasterNodeId() == null
                || state.blocks().hasGlobalBlock(GatewayService.STATE_NOT_RECOVERED_BLOCK)) {
            return; // no master, or the persisted settings not read yet: nothing to compare with
        }
        TimeValue highest = locks.highestLeaseMax();
        if (highest.compareTo(recorded(state)) > 0 && recording.compareAndSet(false, true)) {
            record(highest);
        }
    }

    @SuppressWarnings("try") // the stored context restores the caller's thread context on close
    private void record(TimeValue highest) {
        ClusterUpdateSettingsRequest request = new ClusterUpdateSettingsRequest(TIMEOUT, TIMEOUT)
                .persistentSettings(Settings.builder()
                        .put(LockSettings.LONGEST_LEASE.getKey(), highest.getStringRep())
                        .build());
        ThreadContext threadContext = threadPool.getThreadContext();
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            threadContext.markAsSystemContext();
            client.admin()
                    .cluster()
                    .updateSettings(
                            request,
                            ActionListener.wrap(
                                    r -> {
                                        recording.set(false);
                                        logger.info(
                                                "recorded [{}] as [{}]", highest, LockSettings.LONGEST_LEASE.getKey());
                                    },
                                    e -> {
                                        recording.set(false); // the next cluster state tries again
                                        logger.warn(
                                                () -> "could not record [" + LockSettings.LONGEST_LEASE.getKey() + "]",
                                                e);
                                    }));
        }
    }
}
