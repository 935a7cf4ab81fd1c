package org.eslm.service;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * On the elected master: the promotions it decided, failing a silent owner's primary, while it
 * publishes them (docs/ARCHITECTURE.md "Silent owners", the master routes to the promoted copy).
 *
 * <p>Why: the master applies a cluster state it publishes last, after every follower has, or
 * after {@code cluster.publish.timeout} (30 s) when one does not answer, and a silent owner's node
 * is exactly the one that does not. Until then the master's own state still names the old owner,
 * so every lock request the master coordinates would go to a node that does not answer, while
 * the promoted copy serves. Routing by a promotion here is safe: a node serves a partition only
 * once its own applied state makes it the owner (and its wait for the old lease has passed); until
 * then it answers "not yet", and the request is routed again. A publication that fails drops its
 * promotions.
 */
public final class PendingPromotions {
    /** The copy on {@code node} promoted to serve a partition in {@code epoch}. */
    public record Promotion(String node, long epoch) {}

    private final Map<Integer, Promotion> pending = new ConcurrentHashMap<>();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

    /** Records that this master's next state promotes the copy on {@code node} to own {@code partition} in {@code epoch}. */
    public void decided(int partition, String node, long epoch) {
        pending.merge(partition, new Promotion(node, epoch), (old, now) -> now.epoch() >= old.epoch() ? now : old);
        listeners.forEach(Runnable::run);
    }

    /** The publication that carried the promotion of {@code partition} in {@code epoch} failed. */
    public void dropped(int partition, long epoch) {
        pending.computeIfPresent(partition, (p, promotion) -> promotion.epoch() == epoch ? null : promotion);
    }

    /**
     * The promotion of {@code partition} newer than {@code appliedEpoch}, the epoch this node's
     * applied state gives it, or {@code null}; one the applied state has caught up with is forgotten.
     */
    public Promotion newerThan(int partition, long appliedEpoch) {
        Promotion promotion = pending.get(partition);
        if (promotion == null) {
            return null;
        }
        if (promotion.epoch() <= appliedEpoch) {
            pending.remove(partition, promotion);
            return null;
        }
        return promotion;
    }

    /** Runs {@code listener} after each promotion decided (requests in flight to the old owner go again). */
    public void onDecided(Runnable listener) {
        listeners.add(listener);
    }
}
