package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/** Creates, keeps alive and ends sessions. */
public final class TransportLockSessionAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.SESSION);

    @Inject
    public TransportLockSessionAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.SESSION_CREATE, NativeOp.SESSION_KEEPALIVE, NativeOp.SESSION_END), wiring, locks);
    }
}
