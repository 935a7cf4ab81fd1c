package org.eslm.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state log's format (docs/ARCHITECTURE.md "The state log"): what a crash leaves is cut off,
 * anything else that does not check out refuses the log, and nothing acknowledged is dropped.
 */
class StateLogFileTest {
    private static final List<String> BATCHES = List.of(
            "{\"full\":{\"seq\":1}}", "{\"delta\":{\"seq\":2,\"owner\":\"wörker\"}}", "{\"delta\":{\"seq\":3}}");

    @TempDir
    Path dir;

    private Path written(List<String> records) throws IOException {
        Path file = dir.resolve("_state").resolve(ShardStateLog.FILE_NAME);
        try (FileChannel channel = StateLogFile.openForAppend(file)) {
            for (String record : records) {
                StateLogFile.append(channel, record);
            }
        }
        return file;
    }

    private static int frameBytes(String record) {
        return StateLogFile.FRAME_BYTES + record.getBytes(StandardCharsets.UTF_8).length;
    }

    @Test
    void recordsComeBackInOrderAndAMissingLogIsEmpty() throws IOException {
        assertEquals(StateLogFile.Contents.EMPTY, StateLogFile.read(dir.resolve("none")));
        Path file = written(BATCHES);
        StateLogFile.Contents contents = StateLogFile.read(file);
        assertEquals(BATCHES, contents.records());
        assertEquals(Files.size(file), contents.validBytes());
        assertEquals(0, contents.tornBytes());
        assertFalse(contents.legacy());
    }

    @Test
    void everyPrefixOfTheLastAppendIsATornTailThatIsCutBeforeTheNextAppend() throws IOException {
        Path file = written(BATCHES);
        byte[] whole = Files.readAllBytes(file);
        int lastStarts = whole.length - frameBytes(BATCHES.get(2));
        for (int cutAt = lastStarts + 1; cutAt < whole.length; cutAt++) {
            Files.write(file, Arrays.copyOf(whole, cutAt));
            StateLogFile.Contents contents = StateLogFile.read(file);
            assertEquals(BATCHES.subList(0, 2), contents.records(), "cut at " + cutAt);
            assertEquals(lastStarts, contents.validBytes());
            assertEquals(cutAt - lastStarts, contents.tornBytes());
        }
        StateLogFile.cut(file, StateLogFile.read(file));
        assertEquals(lastStarts, Files.size(file));
        try (FileChannel channel = StateLogFile.openForAppend(file)) {
            StateLogFile.append(channel, "{\"delta\":{\"seq\":3,\"again\":true}}");
        }
        assertEquals(
                List.of(BATCHES.get(0), BATCHES.get(1), "{\"delta\":{\"seq\":3,\"again\":true}}"),
                StateLogFile.read(file).records(),
                "the record appended after the cut is whole, not glued to the torn one");
    }

    @Test
    void aLastRecordWhoseEndWasNeverWrittenIsTorn() throws IOException {
        Path file = written(BATCHES);
        byte[] whole = Files.readAllBytes(file);
        byte[] bytes = whole.clone();
        Arrays.fill(bytes, bytes.length - 5, bytes.length, (byte) 0);
        Files.write(file, bytes);
        assertEquals(BATCHES.subList(0, 2), StateLogFile.read(file).records());

        byte[] extended = Arrays.copyOf(whole, whole.length + 64);
        Files.write(file, extended);
        StateLogFile.Contents contents = StateLogFile.read(file);
        assertEquals(BATCHES, contents.records(), "zeros past the last record: a write that never came");
        assertEquals(64, contents.tornBytes());
    }

    @Test
    void aDamagedByteAnywhereBeforeTheTailRefusesTheLog() throws IOException {
        Path file = written(BATCHES);
        byte[] whole = Files.readAllBytes(file);
        int secondStarts = StateLogFile.HEADER_BYTES + frameBytes(BATCHES.get(0));
        for (int at : new int[] {
            3, // the header's magic
            StateLogFile.HEADER_BYTES + 1, // the first record's length
            StateLogFile.HEADER_BYTES + StateLogFile.FRAME_BYTES + 4, // the first record's payload
            secondStarts + 9, // the second record's header checksum
            whole.length - 3 // inside the last record: not a torn write, its end was written
        }) {
            byte[] damaged = whole.clone();
            damaged[at] ^= 0x10;
            Files.write(file, damaged);
            StateLogDamagedException e = assertThrows(StateLogDamagedException.class, () -> StateLogFile.read(file));
            assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
            assertEquals(file, e.file());
        }
    }

    /**
     * Why a log whose append failed is never appended to again (ShardStateLog, docs/RELIABILITY.md
     * "Disk faults"): a record cut short by a full disk, followed by the next batch's whole record,
     * is damage, not a torn tail, and would refuse the copy at the next restart.
     */
    @Test
    void aRecordCutShortByAFullDiskThenAnotherAppendedIsDamage() throws IOException {
        Path file = written(BATCHES.subList(0, 2));
        byte[] partial = Arrays.copyOf(StateLogFile.frame(BATCHES.get(2)).array(), 7);
        Files.write(file, partial, java.nio.file.StandardOpenOption.APPEND);
        assertEquals(7, StateLogFile.read(file).tornBytes(), "alone, it is a torn tail");
        try (FileChannel channel = FileChannel.open(file, java.nio.file.StandardOpenOption.APPEND)) {
            StateLogFile.append(channel, BATCHES.get(2));
        }
        assertThrows(StateLogDamagedException.class, () -> StateLogFile.read(file));
    }

    @Test
    void aNewerFormatIsNotRead() throws IOException {
        Path file = written(BATCHES);
        byte[] bytes = Files.readAllBytes(file);
        java.nio.ByteBuffer header = java.nio.ByteBuffer.wrap(bytes, 0, StateLogFile.HEADER_BYTES);
        header.putInt(StateLogFile.MAGIC.length, StateLogFile.FORMAT + 1);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(bytes, 0, StateLogFile.MAGIC.length + 4);
        header.putInt(StateLogFile.MAGIC.length + 4, (int) crc.getValue());
        Files.write(file, bytes);
        StateLogDamagedException e = assertThrows(StateLogDamagedException.class, () -> StateLogFile.read(file));
        assertTrue(e.getMessage().contains("newer than this build's [1]"), e.getMessage());
    }

    @Test
    void aHeaderCutShortIsAnEmptyLogAndAnythingElseThatShortIsNot() throws IOException {
        Path file = dir.resolve(ShardStateLog.FILE_NAME);
        Files.write(file, Arrays.copyOf(StateLogFile.MAGIC, 5));
        StateLogFile.Contents contents = StateLogFile.read(file);
        assertEquals(List.of(), contents.records());
        assertEquals(5, contents.tornBytes());
        StateLogFile.cut(file, contents);
        try (FileChannel channel = StateLogFile.openForAppend(file)) {
            StateLogFile.append(channel, BATCHES.get(0));
        }
        assertEquals(BATCHES.subList(0, 1), StateLogFile.read(file).records());

        Files.write(file, "nonsense".getBytes(StandardCharsets.US_ASCII));
        assertThrows(StateLogDamagedException.class, () -> StateLogFile.read(file));
    }

    @Test
    void theLineFormatBeforeThisOneIsReadWithItsTornLastLine() throws IOException {
        Path file = dir.resolve(ShardStateLog.FILE_NAME);
        String text = BATCHES.get(0) + "\n" + BATCHES.get(1) + "\n" + "{\"delta\":{\"se";
        Files.writeString(file, text);
        StateLogFile.Contents contents = StateLogFile.read(file);
        assertTrue(contents.legacy());
        assertEquals(BATCHES.subList(0, 2), contents.records());
        assertEquals("{\"delta\":{\"se".length(), contents.tornBytes());
    }

    @Test
    void aCheckpointReplacesTheLogWholeAndLeavesNoTemporaryFile() throws IOException {
        Path file = written(BATCHES);
        StateLogFile.replace(file, "{\"full\":{\"seq\":3}}");
        assertEquals(List.of("{\"full\":{\"seq\":3}}"), StateLogFile.read(file).records());
        try (var files = Files.list(file.getParent())) {
            assertEquals(List.of(file), files.toList());
        }
    }
}
