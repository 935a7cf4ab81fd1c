package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/** Admin: takes a key's locks from their holders (logged); its own privilege ({@link LockActionNames#LOCK_ADMIN}). */
public final class TransportForceReleaseLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.FORCE_RELEASE);

    @Inject
    public TransportForceReleaseLockAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.FORCE_RELEASE), wiring, locks);
    }
}
