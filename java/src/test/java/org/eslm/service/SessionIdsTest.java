package org.eslm.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.rest.RestStatus;
import org.eslm.core.SessionNotFoundException;
import org.junit.jupiter.api.Test;

/** Client session ids parse only in the form the cluster issues: {@code <partition>_<32 lowercase hex>}. */
class SessionIdsTest {
    private static final String HEX = "6f1c2a9e4b7d03518ce2f09a7b64d1e5";

    @Test
    void theIssuedFormParsesIntoPartitionAndCoreId() {
        assertEquals("0_" + HEX, SessionIds.global(0, HEX));
        assertEquals(0, SessionIds.partition("0_" + HEX));
        assertEquals(17, SessionIds.partition("17_" + HEX));
        assertEquals(1023, SessionIds.partition("1023_" + HEX));
        assertEquals(HEX, SessionIds.local("17_" + HEX));
        assertEquals("00000000000000000000000000000001", SessionIds.local("3_00000000000000000000000000000001"));
    }

    @Test
    void anyOtherSpellingIsAnUnknownSession() {
        for (String id : List.of(
                "",
                "_",
                "0_",
                HEX,
                "_" + HEX,
                "0_1099511627778",
                "0_" + HEX.substring(1),
                "0_" + HEX + "0",
                "0_" + HEX.toUpperCase(java.util.Locale.ROOT),
                "0_" + HEX.substring(0, 31) + "g",
                "0_" + HEX.substring(0, 31) + "\u00e9",
                "-1_" + HEX,
                "+1_" + HEX,
                "01_" + HEX,
                "00_" + HEX,
                "a_" + HEX,
                "12345_" + HEX,
                "0__" + HEX.substring(1),
                "0_" + HEX.substring(0, 16) + "_" + HEX.substring(17),
                " 0_" + HEX.substring(1))) {
            SessionNotFoundException e =
                    assertThrows(SessionNotFoundException.class, () -> SessionIds.local(id), "[" + id + "]");
            assertEquals(RestStatus.NOT_FOUND, e.status());
            assertEquals("session_not_found_exception", ElasticsearchException.getExceptionName(e));
            assertEquals(List.of(id), e.getMetadata("es.session"));
            assertEquals("session [" + id + "] does not exist or has expired", e.getMessage());
        }
    }
}
