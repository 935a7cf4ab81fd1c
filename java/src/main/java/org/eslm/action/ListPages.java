package org.eslm.action;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.elasticsearch.common.bytes.BytesArray;
import org.elasticsearch.common.bytes.BytesReference;
import org.elasticsearch.common.bytes.CompositeBytesReference;
import org.eslm.bridge.BridgeField;
import org.eslm.core.BridgeJson;
import org.eslm.service.ListedLocks;
import org.eslm.service.ListedLocks.Cursor;
import org.eslm.service.ListedLocks.Position;

/**
 * Merges the pages of held locks that each partition answered (rust/lock-core/src/table/listing.rs)
 * into one page of the cluster's listing, and turns cursors into the opaque {@code after} / {@code
 * next} strings of {@code GET /_locks} (docs/API.md, "GET /_locks").
 *
 * <p>Order: key, then scope ({@code key}, {@code tree}, {@code semaphore}, {@code election}: the core's order), then owner; keys and owners compare by
 * code point, which is the byte order of their UTF-8 that the core sorts by (not Java's UTF-16 order).
 *
 * <p>A partition's page says: every lock of that partition after the request's cursor and up to the
 * page's {@code next} is in it ({@code next} null: all of them). The merged page can therefore only
 * vouch for locks up to the smallest {@code next} of all partitions: locks beyond it are left out (the
 * following page lists them again) and that smallest {@code next}, or the last lock of a full page,
 * is where the following page starts.
 */
public final class ListPages {
    /** The scopes in the core's listing order (rust/lock-core/src/table/listing.rs, {@code SCOPES}). */
    private static final List<String> SCOPES = List.of("key", "tree", "semaphore", "election", "group");

    /** The order of the listing, over listed locks and cursors alike ({@code key}, {@code scope}, {@code owner}). */
    public static final Comparator<Position> ORDER = Comparator.comparing(Position::key, ListPages::compareUtf8)
            .thenComparingInt(p -> SCOPES.indexOf(p.scope()))
            .thenComparing(Position::owner, ListPages::compareUtf8);

    private static final BytesReference OPEN = new BytesArray("[");
    private static final BytesReference COMMA = new BytesArray(",");
    private static final BytesReference CLOSE = new BytesArray("]");

    private ListPages() {}

    /**
     * One merged page.
     *
     * @param locks at most {@code size} locks, in listing order
     * @param next where the following page starts; null at the end
     */
    public record Merged(List<ListedLocks.Lock> locks, Cursor next) {
        /** {@link #next} as the string a client passes back as {@code after}; null at the end. */
        public String nextCursor() {
            return next == null ? null : encode(next);
        }
    }

    /**
     * Merges partition pages.
     *
     * @param size most locks in the merged page
     */
    public static Merged merge(List<ListedLocks.Page> pages, int size) {
        Cursor frontier = null;
        List<ListedLocks.Lock> all = new ArrayList<>();
        for (ListedLocks.Page page : pages) {
            Cursor next = page.next();
            if (next != null && (frontier == null || ORDER.compare(next, frontier) < 0)) {
                frontier = next;
            }
            all.addAll(page.locks());
        }
        if (frontier != null) {
            Cursor limit = frontier;
            all.removeIf(lock -> ORDER.compare(lock, limit) > 0);
        }
        all.sort(ORDER);
        if (all.size() > size) {
            List<ListedLocks.Lock> page = new ArrayList<>(all.subList(0, size));
            return new Merged(page, Cursor.at(page.get(size - 1)));
        }
        return new Merged(all, frontier);
    }

    /** The locks' JSON as one JSON array, without copying them. */
    static BytesReference jsonArray(List<ListedLocks.Lock> locks) {
        List<BytesReference> parts = new ArrayList<>(2 * locks.size() + 1);
        parts.add(OPEN);
        for (ListedLocks.Lock lock : locks) {
            if (parts.size() > 1) {
                parts.add(COMMA);
            }
            parts.add(lock.json());
        }
        parts.add(CLOSE);
        return CompositeBytesReference.of(parts.toArray(BytesReference[]::new));
    }

    /** A cursor as an opaque, URL-safe string: base64url (no padding) of its JSON. */
    public static String encode(Cursor cursor) {
        byte[] json = BridgeJson.toJson(cursor.toMap()).getBytes(StandardCharsets.UTF_8);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(json);
    }

    /**
     * The cursor a client passed as {@code after}.
     *
     * @throws IllegalArgumentException naming {@code [after]} when it is not a string {@link #encode} made
     */
    public static Cursor decode(String after) {
        Map<String, Object> cursor;
        try {
            cursor = BridgeJson.parse(new String(Base64.getUrlDecoder().decode(after), StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            throw badCursor(after);
        }
        if (cursor.size() != 3
                || !(BridgeField.KEY.in(cursor) instanceof String key && key.isEmpty() == false)
                || !(BridgeField.OWNER.in(cursor) instanceof String owner && owner.isEmpty() == false)
                || !(BridgeField.SCOPE.in(cursor) instanceof String scope && SCOPES.contains(scope))) {
            throw badCursor(after);
        }
        return new Cursor(key, scope, owner);
    }

    private static IllegalArgumentException badCursor(String after) {
        return new IllegalArgumentException(
                "[after] must be the [next] of a previous page of this listing, got [" + after + "]");
    }

    /** Compares by code point: the order of the strings' UTF-8 bytes. */
    static int compareUtf8(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }
}
