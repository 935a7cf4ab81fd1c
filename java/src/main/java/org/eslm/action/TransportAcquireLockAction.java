package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/** Acquires one key or many (all-or-nothing), at once or after queueing. */
public final class TransportAcquireLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.ACQUIRE);

    @Inject
    public TransportAcquireLockAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.ACQUIRE, NativeOp.ACQUIRE_MANY), wiring, locks);
    }
}
