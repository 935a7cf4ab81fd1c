package org.eslm.replication;

import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;
import org.eslm.core.CoreClient;
import org.eslm.service.Commits;
import org.eslm.service.PartitionGate;
import org.eslm.service.ReplicationParts;
import org.eslm.service.Standbys;

/**
 * The replication parts the lock service runs: {@link GroupCommit} and {@link StandbyTables}, and
 * what {@link ShardStateLog} knows of a log that failed.
 */
public final class ReplicationWiring implements ReplicationParts {
    private final ShardStateLog log;

    public ReplicationWiring(ShardStateLog log) {
        this.log = log;
    }

    @Override
    public Commits commits(
            CoreClient core,
            Consumer<Map<String, Object>> deliver,
            IntFunction<RuntimeException> notServed,
            IntSupplier peerFormat,
            PartitionGate gate) {
        return new GroupCommit(core, deliver, notServed, peerFormat, gate);
    }

    @Override
    public Standbys standbys(CoreClient core) {
        return new StandbyTables(core);
    }

    @Override
    public String persistenceFailure(int partition) {
        return log.failure(partition);
    }
}
