package org.eslm.replication;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The on-disk format of a partition's state log (docs/ARCHITECTURE.md "The state log"), as
 * etcd's WAL and Elasticsearch's {@code MetadataStateFormat} frame theirs: a header naming the
 * format, then one framed record per batch, each with its length and CRC32C checksums.
 *
 * <pre>
 * header  "ESLMLOG\n" (8 bytes) | format (int32) | CRC32C of the 12 bytes before (int32)
 * record  length (int32) | CRC32C of the payload (int32) | CRC32C of the 8 bytes before (int32)
 *         | payload: the batch's JSON, UTF-8, {@code length} bytes
 * </pre>
 *
 * <p>What reading decides, and why:
 * <ul>
 *   <li>A <b>torn tail</b> is what a crash in the middle of an append leaves: a prefix of the last
 *   record, possibly followed by zeros (pages the file system extended the file with but never
 *   wrote). It was never acknowledged (a batch is acknowledged only after it was forced to disk),
 *   so it is cut off before anything is appended after it ({@link #cut}).</li>
 *   <li>Anything else that does not check out — a bad checksum before the tail, a record header
 *   that names a length but whose checksum fails, a header of another kind of file — is
 *   <b>damage</b>: the copy is not used ({@link StateLogDamagedException}). Cutting there could
 *   drop acknowledged batches after it, which is the one thing the log exists to prevent.</li>
 *   <li>A format newer than this build's is not read either: it may mean something this build
 *   does not know.</li>
 *   <li>A file that starts with <code>{</code> is the format before this one (one JSON line per
 *   batch, no checksums); it is read as such, and its reader rewrites it in this format.</li>
 * </ul>
 */
final class StateLogFile {
    static final byte[] MAGIC = "ESLMLOG\n".getBytes(StandardCharsets.US_ASCII);
    /** The format this build writes; it reads this one and the unversioned line format before it. */
    static final int FORMAT = 1;

    static final int HEADER_BYTES = MAGIC.length + 8;
    static final int FRAME_BYTES = 12;
    /** No batch is this large; a length above it is damage, not a record. */
    static final int MAX_RECORD_BYTES = 1 << 30;

    private StateLogFile() {}

    /** The records of a log and what reading it found. */
    record Contents(List<String> records, long validBytes, long tornBytes, boolean legacy) {
        static final Contents EMPTY = new Contents(List.of(), 0, 0, false);
    }

    /**
     * Reads every whole record of {@code file}, oldest first; {@link Contents#EMPTY} when it does
     * not exist. Does not change the file (see {@link #cut}).
     *
     * @throws StateLogDamagedException when the file is damaged or of a newer format
     */
    static Contents read(Path file) throws IOException {
        if (Files.exists(file) == false) {
            return Contents.EMPTY;
        }
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file));
        if (bytes.remaining() > 0 && bytes.get(0) == '{') {
            return readLines(file, bytes);
        }
        if (bytes.remaining() < HEADER_BYTES) {
            if (isPrefix(bytes, header())) {
                return new Contents(List.of(), 0, bytes.remaining(), false); // created, header torn
            }
            throw new StateLogDamagedException(file, 0, "it is too short for a header and not the start of one");
        }
        readHeader(file, bytes);
        List<String> records = new ArrayList<>();
        while (bytes.hasRemaining()) {
            long at = bytes.position();
            String record = readRecord(file, bytes);
            if (record == null) {
                return new Contents(records, at, bytes.limit() - at, false);
            }
            records.add(record);
        }
        return new Contents(records, bytes.limit(), 0, false);
    }

    private static void readHeader(Path file, ByteBuffer bytes) throws IOException {
        byte[] magic = new byte[MAGIC.length];
        bytes.get(magic);
        int format = bytes.getInt();
        int crc = bytes.getInt();
        if (Arrays.equals(magic, MAGIC) == false || crc != crc(bytes.array(), 0, MAGIC.length + 4)) {
            throw new StateLogDamagedException(file, 0, "its header is not a lock state log's");
        }
        if (format > FORMAT) {
            throw new StateLogDamagedException(
                    file,
                    0,
                    "it is in format [" + format + "], newer than this build's [" + FORMAT
                            + "]: a newer version of the plugin wrote it");
        }
    }

    /**
     * The record at the buffer's position (which moves past it), or {@code null} when the rest of
     * the buffer is a torn tail.
     */
    private static String readRecord(Path file, ByteBuffer bytes) throws IOException {
        int at = bytes.position();
        if (bytes.remaining() < FRAME_BYTES) {
            return torn(bytes);
        }
        int length = bytes.getInt();
        int payloadCrc = bytes.getInt();
        int frameCrc = bytes.getInt();
        if (frameCrc != crc(bytes.array(), at, 8) || length < 0 || length > MAX_RECORD_BYTES) {
            bytes.position(at);
            if (zeros(bytes)) {
                return torn(bytes);
            }
            throw new StateLogDamagedException(file, at, "a record's header fails its checksum");
        }
        if (length > bytes.remaining()) {
            return torn(bytes); // a whole header naming more than was written: the append was cut short
        }
        int payloadAt = bytes.position();
        bytes.position(payloadAt + length);
        if (payloadCrc != crc(bytes.array(), payloadAt, length)) {
            if (bytes.hasRemaining() == false && length > 0 && bytes.get(bytes.limit() - 1) == 0) {
                bytes.position(at);
                return torn(bytes); // the last record, its end never written (zeros)
            }
            throw new StateLogDamagedException(file, at, "a record fails its checksum");
        }
        return decode(file, at, bytes.array(), payloadAt, length);
    }

    private static String torn(ByteBuffer bytes) {
        bytes.position(bytes.limit());
        return null;
    }

    /** The format before this one: one JSON line per batch; a last line without its newline is torn. */
    private static Contents readLines(Path file, ByteBuffer bytes) throws IOException {
        String text = decode(file, 0, bytes.array(), 0, bytes.remaining());
        int end = text.lastIndexOf('\n') + 1;
        List<String> records = new ArrayList<>();
        for (String line : text.substring(0, end).split("\n")) {
            if (line.isEmpty() == false) {
                records.add(line);
            }
        }
        long valid = text.substring(0, end).getBytes(StandardCharsets.UTF_8).length;
        return new Contents(records, valid, bytes.remaining() - valid, true);
    }

    /** Cuts {@code file} down to its whole records (a torn tail is dropped) and forces that to disk. */
    static void cut(Path file, Contents contents) throws IOException {
        if (contents.tornBytes() == 0) {
            return;
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(contents.validBytes());
            channel.force(true);
        }
    }

    /** Opens {@code file} for appending, writing (and forcing) the header when it is new or empty. */
    static FileChannel openForAppend(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        FileChannel channel =
                FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        if (channel.size() == 0) {
            writeFully(channel, header());
            channel.force(true);
            fsyncFolder(file.getParent());
        }
        return channel;
    }

    /** Appends one record (not forced: the caller decides when). */
    static void append(FileChannel channel, String record) throws IOException {
        writeFully(channel, frame(record));
    }

    /**
     * Replaces {@code file}, atomically and durably, by a log of the one record {@code record} (a
     * whole state): written to a temporary file, forced, moved over {@code file}, and the folder
     * forced, as {@code MetadataStateFormat} writes Elasticsearch's own state files. A crash at
     * any point leaves either the old log or the new one, whole. A temporary file that could not be
     * written whole (a full disk) is removed, so that it does not hold on to the space.
     */
    static void replace(Path file, String record) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.createDirectories(file.getParent());
        try (FileChannel out = FileChannel.open(
                tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            writeFully(out, header());
            writeFully(out, frame(record));
            out.force(true);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        fsyncFolder(file.getParent());
    }

    static ByteBuffer header() {
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES);
        header.put(MAGIC).putInt(FORMAT);
        header.putInt(crc(header.array(), 0, MAGIC.length + 4));
        return header.flip();
    }

    static ByteBuffer frame(String record) {
        byte[] payload = record.getBytes(StandardCharsets.UTF_8);
        ByteBuffer frame = ByteBuffer.allocate(FRAME_BYTES + payload.length);
        frame.putInt(payload.length).putInt(crc(payload, 0, payload.length));
        frame.putInt(crc(frame.array(), 0, 8));
        frame.put(payload);
        return frame.flip();
    }

    private static int crc(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }

    private static boolean zeros(ByteBuffer bytes) {
        for (int i = bytes.position(); i < bytes.limit(); i++) {
            if (bytes.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean isPrefix(ByteBuffer bytes, ByteBuffer of) {
        return bytes.remaining() <= of.remaining()
                && of.slice(0, bytes.remaining()).equals(bytes);
    }

    private static String decode(Path file, long at, byte[] bytes, int offset, int length) throws IOException {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes, offset, length))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new StateLogDamagedException(file, at, "a record is not UTF-8 text");
        }
    }

    private static void writeFully(FileChannel channel, ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
    }

    static void fsyncFolder(Path folder) throws IOException {
        try (FileChannel dir = FileChannel.open(folder, StandardOpenOption.READ)) {
            dir.force(true);
        }
    }
}
