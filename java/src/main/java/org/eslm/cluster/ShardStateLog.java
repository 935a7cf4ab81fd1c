package org.eslm.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.index.shard.IndexShard;
import org.elasticsearch.index.shard.ShardId;

/**
 * The batches of a partition, persisted in its shard's folder (docs/ARCHITECTURE.md
 * "Replication"): one line per batch ({@code {"full": ..}} or {@code {"delta": ..}}), appended
 * and forced to disk before the batch is acknowledged, so a node restarted with this copy (a
 * full cluster restart, or one node with no replica) rebuilds every holder it acknowledged.
 * When the file grows past {@link #ROTATE_BYTES} it is replaced, atomically, by one line with
 * the whole state.
 *
 * <p>The file is {@code <shard>/_state/locks-batches.log}, beside Elasticsearch's own shard
 * state (which only reads and cleans its own file names). Peer recovery does not copy it: a
 * copy recovering from another starts it afresh from the primary's whole state.
 */
public final class ShardStateLog {
    private static final Logger logger = LogManager.getLogger(ShardStateLog.class);
    static final String FILE_NAME = "locks-batches.log";
    /** Past this size the log is rewritten as one whole state. */
    static final long ROTATE_BYTES = 8L * 1024 * 1024;

    private final Map<ShardId, FileChannel> open = new ConcurrentHashMap<>();

    /** Where {@code shard}'s log lives. */
    static Path file(IndexShard shard) {
        return shard.shardPath().getShardStatePath().resolve("_state").resolve(FILE_NAME);
    }

    /**
     * Appends one batch and forces it to disk; past {@link #ROTATE_BYTES}, rewrites the log as
     * {@code wholeState} (the state including this batch).
     */
    public void append(IndexShard shard, String batchJson, Supplier<String> wholeState) {
        write(shard, batchJson, wholeState);
        force(shard);
    }

    /**
     * Appends one batch without waiting for the disk (see {@link #force}); past
     * {@link #ROTATE_BYTES}, rewrites the log as {@code wholeState}, durably.
     */
    public synchronized void write(IndexShard shard, String batchJson, Supplier<String> wholeState) {
        try {
            FileChannel channel = channel(shard);
            write(channel, batchJson);
            if (channel.size() > ROTATE_BYTES) {
                rotate(shard, wholeState.get());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot persist lock batch of " + shard.shardId(), e);
        }
    }

    /** Forces what {@link #write} appended to {@code shard}'s log to disk. */
    public void force(IndexShard shard) {
        FileChannel channel = open.get(shard.shardId());
        if (channel == null) {
            return; // rotated (and forced) or closed meanwhile
        }
        try {
            channel.force(false);
        } catch (ClosedChannelException e) {
            // closed by a rotation, which forced the whole state, or by the shard closing
        } catch (IOException e) {
            throw new UncheckedIOException("cannot persist lock batch of " + shard.shardId(), e);
        }
    }

    /** Every complete batch line of {@code shard}'s log, oldest first (a torn last line is dropped). */
    public List<String> read(IndexShard shard) {
        Path file = file(shard);
        if (Files.exists(file) == false) {
            return List.of();
        }
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8);
            List<String> lines = new ArrayList<>(List.of(text.split("\n", -1)));
            lines.remove(lines.size() - 1); // after the last newline: empty, or a line torn by a crash
            lines.removeIf(String::isEmpty);
            return lines;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read lock batches of " + shard.shardId(), e);
        }
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

    private FileChannel channel(IndexShard shard) throws IOException {
        FileChannel channel = open.get(shard.shardId());
        if (channel == null || channel.isOpen() == false) {
            Path file = file(shard);
            Files.createDirectories(file.getParent());
            channel = FileChannel.open(
                    file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
            open.put(shard.shardId(), channel);
        }
        return channel;
    }

    private void rotate(IndexShard shard, String wholeState) throws IOException {
        if (wholeState == null) {
            return;
        }
        Path file = file(shard);
        Path tmp = file.resolveSibling(FILE_NAME + ".tmp");
        try (FileChannel out = FileChannel.open(
                tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            write(out, wholeState);
            out.force(true);
        }
        close(shard.shardId());
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    private static void write(FileChannel channel, String line) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
    }
}
