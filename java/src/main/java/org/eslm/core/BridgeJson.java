package org.eslm.core;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.elasticsearch.common.Strings;
import org.elasticsearch.common.xcontent.XContentHelper;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.XContentType;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.eslm.bridge.BridgeField;

/**
 * JSON text to and from maps, for the bridge: the core takes and answers JSON objects. Arguments
 * stay maps until the owner node calls the core, so each request's JSON is written once.
 */
public final class BridgeJson {
    private BridgeJson() {}

    /** A JSON object as a map. */
    public static Map<String, Object> parse(String json) {
        return XContentHelper.convertToMap(JsonXContent.jsonXContent, json, true);
    }

    /** A JSON object the core wrote and {@link #parse} read (a REST body, docs/API.md), as the map it is. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(Object parsed) {
        return (Map<String, Object>) parsed;
    }

    /** JSON text of a map. */
    public static String toJson(Map<String, ?> map) {
        try (XContentBuilder builder = JsonXContent.contentBuilder()) {
            builder.map(map);
            return Strings.toString(builder);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** JSON text of a parsed JSON value (an object, as {@link #parse} answers, or any other value). */
    public static String valueToJson(Object value) {
        try (XContentBuilder builder = JsonXContent.contentBuilder()) {
            builder.value(value);
            return Strings.toString(builder);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A replication batch as the core's {@code STANDBY_APPLY} takes it (rust/lock-jni
     * {@code ops/replication.rs}, {@code Batch}): {@code {"full": <FullState>}} or
     * {@code {"delta": <PartitionDelta>}}, the body being a parsed core answer.
     */
    public static String batch(boolean full, Object body) {
        return toJson((full ? BridgeField.FULL : BridgeField.DELTA).of(body));
    }

    /** {@code {"<field>": <json>}}, the value being JSON text already (a state, as the core wrote it). */
    public static String wrap(BridgeField field, String json) {
        try (XContentBuilder builder = JsonXContent.contentBuilder()) {
            builder.startObject();
            builder.rawField(
                    field.key(), new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)), XContentType.JSON);
            builder.endObject();
            return Strings.toString(builder);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
