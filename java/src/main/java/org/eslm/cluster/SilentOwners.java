package org.eslm.cluster;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.action.shard.ShardStateAction;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.cluster.routing.IndexRoutingTable;
import org.elasticsearch.cluster.routing.IndexShardRoutingTable;
import org.elasticsearch.cluster.routing.ShardRouting;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.threadpool.ThreadPool;
import org.eslm.compat.ProjectScope;
import org.eslm.settings.LockSettings;

/**
 * The elected master's watch for owners that went silent (docs/ARCHITECTURE.md "Silent owners").
 *
 * <p>Every owner asks the master every 500 ms whether it still owns its partitions
 * ({@link OwnershipCheckAction}), and grants only within {@link PartitionOwnership#OWNERSHIP_WINDOW}
 * of the <em>send</em> of a question answered "yours". So when the master has heard no question
 * from a partition's owner for longer than that window on the owner's clock (the setting
 * {@code locks.failover.silent_owner}, floored at {@code LockSettings.SILENT_OWNER_FAILOVER_MIN}),
 * the owner grants nothing any more, whether it is frozen, stalled or cut off, and the master
 * fails its primary copy through Elasticsearch's shard-failed path with the primary term, so that
 * the in-sync replica is promoted in a higher term: seconds, where Elasticsearch's own fault
 * detection takes 30 s for a follower.
 *
 * <p>What keeps two owners from serving:
 * <ul>
 *   <li>the silence is measured from the master's receipt of the last question it answered "yours",
 *   which comes after that question's send, from which the owner counts its window;</li>
 *   <li>answering a question and deciding to fail the primary are one step each under this
 *   object's lock, and a condemned (partition, epoch) is never answered "yours" again;</li>
 *   <li>where copy leases are not in force, an owner is watched only from the first question this
 *   master heard from it in its epoch (an owner also confirms itself when it opens a partition from
 *   a published cluster state, and asks right after); with copy leases, from the first look of
 *   this master that shows it: a promoted copy waits out the old owner's copy lease whatever the
 *   master does, and an owner frozen right after it opened is failed over too;</li>
 *   <li>the master's own pauses do not count: a gap of more than {@link #OWN_PAUSE} between two of
 *   its looks restarts every silence (the owners may have been asking all along);</li>
 *   <li>the master never fails its own copy, nor a primary with no started in-sync replica to
 *   promote.</li>
 * </ul>
 */
public final class SilentOwners {
    private static final Logger logger = LogManager.getLogger(SilentOwners.class);
    /** How often the master looks for silent owners. */
    static final TimeValue TICK = TimeValue.timeValueMillis(250);
    /**
     * A gap between two of the master's looks longer than this means the master itself was paused
     * or starved: the silences it measured include its own, so they start again.
     */
    static final TimeValue OWN_PAUSE = TimeValue.timeValueSeconds(1);

    /** How often the failure of a condemned primary is asked again while the cluster state still shows it. */
    static final TimeValue ASK_AGAIN = TimeValue.timeValueSeconds(5);
    /** {@link Watch#condemnedAt} of an owner not condemned. */
    private static final long NOT_CONDEMNED = Long.MIN_VALUE;

    /**
     * One partition's owner as this master last heard it, and when (if ever) the master decided to
     * fail its primary copy ({@link System#nanoTime()} based).
     */
    private record Watch(String owner, long epoch, long heardAt, long condemnedAt) {
        boolean of(String owner, long epoch) {
            return this.owner.equals(owner) && this.epoch == epoch;
        }

        boolean condemned() {
            return condemnedAt != NOT_CONDEMNED;
        }
    }

    /** A partition as the master's cluster state shows it. */
    record Seen(int partition, String owner, long epoch, boolean promotable) {}

    private final Supplier<TimeValue> bound;
    private final LongSupplier clock;
    /**
     * Whether this node fails silent owners: with {@code locks.durability: replicated} only, where a
     * promoted copy holds every holder. With {@code memory} a failover loses them, so there only
     * Elasticsearch's removal of the node ends an owner.
     */
    private final boolean enabled;
    /** Per partition, guarded by this. */
    private final Map<Integer, Watch> watches = new HashMap<>();
    /** When this node last looked ({@link #look}), or {@code null} before its first look. */
    private Long lastLook;

    private final AtomicBoolean started = new AtomicBoolean();

    SilentOwners(Supplier<TimeValue> bound, LongSupplier clock, boolean enabled) {
        this.bound = bound;
        this.clock = clock;
        this.enabled = enabled;
    }

    /**
     * The watch of a node whose silent-owner bound follows {@code bound}, on the monotonic clock;
     * it fails silent owners only when {@code replicated}.
     */
    public static SilentOwners withBound(Supplier<TimeValue> bound, boolean replicated) {
        return new SilentOwners(bound, System::nanoTime, replicated);
    }

    /**
     * On the master, answering {@code owner}'s question about {@code partition}, which its cluster
     * state shows {@code owner} holding in {@code epoch}: whether to answer "yours". Records that
     * the owner was heard, unless the master already decided to fail that copy.
     */
    synchronized boolean heard(int partition, long epoch, String owner) {
        Watch watch = watches.get(partition);
        if (watch != null && watch.of(owner, epoch) && watch.condemned()) {
            return false;
        }
        watches.put(partition, new Watch(owner, epoch, clock.getAsLong(), NOT_CONDEMNED));
        return true;
    }

    /**
     * One look at the partitions as the master's cluster state shows them ({@code master} false:
     * this node is not the elected master, and forgets everything): the partitions whose owner
     * has been silent past the bound, now condemned, whose primary copy is to be failed. With
     * {@code copyLeases} (every node answers heartbeats) an owner is watched from the first look
     * that shows it, since no confirmation by the master is what it serves on; else from the
     * first question heard from it in its epoch.
     */
    synchronized List<Seen> look(boolean master, String localNode, boolean copyLeases, List<Seen> partitions) {
        long now = clock.getAsLong();
        boolean ownPause = lastLook != null && now - lastLook > OWN_PAUSE.nanos();
        lastLook = now;
        if (master == false || enabled == false) {
            watches.clear();
            return List.of();
        }
        long silence = bound.get().nanos();
        List<Seen> condemned = new ArrayList<>();
        Map<Integer, Watch> kept = new HashMap<>();
        for (Seen seen : partitions) {
            Watch watch = watches.get(seen.partition());
            if (seen.owner() == null) {
                continue;
            }
            if (watch == null || watch.of(seen.owner(), seen.epoch()) == false) {
                if (copyLeases) {
                    // Safety rests on the copies' leases: watch from the first look that shows it.
                    kept.put(seen.partition(), new Watch(seen.owner(), seen.epoch(), now, NOT_CONDEMNED));
                }
                continue; // else only once heard from in this epoch (its own confirmation may run)
            }
            if (watch.condemned()) {
                boolean again = now - watch.condemnedAt() > ASK_AGAIN.nanos(); // not failed yet
                kept.put(
                        seen.partition(),
                        again ? new Watch(watch.owner(), watch.epoch(), watch.heardAt(), now) : watch);
                if (again) {
                    condemned.add(seen);
                }
            } else if (ownPause) {
                kept.put(seen.partition(), new Watch(watch.owner(), watch.epoch(), now, NOT_CONDEMNED));
            } else if (seen.owner().equals(localNode) == false
                    && seen.promotable()
                    && now - watch.heardAt() > silence) {
                kept.put(seen.partition(), new Watch(watch.owner(), watch.epoch(), watch.heardAt(), now));
                condemned.add(seen);
            } else {
                kept.put(seen.partition(), watch);
            }
        }
        watches.clear();
        watches.putAll(kept);
        return condemned;
    }

    /**
     * Starts looking every {@link #TICK} on this node (once); a look does something only while
     * this node is the elected master. Primaries are failed through {@code shardStateAction}.
     */
    public void start(ClusterService clusterService, ThreadPool threadPool, ShardStateAction shardStateAction) {
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
                            partitions(state));
                    for (Seen seen : silent) {
                        fail(state, seen, shardStateAction);
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

    private void fail(ClusterState state, Seen seen, ShardStateAction shardStateAction) {
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
        shardStateAction.remoteShardFailed(
                primary.shardId(),
                primary.allocationId().getId(),
                seen.epoch(),
                true,
                why,
                new ElasticsearchException(why),
                ActionListener.wrap(
                        r -> logger.info(
                                "lock partition [{}]: the silent owner's primary was failed", seen.partition()),
                        e -> logger.warn(
                                "lock partition [{}]: failing the silent owner's primary failed: {}",
                                seen.partition(),
                                e.getMessage())));
    }
}
