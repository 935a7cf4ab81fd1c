package org.eslm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.elasticsearch.cluster.metadata.ComponentTemplate;
import org.elasticsearch.cluster.metadata.ComposableIndexTemplate;
import org.elasticsearch.common.Strings;
import org.elasticsearch.core.TimeValue;
import org.eslm.core.BridgeJson;
import org.junit.jupiter.api.Test;

/** The lock history's templates, as this Elasticsearch version parses and writes them. */
class LockHistoryTest {

    @Test
    void theIndexTemplateComposesThePluginsTemplatesThenTheUsersWhichMayBeMissing() {
        ComposableIndexTemplate template = LockHistory.template();
        assertEquals(List.of(LockHistory.DATA_STREAM), template.indexPatterns());
        assertNotNull(template.getDataStreamTemplate(), "a data stream template");
        assertEquals(
                List.of("locks-history@mappings", "locks-history@settings", "locks-history@custom"),
                template.composedOf());
        assertEquals(List.of("locks-history@custom"), template.getIgnoreMissingComponentTemplates());
        assertEquals(LockHistory.FORMAT, template.version());
        assertNull(template.template(), "nothing of its own: the user's @custom may change anything");
    }

    @Test
    void theSettingsCarryTheRetention() {
        Map<String, Object> written = written(LockHistory.settings(TimeValue.timeValueDays(3)));
        Map<String, Object> lifecycle = child(child(written, "template"), "lifecycle");
        assertEquals("3d", lifecycle.get("data_retention"), written.toString());
        assertEquals(LockHistory.FORMAT, ((Number) written.get("version")).longValue());
    }

    @Test
    void theMappingsAreTheCommonSchemasAndTheLocksOwn() {
        Map<String, Object> properties =
                child(child(child(written(LockHistory.mappings()), "template"), "mappings"), "properties");
        assertEquals("date", child(properties, "@timestamp").get("type"));
        for (String[] field : new String[][] {
            {"event.action", "keyword"}, {"event.duration", "long"}, {"event.reason", "keyword"},
            {"event.kind", "keyword"}, {"event.dataset", "keyword"}, {"event.module", "keyword"},
            {"ecs.version", "keyword"}, {"service.node.name", "keyword"}, {"lock.key", "keyword"},
            {"lock.owner", "keyword"}, {"lock.fencing_token", "long"}, {"lock.wait.duration", "long"},
            {"lock.partition", "integer"}
        }) {
            Map<String, Object> at = properties;
            String[] path = field[0].split("\\.");
            for (int i = 0; i < path.length - 1; i++) {
                at = child(child(at, path[i]), "properties");
            }
            assertEquals(field[1], child(at, path[path.length - 1]).get("type"), field[0]);
        }
    }

    @Test
    void aWriteIndexOfTheFlatNamesIsAnOlderShape() {
        assertTrue(LockHistory.olderShape(Map.of("properties", Map.of("event", Map.of("type", "keyword")))));
        Map<String, Object> current = child(child(written(LockHistory.mappings()), "template"), "mappings");
        assertFalse(LockHistory.olderShape(current));
        assertFalse(LockHistory.olderShape(Map.of()), "a mapping of the user's own is left alone");
    }

    private static Map<String, Object> written(ComponentTemplate template) {
        return BridgeJson.parse(Strings.toString(template));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> child(Map<String, Object> map, String key) {
        Object value = map.get(key);
        assertNotNull(value, key + " in " + map);
        return (Map<String, Object>) value;
    }
}
