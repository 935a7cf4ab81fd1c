package org.eslm.service;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.core.CoreClient;

/**
 * The way to the core's ownership protocol (rust/lock-core {@code src/ownership/},
 * docs/ARCHITECTURE.md "Silent owners"): who may serve a partition is decided there, in one
 * deterministic place, and every operation on a table asks it first. The plugin hands it its
 * events — a batch or heartbeat sent and acknowledged, a question to the master sent and answered, a
 * copy's answer, a promotion, the master hearing and looking — and acts on its decisions. Times are
 * the core's: the plugin carries the send tickets it is given ({@link #sending}, a taken batch's
 * {@code sent_us}) and nothing else of a clock.
 */
public final class OwnershipProtocol {
    /** What the elected master's answer to an owner's question means for that owner. */
    public enum MasterAnswer {
        /** "Yours": the owner's lease was renewed from the question's send. */
        CONFIRMED,
        /** "Not yours" about the epoch this node serves in: it gives the partition up. */
        GIVE_UP,
        /** About an epoch this node no longer serves in: nothing to do. */
        STALE
    }

    /** A partition as the master's cluster state shows it, for {@link #look}. */
    public record Seen(int partition, String owner, long epoch, boolean promotable) {}

    private final CoreClient core;

    public OwnershipProtocol(CoreClient core) {
        this.core = core;
    }

    /** From now on, owners' leases are renewed by their copies ({@code true}) or by the master. */
    public void source(boolean copyLeases) {
        event(NativeLockCore.ALL_PARTITIONS, "source", BridgeField.COPY_LEASES.of(copyLeases));
    }

    /** The send ticket of a heartbeat or a question that leaves now. */
    public long sending() {
        return ((Number) BridgeField.SENT_US.in(event(NativeLockCore.ALL_PARTITIONS, "sending", Map.of()))).longValue();
    }

    /**
     * A batch or heartbeat of {@code partition} in {@code epoch}, sent with ticket {@code sentUs},
     * reached every in-sync copy (or those that did not take it are out of the in-sync set by a
     * committed cluster state): the owner's lease runs from that send.
     */
    public void renewed(int partition, long epoch, long sentUs) {
        Map<String, Object> args = new LinkedHashMap<>();
        BridgeField.EPOCH.put(args, epoch);
        BridgeField.SENT_US.put(args, sentUs);
        event(partition, "renewed", args);
    }

    /** The elected master answered the question about {@code partition} in {@code epoch} sent with ticket {@code askedUs}. */
    public MasterAnswer masterAnswered(int partition, long epoch, long askedUs, boolean yours) {
        Map<String, Object> args = new LinkedHashMap<>();
        BridgeField.EPOCH.put(args, epoch);
        BridgeField.ASKED_US.put(args, askedUs);
        BridgeField.YOURS.put(args, yours);
        Object answer = BridgeField.ANSWER.in(event(partition, "master_answered", args));
        return MasterAnswer.valueOf(String.valueOf(answer).toUpperCase(java.util.Locale.ROOT));
    }

    /** This node's copy of {@code partition} answered a batch or heartbeat of its owner. */
    public void answered(int partition) {
        event(partition, "answered", Map.of());
    }

    /**
     * This node's copy of {@code partition} was promoted: how many milliseconds from now it waits
     * before it serves (0 once {@code oldOwnerClosed}: the old owner answered that it closed).
     * Asked again, the wait ends at the same moment.
     */
    public long promotionWaitMs(int partition, boolean oldOwnerClosed) {
        Object wait =
                BridgeField.WAIT_MS.in(event(partition, "promoted", BridgeField.OLD_OWNER_CLOSED.of(oldOwnerClosed)));
        return ((Number) wait).longValue();
    }

    /**
     * A node that owns {@code partition} in {@code epoch} asks this one for its state: empty to
     * give it, else the newer epoch this node has served the partition in (the request is out of
     * date, and nothing is closed or given for it).
     */
    public OptionalLong handOverRefused(int partition, long epoch) {
        Map<?, ?> answer = event(partition, "hand_over_asked", BridgeField.EPOCH.of(epoch));
        return "refuse".equals(BridgeField.ANSWER.in(answer))
                ? OptionalLong.of(((Number) BridgeField.EPOCH.in(answer)).longValue())
                : OptionalLong.empty();
    }

    /**
     * On the master, answering {@code owner}'s question about {@code partition}, which its cluster
     * state shows that node holding in {@code epoch}: whether to answer "yours" (never again once
     * the master condemned that copy).
     */
    public boolean heard(int partition, long epoch, String owner) {
        Map<String, Object> args = new LinkedHashMap<>();
        BridgeField.EPOCH.put(args, epoch);
        BridgeField.OWNER.put(args, owner);
        return Boolean.TRUE.equals(BridgeField.YOURS.in(event(partition, "heard", args)));
    }

    /**
     * On the master, {@code node} asked it, whatever about: a node that serves nothing asks too,
     * so that the watch tells the master's own cut from an owner's silence.
     */
    public void nodeAsked(String node) {
        event(NativeLockCore.ALL_PARTITIONS, "node_asked", BridgeField.OWNER.of(node));
    }

    /**
     * One look of the master's watch at {@code partitions} (its cluster state, whose node ids are
     * {@code nodes}): the partitions whose primary to fail now, their owner silent for longer than
     * {@code boundMs}. Nothing unless {@code master}; silent owners are failed only where {@code
     * enabled}.
     */
    public List<Integer> look(
            boolean master,
            String local,
            boolean copyLeases,
            boolean enabled,
            long boundMs,
            List<Seen> partitions,
            List<String> nodes) {
        List<Map<String, Object>> seen = new ArrayList<>(partitions.size());
        for (Seen s : partitions) {
            Map<String, Object> one = new LinkedHashMap<>();
            BridgeField.PARTITION.put(one, s.partition());
            BridgeField.OWNER.put(one, s.owner());
            BridgeField.EPOCH.put(one, s.epoch());
            BridgeField.PROMOTABLE.put(one, s.promotable());
            seen.add(one);
        }
        Map<String, Object> view = new LinkedHashMap<>();
        BridgeField.MASTER.put(view, master);
        BridgeField.LOCAL.put(view, local);
        BridgeField.COPY_LEASES.put(view, copyLeases);
        BridgeField.ENABLED.put(view, enabled);
        BridgeField.BOUND_MS.put(view, boundMs);
        BridgeField.PARTITIONS.put(view, seen);
        BridgeField.NODES.put(view, nodes);
        List<Integer> condemned = new ArrayList<>();
        for (Object p : (List<?>) BridgeField.CONDEMNED.in(event(NativeLockCore.ALL_PARTITIONS, "look", view))) {
            condemned.add(((Number) p).intValue());
        }
        return condemned;
    }

    private Map<?, ?> event(int partition, String name, Map<String, Object> members) {
        Map<String, Object> args = new LinkedHashMap<>();
        BridgeField.EVENT.put(args, name);
        args.putAll(members);
        return (Map<?, ?>) BridgeField.RESULT.in(core.call(NativeOp.OWNERSHIP, partition, BridgeJson.toJson(args)));
    }
}
