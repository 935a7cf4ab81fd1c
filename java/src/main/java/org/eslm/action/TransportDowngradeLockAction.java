package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/** Weakens a held lock's mode (exclusive to shared) without letting a writer in. */
public final class TransportDowngradeLockAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.DOWNGRADE);

    @Inject
    public TransportDowngradeLockAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.DOWNGRADE), wiring, locks);
    }
}
