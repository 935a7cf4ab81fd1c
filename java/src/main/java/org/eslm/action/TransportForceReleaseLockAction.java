package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.transport.TransportService;
import org.eslm.bridge.NativeOp;
import org.eslm.service.LockService;

/** Admin: takes a key's locks from their holders (logged). */
public final class TransportForceReleaseLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>("cluster:admin/locks/force_release");

    @Inject
    public TransportForceReleaseLockAction(
            TransportService transportService,
            ActionFilters actionFilters,
            ClusterService clusterService,
            LockService locks) {
        super(TYPE, Set.of(NativeOp.FORCE_RELEASE), transportService, actionFilters, clusterService, locks);
    }
}
