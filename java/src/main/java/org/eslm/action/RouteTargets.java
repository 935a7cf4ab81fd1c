package org.eslm.action;

import java.util.LinkedHashMap;
import java.util.Map;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeFormat;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.PartitionTable;
import org.eslm.cluster.PeerFormats;
import org.eslm.service.SessionIds;

/**
 * Where a lock request goes (docs/ARCHITECTURE.md "Partitions, owners, epochs", "Routing"): its
 * partition — a session's is in its id, everything else routes by its routing value, and keys
 * locked together must share one — and that partition's owner in the cluster state; what an
 * older owner can read of it (a rolling upgrade); and the session id the answer leaves the
 * cluster with.
 */
final class RouteTargets {
    private RouteTargets() {}

    /** A request's partition, the node of its owner and the epoch it owns the partition in. */
    record Target(int partition, DiscoveryNode node, long epoch) {}

    /** The partition of the request's routing value and its owner, or {@code null} while it has none. */
    static Target target(PartitionTable table, LockOpRequest request, ClusterState state) {
        int partition = partitionOf(table, request);
        String owner = table.owner(partition);
        DiscoveryNode node = owner == null ? null : state.nodes().get(owner);
        return node == null ? null : new Target(partition, node, table.epoch(partition));
    }

    /**
     * Sessions live in one partition, named in their id ({@code <partition>_<id>}); everything
     * else routes by the request's routing value. A multi-lock must stay in one partition.
     */
    static int partitionOf(PartitionTable table, LockOpRequest request) {
        String session = request.session();
        if (session != null && request.op() != NativeOp.SESSION_CREATE) {
            int partition = SessionIds.partition(session);
            if (partition >= table.size()) {
                // As any other id that names no session: 404, the same as an unknown one.
                throw OwnerRun.sessionNotFound(session);
            }
            if (request.op() == NativeOp.ACQUIRE || request.op() == NativeOp.ACQUIRE_MANY) {
                int keys = table.partitionOf(request.routingValue());
                if (keys != partition) {
                    throw new IllegalArgumentException(
                            "[session] lives in lock partition [" + partition + "] but the lock routes to [" + keys
                                    + "]: create the session with [routing] set to its locks' hash tag");
                }
            }
            return partition;
        }
        int partition = table.partitionOf(request.routingValue());
        for (String lockRouting : request.lockRoutingValues()) {
            int other = table.partitionOf(lockRouting);
            if (other != partition) {
                throw new IllegalArgumentException("[locks] span lock partitions [" + partition + "] and [" + other
                        + "]; keys locked together need a common hash tag, e.g. [{order-42}items] and"
                        + " [{order-42}payment] (docs/API.md \"Partitions and hash tags\")");
            }
        }
        return partition;
    }

    /**
     * A group request for an owner whose plugin reads no groups (an older node during a rolling
     * upgrade, docs/ARCHITECTURE.md "Formats and versions") is refused here with 400 naming
     * {@code group}, as this node's core refuses to create one: the older node would answer an
     * action it does not know with a failure that says nothing to the caller.
     */
    static void refuseWhatTheOwnerCannotRead(DiscoveryNode node, LockOpRequest routed) {
        if (routed.namesGroups() && PeerFormats.of(node.getAttributes()) < NativeFormat.GROUPS_STATE_FORMAT) {
            throw new IllegalArgumentException("[group] groups need every node of the cluster to read state format ["
                    + NativeFormat.GROUPS_STATE_FORMAT + "]: the owner of the group's partition, node ["
                    + node.getName() + "], runs an older plugin (finish the rolling upgrade first)");
        }
    }

    /** {@code routed} as the owner's node reads it: a node of an older plugin is sent no acquisition. */
    static LockOpRequest readableBy(DiscoveryNode node, LockOpRequest routed) {
        return PeerFormats.of(node.getAttributes()) < NativeFormat.ACQUISITION_STATE_FORMAT
                ? routed.withoutAcquisitions()
                : routed;
    }

    /** Session ids leave the cluster with their partition in them (see {@link SessionIds}). */
    static LockOpResponse withGlobalSession(LockOpResponse response, int partition) {
        if (BridgeField.SESSION.in(response.body()) instanceof String session) {
            Map<String, Object> body = new LinkedHashMap<>(response.body());
            body.put(BridgeField.SESSION.key(), SessionIds.global(partition, session));
            return new LockOpResponse(body);
        }
        return response;
    }
}
