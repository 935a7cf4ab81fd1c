package org.eslm.cluster;

import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ResourceAlreadyExistsException;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.admin.indices.create.CreateIndexRequest;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.common.util.concurrent.ThreadContext;
import org.elasticsearch.threadpool.ThreadPool;

/** The elected master creates the lock index when it is missing ({@link LockIndex}), once at a time. */
final class LockIndexCreation {
    private static final Logger logger = LogManager.getLogger(LockIndexCreation.class);

    private final Client client;
    private final ThreadPool threadPool;
    private final int partitionCount;
    private final AtomicBoolean creating = new AtomicBoolean();

    LockIndexCreation(Client client, ThreadPool threadPool, int partitionCount) {
        this.client = client;
        this.threadPool = threadPool;
        this.partitionCount = partitionCount;
    }

    @SuppressWarnings("try") // the stored context restores the caller's thread context on close
    void create() {
        if (creating.compareAndSet(false, true) == false) {
            return;
        }
        ThreadContext threadContext = threadPool.getThreadContext();
        try (ThreadContext.StoredContext ignored = threadContext.stashContext()) {
            threadContext.markAsSystemContext();
            CreateIndexRequest request =
                    new CreateIndexRequest(LockIndex.NAME).settings(LockIndex.settings(partitionCount));
            client.admin()
                    .indices()
                    .create(
                            request,
                            ActionListener.wrap(
                                    r -> {
                                        logger.info(
                                                "created lock index [{}] with [{}] partitions",
                                                LockIndex.NAME,
                                                partitionCount);
                                        creating.set(false);
                                    },
                                    e -> {
                                        creating.set(false);
                                        if (e instanceof ResourceAlreadyExistsException == false) {
                                            logger.warn("failed to create lock index [" + LockIndex.NAME + "]", e);
                                        }
                                    }));
        }
    }
}
