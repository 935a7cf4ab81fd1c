package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.transport.TransportService;
import org.eslm.bridge.NativeOp;
import org.eslm.service.LockService;

/** Creates, keeps alive and ends sessions. */
public final class TransportLockSessionAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>("cluster:admin/locks/session");

    @Inject
    public TransportLockSessionAction(
            TransportService transportService,
            ActionFilters actionFilters,
            ClusterService clusterService,
            LockService locks) {
        super(
                TYPE,
                Set.of(NativeOp.SESSION_CREATE, NativeOp.SESSION_KEEPALIVE, NativeOp.SESSION_END),
                transportService,
                actionFilters,
                clusterService,
                locks);
    }
}
