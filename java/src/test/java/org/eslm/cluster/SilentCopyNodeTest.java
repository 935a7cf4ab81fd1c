package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.ElasticsearchTimeoutException;
import org.elasticsearch.transport.RemoteTransportException;
import org.eslm.NativeTestSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Which failures of a batch on a copy say that its node is silent, so that this owner's other
 * copies on it are failed at once: a timeout or a lost connection, wrapped or not; never a copy
 * that answered with a refusal.
 */
class SilentCopyNodeTest {
    @BeforeAll
    static void logging() {
        NativeTestSupport.setUp(); // Elasticsearch's exceptions need its logging
    }

    @Test
    void aTimeoutIsSilenceWrappedOrNot() {
        ElasticsearchTimeoutException timeout = new ElasticsearchTimeoutException("lock batch to copy [x] timed out");
        assertTrue(SilentCopyNode.silent(timeout));
        assertTrue(SilentCopyNode.silent(new ElasticsearchException("replica failed", timeout)));
    }

    @Test
    void aCopyThatAnsweredIsNotSilent() {
        assertFalse(SilentCopyNode.silent(new IllegalStateException("cannot apply the batch")));
        assertFalse(SilentCopyNode.silent(new RemoteTransportException(
                "[node-0][internal:locks/replicate[r]]", new IllegalStateException("refused"))));
    }
}
