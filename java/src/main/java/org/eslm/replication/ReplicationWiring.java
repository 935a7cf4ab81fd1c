package org.eslm.replication;

import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;
import java.util.function.LongConsumer;
import java.util.function.ObjLongConsumer;
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
            ObjLongConsumer<Map<String, Object>> deliver,
            IntFunction<RuntimeException> notServed,
            IntSupplier peerFormat,
            PartitionGate gate,
            LongConsumer roundTrips) {
        return new GroupCommit(core, deliver, notServed, peerFormat, gate, roundTrips);
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
