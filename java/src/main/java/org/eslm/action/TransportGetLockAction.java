package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.transport.TransportService;
import org.eslm.bridge.NativeOp;
import org.eslm.service.LockService;

/** Reads the holders and waiters of one key, on the key's owner. */
public final class TransportGetLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>("cluster:monitor/locks/get");

    @Inject
    public TransportGetLockAction(
            TransportService transportService,
            ActionFilters actionFilters,
            ClusterService clusterService,
            LockService locks) {
        super(TYPE, Set.of(NativeOp.KEY_INFO), transportService, actionFilters, clusterService, locks);
    }
}
