package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/** Releases locks the caller holds. */
public final class TransportReleaseLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.RELEASE);

    @Inject
    public TransportReleaseLockAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.RELEASE, NativeOp.RELEASE_MANY), wiring, locks);
    }
}
