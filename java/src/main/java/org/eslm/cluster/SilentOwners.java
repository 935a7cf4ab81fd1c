package org.eslm.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexRoutingTable;
import org.elasticsearch.cluster.routing.IndexShardRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.bridge.NativeBounds;
import org.eslm.compat.ProjectScope;
import org.eslm.service.OwnershipProtocol;
import org.eslm.settings.LockSettings;

/**
 * The elected master's watch for owners that went silent (docs/ARCHITECTURE.md "Silent owners"),
 * as the plugin runs it: every {@link #TICK} it shows the core's ownership protocol the lock
 * partitions of its cluster state (rust/lock-core {@code src/ownership/silence.rs} decides which
 * owner has been silent past {@code locks.failover.silent_owner} and says why that keeps two
 * owners from serving), and fails the primary copy of each partition the protocol condemns in its
 * primary term, on this master's own queue ({@link SilentPrimaryFailure}, which says why not
 * through Elasticsearch's shard-failed request), so that the in-sync replica is promoted in a
 * higher term: seconds, where Elasticsearch's own fault detection takes 30 s for a follower. The
 * owners' questions ({@link OwnershipCheckAction}) are what the protocol hears.
 */
public final class SilentOwners {
    private static final Logger logger = LogManager.getLogger(SilentOwners.class);
    /** How often the master looks for silent owners. */
    static final TimeValue TICK = TimeValue.timeValueMillis(NativeBounds.SILENT_LOOK_INTERVAL_MS);

    /** A partition as the master's cluster state shows it. */
    record Seen(int partition, String owner, long epoch, boolean promotable) {}

    private final Supplier<TimeValue> bound;
    private final OwnershipProtocol protocol;
    /**
     * Whether this node fails silent owners: with {@code locks.durability: replicated} only, where a
     * promoted copy holds every holder. With {@code memory} a failover loses them, so there only
     * Elasticsearch's removal of the node ends an owner.
     */
    private final boolean enabled;

    private final AtomicBoolean started = new AtomicBoolean();

    /**
     * The watch of a node whose silent-owner bound follows {@code bound}, deciding through
     * {@code protocol}; it fails silent owners only when {@code replicated}.
     */
    public SilentOwners(Supplier<TimeValue> bound, boolean replicated, OwnershipProtocol protocol) {
        this.bound = bound;
        this.enabled = replicated;
        this.protocol = protocol;
    }

    /**
     * On the master, answering {@code owner}'s question about {@code partition}, which its cluster
     * state shows {@code owner} holding in {@code epoch}: whether to answer "yours". The protocol
     * records that the owner was heard, unless it already decided to fail that copy.
     */
    boolean heard(int partition, long epoch, String owner) {
        return protocol.heard(partition, epoch, owner);
    }

    /**
     * On the master, {@code node} asked it, whatever about (every node asks, {@code OwnerChecks}):
     * the protocol tells the master's own cut from an owner's silence by the other nodes.
     */
    void nodeAsked(String node) {
        protocol.nodeAsked(node);
    }

    /**
     * One look at the partitions as the master's cluster state shows them, whose node ids are
     * {@code nodes}: those to fail now.
     */
    List<Seen> look(boolean master, String localNode, boolean copyLeases, List<Seen> partitions, List<String> nodes) {
        List<OwnershipProtocol.Seen> seen = new ArrayList<>(partitions.size());
        for (Seen s : partitions) {
            seen.add(new OwnershipProtocol.Seen(s.partition(), s.owner(), s.epoch(), s.promotable()));
        }
        List<Integer> condemned = protocol.look(
                master, localNode, copyLeases, enabled, bound.get().millis(), seen, nodes);
        return partitions.stream()
                .filter(s -> condemned.contains(s.partition()))
                .toList();
    }

    /**
     * Starts looking every {@link #TICK} on this node (once); a look does something only while
     * this node is the elected master. Primaries are failed through {@code failure}.
     */
    public void start(ClusterService clusterService, ThreadPool threadPool, SilentPrimaryFailure failure) {
        if (started.compareAndSet(false, true) == false) {
            return;
        }
        threadPool.scheduleWithFixedDelay(
                () -> {
                    ClusterState state = clusterService.state();
                    if (state == null) {
                        return; // before the first cluster state
                    }
                    List<Seen> silent = look(
                            state.nodes().isLocalNodeElectedMaster(),
                            state.nodes().getLocalNodeId(),
                            PeerFormats.copyLeases(state.nodes()),
                            partitions(state),
                            List.copyOf(state.nodes().getNodes().keySet()));
                    for (Seen seen : silent) {
                        fail(state, seen, failure);
                    }
                },
                TICK,
                threadPool.generic());
    }

    /** The lock partitions of {@code state}, with whether each has a replica to promote. */
    static List<Seen> partitions(ClusterState state) {
        PartitionTable table = PartitionTable.of(state);
        IndexMetadata index = ProjectScope.index(state, LockIndex.NAME);
        IndexRoutingTable routing = ProjectScope.routing(state, LockIndex.NAME);
        if (table == null || index == null || routing == null) {
            return List.of();
        }
        List<Seen> seen = new ArrayList<>(table.size());
        for (int p = 0; p < table.size(); p++) {
            seen.add(new Seen(p, table.owner(p), table.epoch(p), promotable(index, routing.shard(p))));
        }
        return seen;
    }

    /** Whether the shard has a started replica in its in-sync set, which a failed primary promotes. */
    private static boolean promotable(IndexMetadata index, IndexShardRoutingTable shard) {
        for (ShardRouting replica : shard.replicaShards()) {
            if (replica.started()
                    && index.inSyncAllocationIds(shard.shardId().id())
                            .contains(replica.allocationId().getId())) {
                return true;
            }
        }
        return false;
    }

    private void fail(ClusterState state, Seen seen, SilentPrimaryFailure failure) {
        IndexRoutingTable routing = ProjectScope.routing(state, LockIndex.NAME);
        ShardRouting primary =
                routing == null ? null : routing.shard(seen.partition()).primaryShard();
        if (primary == null || primary.active() == false || seen.owner().equals(primary.currentNodeId()) == false) {
            return;
        }
        String why = "lock partition [" + seen.partition() + "]: the master heard nothing from its owner ["
                + seen.owner() + "] for longer than [" + LockSettings.SILENT_OWNER_FAILOVER.getKey() + "] ("
                + bound.get().getStringRep()
                + "); failing its primary in epoch [" + seen.epoch() + "] so that an in-sync replica takes over";
        logger.warn(why);
        failure.fail(primary.shardId(), primary.allocationId().getId(), seen.epoch(), why);
    }
}
