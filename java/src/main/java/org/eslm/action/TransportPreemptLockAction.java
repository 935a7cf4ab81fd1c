package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/**
 * An acquire that preempts (docs/API.md "Preemption"): it may take locks from holders of lower
 * priority, so it has the privilege of the operations on other owners' locks ({@link
 * LockActionNames#LOCK_ADMIN}), not the plain acquire's. The op is the acquire; the core does the
 * rest.
 */
public final class TransportPreemptLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.PREEMPT);

    @Inject
    public TransportPreemptLockAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.ACQUIRE), wiring, locks);
    }
}
