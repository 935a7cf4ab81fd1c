package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.elasticsearch.cluster.metadata.ComposableIndexTemplate;
import org.elasticsearch.common.Strings;
import org.elasticsearch.core.TimeValue;
import org.eslm.core.BridgeJson;
import org.junit.jupiter.api.Test;

/** The lock history's index template, as this Elasticsearch version parses and writes it. */
class LockHistoryTest {

    @Test
    void theTemplateMakesADataStreamWithTheFieldsAndTheRetention() {
        ComposableIndexTemplate template = LockHistory.template(TimeValue.timeValueDays(3));
        assertEquals(java.util.List.of(LockHistory.DATA_STREAM), template.indexPatterns());
        assertNotNull(template.getDataStreamTemplate(), "a data stream template");
        Map<String, Object> written = BridgeJson.parse(Strings.toString(template));
        @SuppressWarnings("unchecked")
        Map<String, Object> body = (Map<String, Object>) written.get("template");
        @SuppressWarnings("unchecked")
        Map<String, Object> lifecycle = (Map<String, Object>) body.get("lifecycle");
        assertEquals("3d", lifecycle.get("data_retention"), written.toString());
        String mappings = written.toString();
        for (String field : new String[] {
            "@timestamp", "event", "key", "scope", "owner", "token", "waited_ms", "held_ms", "node", "reason"
        }) {
            assertTrue(mappings.contains(field + "={type="), field + " mapped: " + mappings);
        }
    }
}
