package org.eslm.action;

import org.elasticsearch.common.io.stream.BytesStreamOutput;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.Writeable;
import org.elasticsearch.common.Strings;
import org.elasticsearch.xcontent.XContentParseException;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.xcontent.XContentParserConfiguration;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.eslm.service.LockMode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every request and response survives the transport wire; bodies parse strictly. */
class WireAndParsingTest {

    private static <T extends Writeable> T roundTrip(T value, Writeable.Reader<T> reader) throws IOException {
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            value.writeTo(out);
            try (StreamInput in = out.bytes().streamInput()) {
                return reader.read(in);
            }
        }
    }

    @Test
    void requestsAndResponsesRoundTrip() throws IOException {
        AcquireLockRequest acquire = new AcquireLockRequest("k/ü", "w-17", LockMode.SHARED);
        assertEquals(acquire, roundTrip(acquire, AcquireLockRequest::new));
        ReleaseLockRequest release = new ReleaseLockRequest("k", "w", 1L << 41);
        assertEquals(release, roundTrip(release, ReleaseLockRequest::new));
        ReleaseLockRequest noToken = new ReleaseLockRequest("k", "w", null);
        assertEquals(noToken, roundTrip(noToken, ReleaseLockRequest::new));
        GetLockRequest get = new GetLockRequest("k");
        assertEquals(get, roundTrip(get, GetLockRequest::new));

        AcquireLockResponse grant = new AcquireLockResponse("k", "w", LockMode.EXCLUSIVE, Long.MAX_VALUE, 3, true);
        assertEquals(grant, roundTrip(grant, AcquireLockResponse::new));
        ReleaseLockResponse released = new ReleaseLockResponse("k", "w", 42);
        assertEquals(released, roundTrip(released, ReleaseLockResponse::new));
        GetLockResponse info = new GetLockResponse("k", List.of(new GetLockResponse.Holder("w", LockMode.SHARED, 9, 100, "node-0")));
        assertEquals(info, roundTrip(info, GetLockResponse::new));
        NodeDiagnosticsResponse diag = new NodeDiagnosticsResponse("id", "n", Map.of("version", "0.1.0"), Map.of("held_keys", 3));
        assertEquals(diag, roundTrip(diag, NodeDiagnosticsResponse::new));
    }

    @Test
    void grantRendersTheDocumentedFields() {
        String json = Strings.toString(new AcquireLockResponse("k", "w", LockMode.EXCLUSIVE, 1099511627777L, 0, false));
        assertEquals(
            "{\"acquired\":true,\"key\":\"k\",\"owner\":\"w\",\"mode\":\"exclusive\",\"fencing_token\":1099511627777,"
                + "\"waited_ms\":0,\"reentrant\":false}",
            json
        );
    }

    private static XContentParser parser(String json) throws IOException {
        return JsonXContent.jsonXContent.createParser(XContentParserConfiguration.EMPTY, json);
    }

    @Test
    void acquireBodyParsesStrictly() throws IOException {
        AcquireLockRequest r = AcquireLockRequest.fromXContent("k", parser("{\"owner\":\"w\",\"mode\":\"shared\"}"));
        assertEquals(LockMode.SHARED, r.mode());
        assertEquals(LockMode.EXCLUSIVE, AcquireLockRequest.fromXContent("k", parser("{\"owner\":\"w\"}")).mode());

        XContentParseException unknown = assertThrows(
            XContentParseException.class,
            () -> AcquireLockRequest.fromXContent("k", parser("{\"owner\":\"w\",\"ownr\":1}"))
        );
        assertTrue(unknown.getMessage().contains("unknown field [ownr]"), unknown.getMessage());

        IllegalArgumentException missing = assertThrows(
            IllegalArgumentException.class,
            () -> AcquireLockRequest.fromXContent("k", parser("{}"))
        );
        assertEquals("[owner] is required", missing.getMessage());

        XContentParseException badMode = assertThrows(
            XContentParseException.class,
            () -> AcquireLockRequest.fromXContent("k", parser("{\"owner\":\"w\",\"mode\":\"x\"}"))
        );
        assertTrue(badMode.getMessage().contains("failed to parse field [mode]"), badMode.getMessage());
        assertTrue(badMode.getCause().getMessage().startsWith("[mode] must be one of"), badMode.getCause().getMessage());
    }

    @Test
    void releaseBodyRejectsNegativeTokens() throws IOException {
        IllegalArgumentException e = assertThrows(
            IllegalArgumentException.class,
            () -> ReleaseLockRequest.fromXContent("k", parser("{\"owner\":\"w\",\"fencing_token\":-1}"))
        );
        assertTrue(e.getMessage().startsWith("[fencing_token]"), e.getMessage());
    }
}
