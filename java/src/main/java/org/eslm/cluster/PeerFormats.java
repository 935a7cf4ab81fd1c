package org.eslm.cluster;

import java.util.Map;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.settings.Settings;
import org.eslm.bridge.NativeFormat;

/**
 * Which state format the nodes of the cluster read (docs/ARCHITECTURE.md "Formats and versions").
 * Each node announces its own in the node attribute {@value #ATTRIBUTE} (set by the plugin, as
 * Elasticsearch's machine learning announces its config version); a node without it runs the
 * plugin from before formats were numbered, which reads format 1. A node writes what leaves it in
 * the oldest format announced in its cluster state, so that during a rolling upgrade the nodes
 * not yet upgraded read every batch, catch-up state and hand-over, and the upgraded ones switch
 * to the current format once the last old node is gone.
 */
public final class PeerFormats {
    /** The node attribute (setting {@code node.attr.locks.format}) that announces a node's format. */
    public static final String ATTRIBUTE = "locks.format";
    /** The format of a node that announces none: the plugin before formats were numbered. */
    static final int UNANNOUNCED = 1;

    private PeerFormats() {}

    /**
     * The node attribute that announces a node's plugin sends and answers heartbeats, so that its
     * copies renew its owners' leases (docs/ARCHITECTURE.md "Silent owners").
     */
    public static final String COPY_LEASES_ATTRIBUTE = "locks.copy_leases";

    /**
     * The node attribute that announces a node's plugin reads the hand-over request that carries
     * the asker's epoch ({@link PartitionHandoffAction#IN_EPOCH}).
     */
    public static final String HANDOFF_EPOCHS_ATTRIBUTE = "locks.handoff_epochs";

    /** This node's announcements, for {@code Plugin.additionalSettings}. */
    public static Settings nodeSettings() {
        return Settings.builder()
                .put("node.attr." + ATTRIBUTE, NativeFormat.STATE_FORMAT)
                .put("node.attr." + COPY_LEASES_ATTRIBUTE, true)
                .put("node.attr." + HANDOFF_EPOCHS_ATTRIBUTE, true)
                .build();
    }

    /** Whether {@code node} reads the hand-over request with the asker's epoch. */
    static boolean handOffEpochs(DiscoveryNode node) {
        return Boolean.parseBoolean(node.getAttributes().get(HANDOFF_EPOCHS_ATTRIBUTE));
    }

    /**
     * Whether every one of {@code nodes} answers heartbeats: only then do owners send them, and
     * take their leases from their copies (a copy of an older plugin would refuse a heartbeat, and
     * its owner would fail it). In a cluster being upgraded, the master alone confirms owners.
     */
    public static boolean copyLeases(Iterable<DiscoveryNode> nodes) {
        for (DiscoveryNode node : nodes) {
            if (Boolean.parseBoolean(node.getAttributes().get(COPY_LEASES_ATTRIBUTE)) == false) {
                return false;
            }
        }
        return true;
    }

    /** The format a node with these attributes reads; {@link #UNANNOUNCED} without the attribute or with a bad one. */
    public static int of(Map<String, String> attributes) {
        String announced = attributes.get(ATTRIBUTE);
        if (announced == null) {
            return UNANNOUNCED;
        }
        try {
            return Math.max(UNANNOUNCED, Integer.parseInt(announced.trim()));
        } catch (NumberFormatException e) {
            return UNANNOUNCED;
        }
    }

    /**
     * The format every one of {@code nodes} reads: the oldest announced, and never newer than this
     * build's (a newer node reads this one's).
     */
    public static int oldest(Iterable<DiscoveryNode> nodes) {
        int oldest = NativeFormat.STATE_FORMAT;
        for (DiscoveryNode node : nodes) {
            oldest = Math.min(oldest, of(node.getAttributes()));
        }
        return Math.max(oldest, NativeFormat.OLDEST_STATE_FORMAT);
    }
}
