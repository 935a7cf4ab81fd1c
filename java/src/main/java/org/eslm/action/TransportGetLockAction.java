package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/** Reads the holders and waiters of one key, or a group's members, or a partition's groups, on the owner. */
public final class TransportGetLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.GET);

    @Inject
    public TransportGetLockAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.KEY_INFO, NativeOp.GROUP_INFO, NativeOp.GROUP_LIST), wiring, locks);
    }
}
