package org.eslm.replication;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.index.shard.ShardId;

/**
 * The batches of a partition, persisted in its shard's folder (docs/ARCHITECTURE.md "The state
 * log"): one checksummed record per batch ({@code {"full": ..}} or {@code {"delta": ..}}, framed
 * by {@link StateLogFile}), appended and forced to disk before the batch is acknowledged, so a
 * node restarted with this copy (a full cluster restart, or one node with no replica) rebuilds
 * every holder it acknowledged. When the file grows past {@link #CHECKPOINT_BYTES} it is replaced,
 * atomically, by a checkpoint: one record with the whole state, so a restart replays a bounded log.
 *
 * <p>The file is {@code <shard>/_state/locks-batches.log}, beside Elasticsearch's own shard
 * state (which only reads and cleans its own file names). Peer recovery does not copy it: a
 * copy recovering from another starts it afresh from the primary's whole state.
 */
public final class ShardStateLog {
    private static final Logger logger = LogManager.getLogger(ShardStateLog.class);
    static final String FILE_NAME = "locks-batches.log";
    /** Past this size the log is replaced by a checkpoint of the whole state. */
    static final long CHECKPOINT_BYTES = 8L * 1024 * 1024;

    private final Map<ShardId, FileChannel> open = new ConcurrentHashMap<>();

    /** Where {@code shard}'s log lives. */
    static Path file(IndexShard shard) {
        return shard.shardPath().getShardStatePath().resolve("_state").resolve(FILE_NAME);
    }

    /**
     * The records of {@code shard}'s log, oldest first, for rebuilding its standby (a restart). A
     * torn tail — the last append, cut short by a crash and never acknowledged — is cut off the
     * file here, before anything can be appended after it.
     *
     * @throws StateLogDamagedException when the log is damaged or of a newer format: this copy
     *     must not be used
     */
    public synchronized StateLogFile.Contents restore(IndexShard shard) throws IOException {
        close(shard.shardId());
        Path file = file(shard);
        StateLogFile.Contents contents = StateLogFile.read(file);
        if (contents.tornBytes() > 0) {
            logger.warn(
                    "lock state log [{}]: cut off a torn tail of {} bytes after {} whole records (an append"
                            + " a crash interrupted; never acknowledged)",
                    file,
                    contents.tornBytes(),
                    contents.records().size());
            StateLogFile.cut(file, contents);
        }
        return contents;
    }

    /**
     * Appends one batch and forces it to disk; past {@link #CHECKPOINT_BYTES}, replaces the log by
     * a checkpoint of {@code wholeState} (the state including this batch).
     */
    public void append(IndexShard shard, String batchJson, Supplier<String> wholeState) {
        write(shard, batchJson, wholeState);
        force(shard);
    }

    /**
     * Appends one batch without waiting for the disk (see {@link #force}); past
     * {@link #CHECKPOINT_BYTES}, replaces the log by a checkpoint of {@code wholeState}, durably.
     */
    public synchronized void write(IndexShard shard, String batchJson, Supplier<String> wholeState) {
        try {
            FileChannel channel = channel(shard);
            StateLogFile.append(channel, batchJson);
            if (channel.size() > CHECKPOINT_BYTES) {
                String whole = wholeState.get();
                if (whole != null) {
                    checkpoint(shard, whole);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot persist lock batch of " + shard.shardId(), e);
        }
    }

    /** Forces what {@link #write} appended to {@code shard}'s log to disk. */
    public void force(IndexShard shard) {
        FileChannel channel = open.get(shard.shardId());
        if (channel == null) {
            return; // replaced by a checkpoint (forced) or closed meanwhile
        }
        try {
            channel.force(false);
        } catch (ClosedChannelException e) {
            // closed by a checkpoint, which forced the whole state, or by the shard closing
        } catch (IOException e) {
            throw new UncheckedIOException("cannot persist lock batch of " + shard.shardId(), e);
        }
    }

    /**
     * Replaces {@code shard}'s log, atomically and durably, by one record: {@code wholeState}. Also
     * how a log of the format before this one is rewritten once it has been read.
     */
    public synchronized void checkpoint(IndexShard shard, String wholeState) throws IOException {
        close(shard.shardId());
        StateLogFile.replace(file(shard), wholeState);
    }

    /** Deletes {@code shard}'s log: the copy starts over from the primary's whole state. */
    public synchronized void delete(IndexShard shard) {
        close(shard.shardId());
        try {
            Files.deleteIfExists(file(shard));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete lock batches of " + shard.shardId(), e);
        }
    }

    /** Closes {@code shardId}'s log file (the shard is closing on this node). */
    public synchronized void close(ShardId shardId) {
        FileChannel channel = open.remove(shardId);
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException e) {
                logger.debug("closing the lock batch log of " + shardId + " failed", e);
            }
        }
    }

    /**
     * The open log of {@code shard}. A log already on disk is checked first and a torn tail cut
     * off (normally {@link #restore} did both); one that is damaged, or still in the format before
     * this one, is refused: nothing may be appended after records that cannot be read back.
     */
    private FileChannel channel(IndexShard shard) throws IOException {
        FileChannel channel = open.get(shard.shardId());
        if (channel == null || channel.isOpen() == false) {
            Path file = file(shard);
            StateLogFile.Contents contents = StateLogFile.read(file);
            if (contents.legacy()) {
                throw new StateLogDamagedException(file, "it is in the format before this one and was never converted");
            }
            StateLogFile.cut(file, contents);
            channel = StateLogFile.openForAppend(file);
            open.put(shard.shardId(), channel);
        }
        return channel;
    }
}
