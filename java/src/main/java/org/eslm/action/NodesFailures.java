package org.eslm.action;

import java.util.List;
import java.util.Objects;
import org.elasticsearch.action.FailedNodeException;

/** Equality of the failed nodes of two nodes responses (exceptions have no {@code equals}). */
final class NodesFailures {
    private NodesFailures() {}

    /** Whether both lists name the same nodes with the same messages, in order. */
    static boolean same(List<FailedNodeException> a, List<FailedNodeException> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (Objects.equals(a.get(i).nodeId(), b.get(i).nodeId()) == false
                    || Objects.equals(a.get(i).getMessage(), b.get(i).getMessage()) == false) {
                return false;
            }
        }
        return true;
    }
}
