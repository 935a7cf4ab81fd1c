package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/** Node-local diagnostics of the receiving node. */
public final class TransportNodeDiagnosticsAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.NODE_DIAGNOSTICS);

    @Inject
    public TransportNodeDiagnosticsAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.DIAGNOSTICS), wiring, locks);
    }
}
