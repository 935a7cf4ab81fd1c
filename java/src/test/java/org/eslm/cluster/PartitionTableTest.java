package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** What a client is told about a partition Elasticsearch cannot assign (docs/RELIABILITY.md "A damaged state log"). */
class PartitionTableTest {
    @Test
    void theRefusalOfADamagedLogIsFoundInsideTheStackTraceOfTheAllocationFailure() {
        String refusal = "lock partition [3]: lock state log [/d/_state/locks-batches.log] cannot be used: a record"
                + " fails its checksum (at byte 16). " + PartitionTable.REFUSAL_MARK + " ... accept_data_loss";
        String details = "failed shard on node [x]: failed recovery, failure RecoveryFailedException: Recovery failed\n"
                + "\tat org.elasticsearch.Foo(Foo.java:1)\nCaused by: org.elasticsearch.ElasticsearchException: "
                + refusal + "\n\tat org.eslm.replication.LockShardListener.refuse(LockShardListener.java:130)\n";
        assertEquals(refusal, PartitionTable.firstReason(details));
        assertEquals(
                "failed shard on node [x]: oops", PartitionTable.firstReason("failed shard on node [x]: oops\n\tat a"));
        assertEquals("no details", PartitionTable.firstReason(null));
    }
}
