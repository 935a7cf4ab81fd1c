package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.injection.guice.Inject;
import org.elasticsearch.transport.TransportService;
import org.eslm.bridge.NativeOp;
import org.eslm.service.LockService;

/** Releases locks the caller holds. */
public final class TransportReleaseLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>("cluster:admin/locks/release");

    @Inject
    public TransportReleaseLockAction(
            TransportService transportService,
            ActionFilters actionFilters,
            ClusterService clusterService,
            LockService locks) {
        super(
                TYPE,
                Set.of(NativeOp.RELEASE, NativeOp.RELEASE_MANY),
                transportService,
                actionFilters,
                clusterService,
                locks);
    }
}
