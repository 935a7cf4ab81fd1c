package org.eslm.action;

import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ExceptionsHelper;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.ClusterStateObserver;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.node.NodeClosedException;
import org.elasticsearch.tasks.CancellableTask;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.transport.ConnectTransportException;
import org.elasticsearch.transport.NodeDisconnectedException;
import org.elasticsearch.transport.NodeNotConnectedException;
import org.eslm.cluster.PartitionTable;
import org.eslm.cluster.TransportWiring;
import org.eslm.core.LockException;
import org.eslm.core.LockPartitionUnavailableException;
import org.eslm.service.LockService;
import org.eslm.service.PendingPromotions;

/**
 * The coordinating node's side of a lock request ({@link TransportLockOpAction}): finds the
 * partition of the request's key (or session) and its owner in the cluster state and sends the
 * request there, or runs it here ({@link OwnerRun}) when this node owns it. If the owner is
 * unknown, moving or gone, it waits for the next cluster state and retries, within the request's
 * budget (at least {@link #ROUTING_BUDGET}); a waiter re-sent to a new owner queues there with
 * the wait it has left. Nothing blocks: retries are cluster-state observers or scheduled tasks.
 */
final class PartitionRouter {
    private static final Logger logger = LogManager.getLogger(PartitionRouter.class);
    /**
     * How long a request that does not wait may spend finding a partition's owner: long enough to
     * ride out a partition move or a primary promotion (a few cluster states), short enough that
     * a client sees a 503 it can retry rather than a hung request.
     */
    static final TimeValue ROUTING_BUDGET = TimeValue.timeValueSeconds(10);

    /**
     * The longest a request waits for the next cluster state before it looks again anyway: an
     * owner can come back (its node reconnects) without a new cluster state.
     */
    static final TimeValue STATE_WAIT_MAX = TimeValue.timeValueSeconds(1);

    private final ClusterService clusterService;
    private final ThreadPool threadPool;
    private final LockService locks;
    private final OwnerRun owner;
    private final OwnerForward forward;

    PartitionRouter(String actionName, TransportWiring wiring, LockService locks, OwnerRun owner) {
        this.clusterService = wiring.clusterService();
        this.threadPool = wiring.transportService().getThreadPool();
        this.locks = locks;
        this.owner = owner;
        this.forward = new OwnerForward(actionName, wiring, locks.promotions(), this::route);
    }

    /** Routes {@code request}, not yet routed, to its partition's owner; {@code listener} gets the answer. */
    void route(Task task, LockOpRequest request, ActionListener<LockOpResponse> listener) {
        long budgetMs = Math.max(request.waitMs(), ROUTING_BUDGET.millis());
        route(Routing.start(task, request, listener, budgetMs));
    }

    /** Sends to the partition's owner, retrying on ownership changes. */
    private void route(Routing r) {
        if (r.task() instanceof CancellableTask cancellable && cancellable.notifyIfCancelled(r.listener())) {
            return;
        }
        if (locks.shutdown().begun()) {
            // Answered by the shutdown already; stop retrying.
            r.listener().onFailure(locks.shutdown().failure());
            return;
        }
        ClusterState state = clusterService.state();
        PartitionTable table = PartitionTable.of(state);
        RouteTargets.Target target;
        LockOpRequest routed;
        try {
            RouteTargets.Target inState = table == null ? null : RouteTargets.target(table, r.request(), state);
            target = inState == null ? null : promotedMeanwhile(state, table, inState);
            if (target == null) {
                String stuck = table == null ? null : table.unavailable(RouteTargets.partitionOf(table, r.request()));
                if (stuck != null) {
                    r.listener().onFailure(new LockPartitionUnavailableException(stuck, 0));
                    return;
                }
                retryOnNextState(r, "lock partition has no active owner");
                return;
            }
            routed = r.routedFor(target.partition());
            RouteTargets.refuseWhatTheOwnerCannotRead(target.node(), routed);
        } catch (IllegalArgumentException | LockException e) {
            r.listener().onFailure(e);
            return;
        }
        ActionListener<LockOpResponse> handler = ActionListener.wrap(
                response -> {
                    LockException failure = response.failureException();
                    if (failure == null) {
                        r.listener().onResponse(RouteTargets.withGlobalSession(response, target.partition()));
                    } else if (failure instanceof LockPartitionUnavailableException unavailable) {
                        Map<String, Object> applied = unavailable.appliedAnswer();
                        retryUnavailable(applied == null ? r : r.afterApplied(applied), unavailable);
                    } else if (r.endedBefore(failure)) {
                        logger.debug(
                                "[{}]: ended by an earlier attempt, handed over uncommitted",
                                r.request().getDescription());
                        r.listener()
                                .onResponse(RouteTargets.withGlobalSession(
                                        new LockOpResponse(r.applied()), target.partition()));
                    } else {
                        r.listener().onFailure(failure);
                    }
                },
                e -> {
                    if (ownerUnreachable(e)) {
                        retryOnNextState(r, "owner node [" + target.node().getName() + "] is unreachable");
                    } else {
                        r.listener().onFailure(e);
                    }
                });
        if (target.node().getId().equals(clusterService.localNode().getId())) {
            // This node owns the partition: run it here. A transport send to ourselves would only
            // register a second task and copy the request (measurable on the uncontended path,
            // bench/RESULTS.md); the owner's checks in LockService are the same either way.
            owner.run(r.task(), routed, handler);
            return;
        }
        forward.send(r, target, target.epoch(), RouteTargets.readableBy(target.node(), routed), handler);
    }

    /**
     * On the master, the copy it is promoting in place of {@code target} while it publishes that
     * promotion ({@link PendingPromotions}): its own applied state names the old owner until every
     * follower has the new one, and the old owner is the node that does not answer.
     */
    private RouteTargets.Target promotedMeanwhile(
            ClusterState state, PartitionTable table, RouteTargets.Target target) {
        if (state.nodes().isLocalNodeElectedMaster() == false) {
            return target;
        }
        PendingPromotions.Promotion promotion =
                locks.promotions().newerThan(target.partition(), table.epoch(target.partition()));
        DiscoveryNode node = promotion == null ? null : state.nodes().get(promotion.node());
        return node == null ? target : new RouteTargets.Target(target.partition(), node, promotion.epoch());
    }

    /**
     * The owner said the partition is unavailable. Moving (no retry hint): try again on the next
     * cluster state. A hint of at most {@link #STATE_WAIT_MAX} (its lease not current, or the last
     * second of a recovery grace): try again after the hint, within the budget. A longer recovery
     * grace: a waiting request waits it out if it ends within the request's own wait (not the
     * routing budget: the caller asked to wait that long and no longer); anything else fails with
     * 503 (retryable by the client).
     */
    private void retryUnavailable(Routing r, LockPartitionUnavailableException unavailable) {
        List<String> hint = unavailable.getMetadata("es.retry_after_ms");
        long retryAfterMs = hint == null ? 0 : Long.parseLong(hint.get(0));
        switch (Retry.after(retryAfterMs, r.leftMs(), r.waitLeftMs())) {
            case NEXT_STATE -> retryOnNextState(r, unavailable.getMessage());
            case AFTER_HINT ->
                threadPool.schedule(() -> route(r), TimeValue.timeValueMillis(retryAfterMs), threadPool.generic());
            case GIVE_UP -> r.listener().onFailure(unavailable);
        }
    }

    /** What the coordinator does with an owner's refusal as unavailable (see {@link #retryUnavailable}). */
    enum Retry {
        /** Moving: look again on the next cluster state. */
        NEXT_STATE,
        /** Route again once the owner's hint has passed. */
        AFTER_HINT,
        /** Answer the refusal (503, retryable by the client). */
        GIVE_UP;

        /**
         * The rule for a refusal with a hint of {@code retryAfterMs} (0: none), for a request
         * with {@code leftMs} of its routing budget and {@code waitLeftMs} of its own wait left.
         */
        static Retry after(long retryAfterMs, long leftMs, long waitLeftMs) {
            if (retryAfterMs <= 0) {
                return NEXT_STATE;
            }
            boolean soon = retryAfterMs <= STATE_WAIT_MAX.millis();
            return (soon && retryAfterMs < leftMs) || retryAfterMs < waitLeftMs ? AFTER_HINT : GIVE_UP;
        }
    }

    /** Whether a send to the owner failed because its node could not be reached (the request is routed again). */
    static boolean ownerUnreachable(Exception e) {
        Throwable cause = ExceptionsHelper.unwrapCause(e);
        return cause instanceof ConnectTransportException
                || cause instanceof NodeClosedException
                || cause instanceof NodeDisconnectedException
                || cause instanceof NodeNotConnectedException;
    }

    private void retryOnNextState(Routing r, String why) {
        long leftMs = r.leftMs();
        if (leftMs <= 0) {
            r.listener()
                    .onFailure(new LockPartitionUnavailableException(why + "; gave up after the request's budget", 0));
            return;
        }
        logger.debug(
                "retrying lock request [{}] on the next cluster state: {}",
                r.request().getDescription(),
                why);
        ClusterStateObserver observer = new ClusterStateObserver(
                clusterService,
                TimeValue.timeValueMillis(Math.min(leftMs, STATE_WAIT_MAX.millis())),
                logger,
                threadPool.getThreadContext());
        observer.waitForNextChange(new ClusterStateObserver.Listener() {
            @Override
            public void onNewClusterState(ClusterState state) {
                route(r);
            }

            @Override
            public void onClusterServiceClose() {
                r.listener().onFailure(new NodeClosedException(clusterService.localNode()));
            }

            @Override
            public void onTimeout(TimeValue timeout) {
                route(r); // the owner may be back without a new state
            }
        });
    }
}
