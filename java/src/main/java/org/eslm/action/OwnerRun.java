package org.eslm.action;

import java.util.Map;
import org.elasticsearch.ExceptionsHelper;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.tasks.Task;
import org.eslm.bridge.NativeOp;
import org.eslm.core.LockException;
import org.eslm.core.SessionNotFoundException;
import org.eslm.service.LockService;

/**
 * The owner node's side of a lock request ({@link TransportLockOpAction}): runs it in the local
 * core. Lock outcomes go back as data ({@link LockOpResponse#failure}), since Elasticsearch cannot
 * serialize plugin exceptions; the coordinator ({@link PartitionRouter}) rethrows them typed.
 */
final class OwnerRun {
    private final LockService locks;

    OwnerRun(LockService locks) {
        this.locks = locks;
    }

    /** Runs {@code request}, routed to this node's partition, in the local core. */
    void run(Task task, LockOpRequest request, ActionListener<LockOpResponse> listener) {
        ActionListener<Map<String, Object>> asResponse =
                ActionListener.wrap(body -> listener.onResponse(new LockOpResponse(body)), e -> {
                    if (ExceptionsHelper.unwrapCause(e) instanceof SessionNotFoundException
                            && request.session() != null
                            && request.op() != NativeOp.SESSION_CREATE) {
                        // The core names its own part of the id; the client sent the whole one.
                        listener.onResponse(LockOpResponse.failure(sessionNotFound(request.session())));
                    } else if (ExceptionsHelper.unwrapCause(e) instanceof LockException lockException) {
                        listener.onResponse(LockOpResponse.failure(lockException));
                    } else {
                        listener.onFailure(e);
                    }
                });
        Map<String, Object> args;
        try {
            args = request.args();
        } catch (LockException e) {
            asResponse.onFailure(e);
            return;
        }
        locks.execute(request.op(), request.partition(), args, task, asResponse);
    }

    /** The answer to any session id that names no session of the caller, naming the id as the client sent it. */
    static SessionNotFoundException sessionNotFound(String session) {
        return new SessionNotFoundException("session [" + session + "] does not exist or has expired", session);
    }
}
