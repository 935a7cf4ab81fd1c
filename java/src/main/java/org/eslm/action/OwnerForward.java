package org.eslm.action;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.IntToLongFunction;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ExceptionsHelper;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.transport.ReceiveTimeoutTransportException;
import org.elasticsearch.transport.TransportRequestOptions;
import org.eslm.cluster.PartitionTable;
import org.eslm.cluster.TransportWiring;
import org.eslm.core.LockPartitionUnavailableException;
import org.eslm.service.PendingPromotions;

/**
 * A request forwarded to its partition's owner on another node (docs/ARCHITECTURE.md "Silent
 * owners", requests in flight follow the epoch): as a child request, so a client that goes away
 * cancels it there; given up and routed again as soon as a cluster state gives the partition a new
 * epoch ({@link InFlightRequests}), since a frozen owner may never answer; and answered with a
 * retryable 503 by this node once the owner has been silent for the request's budget plus
 * {@link #OWNER_ANSWER_MARGIN}.
 */
final class OwnerForward {
    private static final Logger logger = LogManager.getLogger(OwnerForward.class);
    /**
     * How long past a request's budget its coordinator waits for the owner's answer before it
     * answers 503 itself ({@link #ownerSilent}): an owner answers a waiting request when its wait
     * ends, so only a frozen or cut-off owner takes this long.
     */
    static final TimeValue OWNER_ANSWER_MARGIN = TimeValue.timeValueSeconds(10);

    private final String actionName;
    private final TransportWiring wiring;
    private final ClusterService clusterService;
    private final ThreadPool threadPool;
    private final InFlightRequests inFlight = new InFlightRequests();
    /** Routes a request again (its partition moved to a new epoch while it was in flight). */
    private final Consumer<Routing> reroute;

    OwnerForward(String actionName, TransportWiring wiring, PendingPromotions promotions, Consumer<Routing> reroute) {
        this.actionName = actionName;
        this.wiring = wiring;
        this.clusterService = wiring.clusterService();
        this.threadPool = wiring.transportService().getThreadPool();
        this.reroute = reroute;
        clusterService.addListener(inFlight);
        // A promotion this master decided: what it sent to the old owner goes to the promoted copy.
        promotions.onDecided(() -> inFlight.rerouteMoved(withPromotions(promotions)));
    }

    /** The epochs of this node's applied state, and on the master those of the promotions it publishes. */
    private IntToLongFunction withPromotions(PendingPromotions promotions) {
        ClusterState state = clusterService.state();
        IntToLongFunction applied = InFlightRequests.epochs(PartitionTable.of(state));
        if (state.nodes().isLocalNodeElectedMaster() == false) {
            return applied;
        }
        return partition -> {
            long epoch = applied.applyAsLong(partition);
            PendingPromotions.Promotion promotion = promotions.newerThan(partition, epoch);
            return promotion == null ? epoch : promotion.epoch();
        };
    }

    /**
     * Sends the attempt to the owner's node; if a cluster state gives the partition a new epoch
     * before the owner answers, the attempt is given up and the request routed again. Whichever
     * comes first decides; the other is ignored.
     */
    void send(
            Routing r,
            RouteTargets.Target target,
            long epoch,
            LockOpRequest routed,
            ActionListener<LockOpResponse> handler) {
        AtomicBoolean decided = new AtomicBoolean();
        InFlightRequests.Sent sent = inFlight.add(target.partition(), epoch, () -> {
            if (decided.compareAndSet(false, true)) {
                logger.debug(
                        "[{}]: lock partition [{}] left epoch [{}]; routing again",
                        r.request().getDescription(),
                        target.partition(),
                        epoch);
                threadPool.generic().execute(() -> reroute.accept(r));
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
                target.node(),
                actionName,
                routed,
                r.task(),
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
    private static Exception ownerSilent(Exception e, RouteTargets.Target target, TimeValue within) {
        if (ExceptionsHelper.unwrap(e, ReceiveTimeoutTransportException.class) == null) {
            return e;
        }
        return new LockPartitionUnavailableException(
                "lock partition [" + target.partition() + "]: its owner ["
                        + target.node().getName() + "] did not answer within [" + within
                        + "]; it may be frozen or cut off: retry",
                0);
    }
}
