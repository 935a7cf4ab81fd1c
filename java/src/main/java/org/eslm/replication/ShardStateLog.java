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
 *
 * <p>A write or a force that fails (a full disk, an I/O error: docs/RELIABILITY.md "Disk faults")
 * fails its batch, which is then not acknowledged, and leaves the file untrusted: after a failed
 * append part of the record may be on disk, and after a failed fsync Linux may have dropped the
 * unwritten pages while a later fsync succeeds. Nothing is appended to it again: the next batch
 * replaces the log by a checkpoint of the whole state (a new file, forced, moved over it), and
 * until one succeeds {@link #failure} names the error, which the partition's 503 answers carry.
 */
public final class ShardStateLog {
    private static final Logger logger = LogManager.getLogger(ShardStateLog.class);
    static final String FILE_NAME = "locks-batches.log";
    /** Past this size the log is replaced by a checkpoint of the whole state. */
    static final long CHECKPOINT_BYTES = 8L * 1024 * 1024;

    private final Map<ShardId, FileChannel> open = new ConcurrentHashMap<>();
    /** Why each untrusted log failed (see the class comment); its next write is a checkpoint. */
    private final Map<ShardId, String> untrusted = new ConcurrentHashMap<>();

    private final StateLogFaults faults;

    /** A node's logs, with the test-only faults of its native library's build. */
    public static ShardStateLog forNativeBuild(String nativeVersion) {
        return new ShardStateLog(StateLogFaults.current(nativeVersion));
    }

    ShardStateLog(StateLogFaults faults) {
        this.faults = faults;
    }

    ShardStateLog() {
        this(StateLogFaults.NONE);
    }

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
        closeChannel(shard.shardId());
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
            faults.rewritten(file, contents.validBytes());
        }
        return contents;
    }

    /**
     * Appends one batch and forces it to disk; past {@link #CHECKPOINT_BYTES}, or when the log is
     * untrusted, replaces the log by a checkpoint of {@code wholeState} (the state including this
     * batch).
     *
     * @throws UncheckedIOException when the batch could not be persisted: it must not be acknowledged
     */
    public void append(IndexShard shard, String batchJson, Supplier<String> wholeState) {
        write(shard, batchJson, wholeState);
        force(shard);
    }

    /**
     * Appends one batch without waiting for the disk (see {@link #force}); past
     * {@link #CHECKPOINT_BYTES}, or when an earlier write or force failed, replaces the log by a
     * checkpoint of {@code wholeState}, durably.
     *
     * @throws UncheckedIOException when the batch could not be written: it must not be acknowledged
     */
    public synchronized void write(IndexShard shard, String batchJson, Supplier<String> wholeState) {
        ShardId shardId = shard.shardId();
        try {
            if (untrusted.containsKey(shardId)) {
                rewrite(shard, wholeState);
                return;
            }
            FileChannel channel = channel(shard);
            StateLogFile.append(channel, batchJson);
            if (channel.size() > CHECKPOINT_BYTES) {
                String whole = wholeState.get();
                if (whole != null) {
                    checkpoint(shard, whole);
                }
            }
        } catch (IOException e) {
            throw failed(shard, e);
        }
    }

    /** The untrusted log of {@code shard} replaced by a checkpoint of {@code wholeState}. */
    private void rewrite(IndexShard shard, Supplier<String> wholeState) throws IOException {
        String whole = wholeState.get();
        if (whole == null) {
            throw new IOException("no whole state to replace the log with");
        }
        checkpoint(shard, whole);
        logger.info(
                "lock state log [{}] replaced by a checkpoint of the whole state after [{}]",
                file(shard),
                untrusted.get(shard.shardId()));
        untrusted.remove(shard.shardId());
    }

    /** Forces what {@link #write} appended to {@code shard}'s log to disk. */
    public void force(IndexShard shard) {
        FileChannel channel = open.get(shard.shardId());
        if (channel == null) {
            return; // replaced by a checkpoint (forced) or closed meanwhile
        }
        if (faults.skipsForce()) {
            return; // the test-only flaw: acknowledged, never forced
        }
        try {
            long length;
            synchronized (this) {
                length = channel.size(); // whole records only: appends hold this lock
            }
            channel.force(false);
            faults.forced(file(shard), length);
        } catch (ClosedChannelException e) {
            // closed by a checkpoint, which forced the whole state, or by the shard closing
        } catch (IOException e) {
            throw failed(shard, e);
        }
    }

    /**
     * Why {@code partition}'s log on this node cannot be trusted since its last write or force
     * failed (the error, naming the file), or {@code null}: the reason a 503 gives until a batch is
     * persisted again.
     */
    public String failure(int partition) {
        for (Map.Entry<ShardId, String> e : untrusted.entrySet()) {
            if (e.getKey().id() == partition) {
                return e.getValue();
            }
        }
        return null;
    }

    /** Marks {@code shard}'s log untrusted and closes it; answers the batch's failure. */
    private synchronized UncheckedIOException failed(IndexShard shard, IOException e) {
        Path file = file(shard);
        String why = "cannot write its state log [" + file + "]: "
                + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName());
        if (untrusted.put(shard.shardId(), why) == null) {
            logger.warn(
                    () -> "lock state log [" + file + "] failed; its batch is not acknowledged, and the next batch"
                            + " replaces the log by a checkpoint of the whole state",
                    e);
        }
        closeChannel(shard.shardId());
        return new UncheckedIOException("lock partition [" + shard.shardId().id() + "] " + why, e);
    }

    /**
     * Replaces {@code shard}'s log, atomically and durably, by one record: {@code wholeState}. Also
     * how a log of the format before this one is rewritten once it has been read.
     */
    public synchronized void checkpoint(IndexShard shard, String wholeState) throws IOException {
        closeChannel(shard.shardId());
        Path file = file(shard);
        StateLogFile.replace(file, wholeState);
        untrusted.remove(shard.shardId());
        faults.rewritten(file, Files.size(file));
    }

    /** Deletes {@code shard}'s log: the copy starts over from the primary's whole state. */
    public synchronized void delete(IndexShard shard) {
        close(shard.shardId());
        faults.deleted(file(shard));
        try {
            Files.deleteIfExists(file(shard));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete lock batches of " + shard.shardId(), e);
        }
    }

    /** Closes {@code shardId}'s log file (the shard is closing on this node): what failed is forgotten. */
    public synchronized void close(ShardId shardId) {
        untrusted.remove(shardId);
        closeChannel(shardId);
    }

    private synchronized void closeChannel(ShardId shardId) {
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
            faults.rewritten(file, channel.size()); // whole records, or the header just forced
        }
        return channel;
    }
}
