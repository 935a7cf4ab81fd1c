package org.eslm.action;

import java.util.Set;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.injection.guice.Inject;
import org.eslm.bridge.NativeOp;
import org.eslm.cluster.TransportWiring;
import org.eslm.service.LockService;

/**
 * Creates and deletes groups and changes a member's capabilities (docs/API.md "Groups"), on the
 * owner of the group's partition. Joining, leaving and heartbeats are the lock actions on the
 * group's key, so a role that allows an application its locks allows it its groups too
 * ({@link LockActionNames#LOCK_CHANGES}).
 */
public final class TransportGroupAction extends TransportLockOpAction {
    public static final ActionType<LockOpResponse> TYPE = new ActionType<>(LockActionNames.GROUP);

    @Inject
    public TransportGroupAction(TransportWiring wiring, LockService locks) {
        super(TYPE, Set.of(NativeOp.GROUP_CREATE, NativeOp.GROUP_DELETE, NativeOp.GROUP_UPDATE), wiring, locks);
    }
}
