package org.eslm.service;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.elasticsearch.common.bytes.BytesReference;
import org.elasticsearch.common.io.stream.BytesStreamOutput;
import org.elasticsearch.common.xcontent.XContentHelper;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.xcontent.XContentParserConfiguration;
import org.elasticsearch.xcontent.XContentType;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.eslm.bridge.BridgeField;

/**
 * The core's answer to a listing ({@code LIST}, rust/lock-jni {@code ops/introspection.rs}) read
 * without building a map per lock: each listed lock keeps its JSON as the core wrote it (with the
 * {@code node} serving it), next to the three fields the listing is ordered by. The REST answer writes those
 * bytes as they are (docs/ARCHITECTURE.md "Listing"): building, copying and rendering a map per
 * lock cost ~5 KB of garbage per listed lock, which showed in the acquire tail latency of the
 * listing benchmark (bench/RESULTS.md, issue 13).
 */
public final class ListedLocks {
    private ListedLocks() {}

    /** Where a lock is in the listing's order: the three fields it is sorted by. */
    public interface Position {
        String key();

        String scope();

        String owner();
    }

    /** A place in the listing: the last lock a page vouches for, or a client's {@code after}. */
    public record Cursor(String key, String scope, String owner) implements Position {
        /** The cursor as the core's {@code ListCursor} JSON object, and as it is encoded for clients. */
        public Map<String, Object> toMap() {
            Map<String, Object> cursor = new LinkedHashMap<>();
            cursor.put(BridgeField.KEY.key(), key);
            cursor.put(BridgeField.SCOPE.key(), scope);
            cursor.put(BridgeField.OWNER.key(), owner);
            return cursor;
        }

        /** The cursor just at {@code position}. */
        public static Cursor at(Position position) {
            return new Cursor(position.key(), position.scope(), position.owner());
        }
    }

    /**
     * One held lock as listed.
     *
     * @param json the lock's JSON object, as the REST answer shows it
     */
    public record Lock(String key, String scope, String owner, BytesReference json) implements Position {
        /** The lock's fields as a map (for {@code _cat/locks}, which is not on a hot path). */
        public Map<String, Object> asMap() {
            return XContentHelper.convertToMap(json, true, XContentType.JSON).v2();
        }
    }

    /**
     * One partition's page.
     *
     * @param locks the partition's locks after the request's cursor, in listing order
     * @param next where the partition's following page starts; null when nothing after it matches
     */
    public record Page(int partition, List<Lock> locks, Cursor next) {}

    /** A parsed answer: the pages, and the envelope's events and next tick (delivered as for any call). */
    record Answer(List<Page> pages, Map<String, Object> envelope) {}

    /** Parses a {@code LIST} answer envelope. */
    static Answer parse(String envelopeJson) {
        try (XContentParser parser =
                JsonXContent.jsonXContent.createParser(XContentParserConfiguration.EMPTY, envelopeJson)) {
            List<Page> pages = List.of();
            Map<String, Object> rest = new LinkedHashMap<>();
            expect(parser.nextToken(), XContentParser.Token.START_OBJECT);
            while (parser.nextToken() == XContentParser.Token.FIELD_NAME) {
                String field = parser.currentName();
                parser.nextToken();
                if (field.equals(BridgeField.RESULT.key())) {
                    pages = pages(parser);
                } else {
                    rest.put(field, value(parser));
                }
            }
            return new Answer(pages, rest);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The value at the parser: the envelope's {@code events} (a list of objects) or {@code tick_in_ms}. */
    private static Object value(XContentParser parser) throws IOException {
        return switch (parser.currentToken()) {
            case START_ARRAY -> parser.list();
            case START_OBJECT -> parser.map();
            default -> parser.objectText();
        };
    }

    private static List<Page> pages(XContentParser parser) throws IOException {
        expect(parser.currentToken(), XContentParser.Token.START_ARRAY);
        List<Page> pages = new ArrayList<>();
        while (parser.nextToken() == XContentParser.Token.START_OBJECT) {
            pages.add(page(parser));
        }
        return pages;
    }

    private static Page page(XContentParser parser) throws IOException {
        int partition = -1;
        List<Lock> locks = new ArrayList<>();
        Cursor next = null;
        while (parser.nextToken() == XContentParser.Token.FIELD_NAME) {
            String field = parser.currentName();
            parser.nextToken();
            if (field.equals(BridgeField.PARTITION.key())) {
                partition = parser.intValue();
            } else if (field.equals(BridgeField.NEXT.key())) {
                next = parser.currentToken() == XContentParser.Token.VALUE_NULL ? null : cursor(parser);
            } else if (field.equals(BridgeField.LOCKS.key())) {
                locks = locks(parser);
            } else {
                parser.skipChildren();
            }
        }
        return new Page(partition, locks, next);
    }

    private static Cursor cursor(XContentParser parser) throws IOException {
        Map<String, String> fields = parser.mapStrings();
        return new Cursor(
                fields.get(BridgeField.KEY.key()),
                fields.get(BridgeField.SCOPE.key()),
                fields.get(BridgeField.OWNER.key()));
    }

    /**
     * A page's locks, copied one after another into one buffer by one builder (no map per lock);
     * each lock is a slice of that buffer.
     */
    private static List<Lock> locks(XContentParser parser) throws IOException {
        expect(parser.currentToken(), XContentParser.Token.START_ARRAY);
        List<Cursor> positions = new ArrayList<>();
        List<Integer> ends = new ArrayList<>();
        BytesStreamOutput out = new BytesStreamOutput();
        BytesReference all;
        try (XContentBuilder json = new XContentBuilder(JsonXContent.jsonXContent, out)) {
            while (parser.nextToken() == XContentParser.Token.START_OBJECT) {
                positions.add(copyLock(parser, json));
                json.flush();
                ends.add(Math.toIntExact(out.position()));
            }
            all = out.bytes();
        }
        List<Lock> locks = new ArrayList<>(positions.size());
        int start = 0;
        for (int i = 0; i < positions.size(); i++) {
            while (all.get(start) == ' ') {
                start++; // the separator the generator puts between top-level values
            }
            Cursor at = positions.get(i);
            locks.add(new Lock(at.key(), at.scope(), at.owner(), all.slice(start, ends.get(i) - start)));
            start = ends.get(i);
        }
        return locks;
    }

    /** Copies one lock object field by field, as a top-level value of {@code json}, noting its position. */
    private static Cursor copyLock(XContentParser parser, XContentBuilder json) throws IOException {
        String key = null;
        String scope = null;
        String owner = null;
        json.startObject();
        while (parser.nextToken() == XContentParser.Token.FIELD_NAME) {
            String field = parser.currentName();
            parser.nextToken();
            if (field.equals(BridgeField.KEY.key())) {
                json.field(field, key = parser.text());
            } else if (field.equals(BridgeField.SCOPE.key())) {
                json.field(field, scope = parser.text());
            } else if (field.equals(BridgeField.OWNER.key())) {
                json.field(field, owner = parser.text());
            } else {
                json.field(field).copyCurrentStructure(parser);
            }
        }
        json.endObject();
        return new Cursor(key, scope, owner);
    }

    private static void expect(XContentParser.Token actual, XContentParser.Token expected) {
        if (actual != expected) {
            throw new IllegalStateException(
                    "unexpected listing answer from the core: [" + actual + "] where [" + expected + "] belongs");
        }
    }
}
