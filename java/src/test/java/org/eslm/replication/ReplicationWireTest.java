package org.eslm.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.List;
import java.util.Random;
import org.elasticsearch.TransportVersion;
import org.elasticsearch.common.io.stream.BytesStreamOutput;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.index.Index;
import org.elasticsearch.index.shard.ShardId;
import org.eslm.WireTesting;
import org.junit.jupiter.api.Test;

/** The replication batch on the wire. */
class ReplicationWireTest {
    @Test
    void replicationBatchesRoundTripWithTheirShardEpochAndPayload() throws IOException {
        Random r = new Random(12);
        for (int i = 0; i < 50; i++) {
            ShardId shard = new ShardId(new Index(".locks", WireTesting.string(r)), r.nextInt(1024));
            var batch = new LockReplicationAction.Batch(
                    shard, r.nextLong(0, Long.MAX_VALUE), r.nextBoolean(), "{\"delta\":" + WireTesting.string(r) + "}");
            // To a peer of this build's transport version, and to the oldest a peer may speak (a
            // rolling upgrade from 8.19): Elasticsearch gates ReplicationRequest's own fields, ours
            // follow them unchanged.
            for (TransportVersion version : List.of(TransportVersion.current(), WireTesting.OLDEST_PEER)) {
                BytesStreamOutput out = new BytesStreamOutput();
                out.setTransportVersion(version);
                batch.writeTo(out);
                StreamInput in = out.bytes().streamInput();
                in.setTransportVersion(version);
                var read = new LockReplicationAction.Batch(in);
                assertEquals(
                        List.of(batch.shardId(), batch.epoch, batch.full, batch.json),
                        List.of(read.shardId(), read.epoch, read.full, read.json),
                        version.toString());
                assertEquals(0, in.available(), version.toString());
            }
        }
    }
}
