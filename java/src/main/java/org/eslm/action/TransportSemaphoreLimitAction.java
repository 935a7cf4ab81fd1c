package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/**
 * Admin: changes a semaphore's limit while it is in use (docs/API.md "Semaphores"). It changes what
 * every other owner may hold, so it has the privilege of the operations on other owners' locks
 * ({@link LockActionNames#LOCK_ADMIN}), not the holders' own.
 */
public final class TransportSemaphoreLimitAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.SEMAPHORE_LIMIT);

    @Inject
    public TransportSemaphoreLimitAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.SEMAPHORE_LIMIT), wiring, locks);
    }
}
