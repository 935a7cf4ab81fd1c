package org.eslm.action;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
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
import org.elasticsearch.transport.ReceiveTimeoutTransportException;
import org.elasticsearch.transport.TransportRequestOptions;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.NativeFormat;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.PartitionTable;
import org.eslm.cluster.PeerFormats;
import org.eslm.cluster.TransportWiring;
import org.eslm.core.LockException;
import org.eslm.core.LockNotHeldException;
import org.eslm.core.LockPartitionUnavailableException;
import org.eslm.core.SessionNotFoundException;
import org.eslm.service.LockService;
import org.eslm.service.SessionIds;

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
     * How long past a request's budget its coordinator waits for the owner's answer before it
     * answers 503 itself ({@link #ownerSilent}): an owner answers a waiting request when its wait
     * ends, so only a frozen or cut-off owner takes this long.
     */
    static final TimeValue OWNER_ANSWER_MARGIN = TimeValue.timeValueSeconds(10);
    /**
     * The longest a request waits for the next cluster state before it looks again anyway: an
     * owner can come back (its node reconnects) without a new cluster state.
     */
    static final TimeValue STATE_WAIT_MAX = TimeValue.timeValueSeconds(1);

    private final String actionName;
    private final TransportWiring wiring;
    private final ClusterService clusterService;
    private final ThreadPool threadPool;
    private final LockService locks;
    private final OwnerRun owner;
    private final InFlightRequests inFlight = new InFlightRequests();

    PartitionRouter(String actionName, TransportWiring wiring, LockService locks, OwnerRun owner) {
        this.actionName = actionName;
        this.wiring = wiring;
        this.clusterService = wiring.clusterService();
        this.threadPool = wiring.transportService().getThreadPool();
        this.locks = locks;
        this.owner = owner;
        clusterService.addListener(inFlight);
    }

    /** Routes {@code request}, not yet routed, to its partition's owner; {@code listener} gets the answer. */
    void route(Task task, LockOpRequest request, ActionListener<LockOpResponse> listener) {
        long budgetMs = Math.max(request.waitMs(), ROUTING_BUDGET.millis());
        route(new Routing(
                task,
                request,
                listener,
                System.nanoTime() + TimeValue.timeValueMillis(budgetMs).nanos(),
                System.nanoTime(),
                null));
    }

    /**
     * One request being routed by this (coordinating) node, with its budget ({@code deadline},
     * {@link System#nanoTime()}) for finding an owner.
     */
    private record Routing(
            Task task,
            LockOpRequest request,
            ActionListener<LockOpResponse> listener,
            long deadline,
            long started,
            Map<String, Object> applied) {
        long leftMs() {
            return TimeValue.nsecToMSec(deadline - System.nanoTime());
        }

        /**
         * This routing after an owner applied its ending change but could not commit it: the
         * retry names the grant that change ended (a release without a token must not end a newer
         * grant of the same owner), and {@code answer} is kept for {@link #endedBefore}.
         */
        Routing afterApplied(Map<String, Object> answer) {
            LockOpRequest retry = request;
            if (request.op() == NativeOp.RELEASE
                    && request.opArgs().containsKey(BridgeField.FENCING_TOKEN.key()) == false
                    && BridgeField.FENCING_TOKEN.in(answer) != null) {
                retry = request.withOpArg(BridgeField.FENCING_TOKEN.key(), BridgeField.FENCING_TOKEN.in(answer));
            }
            return new Routing(task, retry, listener, deadline, started, answer);
        }

        /**
         * Whether {@code failure} says there is nothing left to end because an earlier attempt's
         * change, applied but not committed, was handed over with the partition.
         */
        boolean endedBefore(LockException failure) {
            return applied != null
                    && (failure instanceof LockNotHeldException || failure instanceof SessionNotFoundException);
        }
    }

    /** Sends to the partition's owner, retrying on ownership changes. */
    private void route(Routing r) {
        if (r.task instanceof CancellableTask cancellable && cancellable.notifyIfCancelled(r.listener)) {
            return;
        }
        if (locks.shutdown().begun()) {
            // Answered by the shutdown already; stop retrying.
            r.listener.onFailure(locks.shutdown().failure());
            return;
        }
        ClusterState state = clusterService.state();
        PartitionTable table = PartitionTable.of(state);
        Target target;
        LockOpRequest routed;
        try {
            target = table == null ? null : target(table, r, state);
            if (target == null) {
                String stuck = table == null ? null : table.unavailable(partitionOf(table, r.request));
                if (stuck != null) {
                    r.listener.onFailure(new LockPartitionUnavailableException(stuck, 0));
                    return;
                }
                retryOnNextState(r, "lock partition has no active owner");
                return;
            }
            routed = routedFor(r, target.partition);
            refuseWhatTheOwnerCannotRead(target.node, routed);
        } catch (IllegalArgumentException | LockException e) {
            r.listener.onFailure(e);
            return;
        }
        ActionListener<LockOpResponse> handler = ActionListener.wrap(
                response -> {
                    LockException failure = response.failureException();
                    if (failure == null) {
                        r.listener.onResponse(withGlobalSession(response, target.partition));
                    } else if (failure instanceof LockPartitionUnavailableException unavailable) {
                        Map<String, Object> applied = unavailable.appliedAnswer();
                        retryUnavailable(applied == null ? r : r.afterApplied(applied), unavailable);
                    } else if (r.endedBefore(failure)) {
                        logger.debug(
                                "[{}]: ended by an earlier attempt, handed over uncommitted",
                                r.request.getDescription());
                        r.listener.onResponse(withGlobalSession(new LockOpResponse(r.applied), target.partition));
                    } else {
                        r.listener.onFailure(failure);
                    }
                },
                e -> {
                    Throwable cause = ExceptionsHelper.unwrapCause(e);
                    if (cause instanceof ConnectTransportException
                            || cause instanceof NodeClosedException
                            || cause instanceof NodeDisconnectedException
                            || cause instanceof NodeNotConnectedException) {
                        retryOnNextState(r, "owner node [" + target.node.getName() + "] is unreachable");
                    } else {
                        r.listener.onFailure(e);
                    }
                });
        if (target.node.getId().equals(clusterService.localNode().getId())) {
            // This node owns the partition: run it here. A transport send to ourselves would only
            // register a second task and copy the request (measurable on the uncontended path,
            // bench/RESULTS.md); the owner's checks in LockService are the same either way.
            owner.run(r.task, routed, handler);
            return;
        }
        sendToOwner(r, target, table.epoch(target.partition), readableBy(target.node, routed), handler);
    }

    /**
     * A group request for an owner whose plugin reads no groups (an older node during a rolling
     * upgrade, docs/ARCHITECTURE.md "Formats and versions") is refused here with 400 naming
     * {@code group}, as this node's core refuses to create one: the older node would answer an
     * action it does not know with a failure that says nothing to the caller.
     */
    private static void refuseWhatTheOwnerCannotRead(DiscoveryNode node, LockOpRequest routed) {
        if (routed.namesGroups() && PeerFormats.of(node.getAttributes()) < NativeFormat.GROUPS_STATE_FORMAT) {
            throw new IllegalArgumentException("[group] groups need every node of the cluster to read state format ["
                    + NativeFormat.GROUPS_STATE_FORMAT + "]: the owner of the group's partition, node ["
                    + node.getName() + "], runs an older plugin (finish the rolling upgrade first)");
        }
    }

    /** {@code routed} as the owner's node reads it: a node of an older plugin is sent no acquisition. */
    private static LockOpRequest readableBy(DiscoveryNode node, LockOpRequest routed) {
        return PeerFormats.of(node.getAttributes()) < NativeFormat.ACQUISITION_STATE_FORMAT
                ? routed.withoutAcquisitions()
                : routed;
    }

    /**
     * Sends the attempt to the owner's node; if a cluster state gives the partition a new epoch
     * before the owner answers, the attempt is given up and the request routed again
     * ({@link InFlightRequests}). Whichever comes first decides; the other is ignored.
     */
    private void sendToOwner(
            Routing r, Target target, long epoch, LockOpRequest routed, ActionListener<LockOpResponse> handler) {
        AtomicBoolean decided = new AtomicBoolean();
        InFlightRequests.Sent sent = inFlight.add(target.partition, epoch, () -> {
            if (decided.compareAndSet(false, true)) {
                logger.debug(
                        "[{}]: lock partition [{}] left epoch [{}]; routing again",
                        r.request.getDescription(),
                        target.partition,
                        epoch);
                threadPool.generic().execute(() -> route(r));
            }
        });
        if (inFlight.rerouteIfMoved(sent, clusterService.state())) {
            return;
        }
        ActionListener<LockOpResponse> answered = ActionListener.wrap(
                response -> {
                    inFlight.remove(sent);
                    if (decided.compareAndSet(false, true)) {
                        handler.onResponse(response);
                    }
                },
                e -> {
                    inFlight.remove(sent);
                    if (decided.compareAndSet(false, true)) {
                        handler.onFailure(e);
                    }
                });
        TimeValue within = TimeValue.timeValueMillis(Math.max(0, r.leftMs()) + OWNER_ANSWER_MARGIN.millis());
        wiring.sendChild(
                target.node,
                actionName,
                routed,
                r.task,
                TransportRequestOptions.timeout(within),
                LockOpResponse::new,
                answered.delegateResponse((l, e) -> l.onFailure(ownerSilent(e, target, within))));
    }

    /**
     * A forward the owner did not answer within the request's budget and {@link
     * #OWNER_ANSWER_MARGIN} (it may be frozen or cut off while the cluster has not yet replaced
     * it: a master busy publishing to that very node handles the silent owner's failure late)
     * becomes a retryable 503, so a client never waits on it past its own wait; its effect there,
     * if any, is the one a retry naming the same acquisition finds (docs/API.md "Acquisitions").
     * Any other failure is passed on as it is.
     */
    private static Exception ownerSilent(Exception e, Target target, TimeValue within) {
        if (ExceptionsHelper.unwrap(e, ReceiveTimeoutTransportException.class) == null) {
            return e;
        }
        return new LockPartitionUnavailableException(
                "lock partition [" + target.partition + "]: its owner [" + target.node.getName()
                        + "] did not answer within [" + within + "]; it may be frozen or cut off: retry",
                0);
    }

    /**
     * The owner said the partition is unavailable. Moving (no retry hint): try again on the next
     * cluster state. A hint of at most {@link #STATE_WAIT_MAX} (its lease not current, or the last
     * second of a recovery grace): try again after the hint, within the budget. A longer recovery
     * grace: a waiting request waits it out if its budget allows; anything else fails with 503
     * (retryable by the client).
     */
    private void retryUnavailable(Routing r, LockPartitionUnavailableException unavailable) {
        List<String> hint = unavailable.getMetadata("es.retry_after_ms");
        long retryAfterMs = hint == null ? 0 : Long.parseLong(hint.get(0));
        boolean soon = retryAfterMs <= STATE_WAIT_MAX.millis();
        if (retryAfterMs <= 0) {
            retryOnNextState(r, unavailable.getMessage());
        } else if ((r.request.waits() || soon) && retryAfterMs < r.leftMs()) {
            threadPool.schedule(() -> route(r), TimeValue.timeValueMillis(retryAfterMs), threadPool.generic());
        } else {
            r.listener.onFailure(unavailable);
        }
    }

    private void retryOnNextState(Routing r, String why) {
        long leftMs = r.leftMs();
        if (leftMs <= 0) {
            r.listener.onFailure(
                    new LockPartitionUnavailableException(why + "; gave up after the request's budget", 0));
            return;
        }
        logger.debug("retrying lock request [{}] on the next cluster state: {}", r.request.getDescription(), why);
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
                r.listener.onFailure(new NodeClosedException(clusterService.localNode()));
            }

            @Override
            public void onTimeout(TimeValue timeout) {
                route(r); // the owner may be back without a new state
            }
        });
    }

    private record Target(int partition, DiscoveryNode node) {}

    /** Session ids leave the cluster with their partition in them (see {@link SessionIds}). */
    private static LockOpResponse withGlobalSession(LockOpResponse response, int partition) {
        if (BridgeField.SESSION.in(response.body()) instanceof String session) {
            Map<String, Object> body = new LinkedHashMap<>(response.body());
            body.put(BridgeField.SESSION.key(), SessionIds.global(partition, session));
            return new LockOpResponse(body);
        }
        return response;
    }

    /** The partition of the request's routing value and its owner, or {@code null} while it has none. */
    private static Target target(PartitionTable table, Routing r, ClusterState state) {
        int partition = partitionOf(table, r.request);
        String owner = table.owner(partition);
        DiscoveryNode node = owner == null ? null : state.nodes().get(owner);
        return node == null ? null : new Target(partition, node);
    }

    /**
     * Sessions live in one partition, named in their id ({@code <partition>_<id>}); everything
     * else routes by the request's routing value. A multi-lock must stay in one partition.
     */
    private static int partitionOf(PartitionTable table, LockOpRequest request) {
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
     * The request for this attempt at {@code partition}, with the wait it has left. The session
     * id is checked here (the owner passes the core its id without the partition).
     */
    private static LockOpRequest routedFor(Routing r, int partition) {
        LockOpRequest request = r.request;
        if (request.session() != null && request.op() != NativeOp.SESSION_CREATE) {
            SessionIds.local(request.session());
        }
        long waitLeft = request.waitMs();
        if (waitLeft != LockOpRequest.NO_WAIT) {
            long spentMs = TimeValue.nsecToMSec(System.nanoTime() - r.started);
            waitLeft = Math.max(0, waitLeft - spentMs);
        }
        return request.routed(partition, waitLeft);
    }
}
