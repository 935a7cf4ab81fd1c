package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/** Extends a held lock's lease. */
public final class TransportRenewLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.RENEW);

    @Inject
    public TransportRenewLockAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.RENEW), wiring, locks);
    }
}
