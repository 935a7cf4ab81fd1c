package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/**
 * Watches one lock until it ends (docs/API.md "Watch a lock"), on the key's owner: a read, so a
 * {@code cluster:monitor} action. Routed like a waiting acquire: after an owner move the
 * coordinator sends it again with the wait it has left.
 */
public final class TransportWatchLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.WATCH);

    @Inject
    public TransportWatchLockAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.WATCH), wiring, locks);
    }
}
