package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.transport.TransportService;
import org.eslm.bridge.NativeOp;
import org.eslm.service.LockService;

/** Extends a held lock's lease. */
public final class TransportRenewLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>("cluster:admin/locks/renew");

    @Inject
    public TransportRenewLockAction(
            TransportService transportService,
            ActionFilters actionFilters,
            ClusterService clusterService,
            LockService locks) {
        super(TYPE, Set.of(NativeOp.RENEW), transportService, actionFilters, clusterService, locks);
    }
}
