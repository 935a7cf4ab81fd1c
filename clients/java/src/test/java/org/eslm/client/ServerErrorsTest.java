package org.eslm.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.ServerErrors;
import org.junit.jupiter.api.Test;

/** Every error type of docs/API.md's Errors table has its own exception class. */
class ServerErrorsTest {
    private static final Pattern ROW = Pattern.compile("^\\| (\\d{3}) \\| `([a-z_]+)` \\|");

    @Test
    void everyDocumentedErrorTypeHasItsOwnClass() throws IOException {
        Path api = Path.of(System.getProperty("user.dir"))
                .resolve("../../docs/API.md")
                .normalize();
        List<String> lines = Files.readAllLines(api);
        int rows = 0;
        for (String line : lines) {
            Matcher row = ROW.matcher(line);
            if (!row.find()) {
                continue;
            }
            rows++;
            int status = Integer.parseInt(row.group(1));
            String type = row.group(2);
            assertTrue(ServerErrors.knows(type), "no class for " + type);
            LockException error = ServerErrors.of(status, type, "reason", Map.of());
            assertNotEquals(LockException.class, error.getClass(), type);
            assertEquals(type, error.type());
            assertEquals(status, error.status());
        }
        assertEquals(17, rows, "rows read from the Errors table of " + api);
    }
}
