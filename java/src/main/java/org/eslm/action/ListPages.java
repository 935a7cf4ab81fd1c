package org.eslm.action;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eslm.service.BridgeJson;

/**
 * Merges the pages of held locks that each partition answered (rust/lock-core/src/table/listing.rs)
 * into one page of the cluster's listing, and turns cursors into the opaque {@code after} / {@code
 * next} strings of {@code GET /_locks} (docs/API.md, "List locks").
 *
 * <p>Order: key, then scope ({@code key} before {@code tree}), then owner; keys and owners compare by
 * code point, which is the byte order of their UTF-8 that the core sorts by (not Java's UTF-16 order).
 *
 * <p>A partition's page says: every lock of that partition after the request's cursor and up to the
 * page's {@code next} is in it ({@code next} null: all of them). The merged page can therefore only
 * vouch for locks up to the smallest {@code next} of all partitions: locks beyond it are left out (the
 * following page lists them again) and that smallest {@code next}, or the last lock of a full page,
 * is where the following page starts.
 */
public final class ListPages {
    /** The order of the listing, over lock entries and cursors alike ({@code key}, {@code scope}, {@code owner}). */
    public static final Comparator<Map<String, ?>> ORDER = Comparator.<Map<String, ?>, String>comparing(
                    m -> (String) m.get("key"), ListPages::compareUtf8)
            .thenComparing(m -> (String) m.get("scope"))
            .thenComparing(m -> (String) m.get("owner"), ListPages::compareUtf8);

    private ListPages() {}

    /**
     * One merged page.
     *
     * @param locks at most {@code size} locks, in listing order
     * @param next where the following page starts ({@code key}, {@code scope}, {@code owner}); null at the end
     */
    public record Merged(List<Map<String, Object>> locks, Map<String, Object> next) {
        /** {@link #next} as the string a client passes back as {@code after}; null at the end. */
        public String nextCursor() {
            return next == null ? null : encode(next);
        }
    }

    /**
     * Merges partition pages, each {@code {"locks": [...], "next": {"key", "scope", "owner"} | null}}.
     *
     * @param size most locks in the merged page
     */
    public static Merged merge(List<? extends Map<String, ?>> pages, int size) {
        Map<String, Object> frontier = null;
        List<Map<String, Object>> all = new ArrayList<>();
        for (Map<String, ?> page : pages) {
            @SuppressWarnings("unchecked")
            Map<String, Object> next = (Map<String, Object>) page.get("next");
            if (next != null && (frontier == null || ORDER.compare(next, frontier) < 0)) {
                frontier = next;
            }
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> locks = (List<Map<String, Object>>) page.get("locks");
            all.addAll(locks);
        }
        if (frontier != null) {
            Map<String, Object> limit = frontier;
            all.removeIf(lock -> ORDER.compare(lock, limit) > 0);
        }
        all.sort(ORDER);
        if (all.size() > size) {
            List<Map<String, Object>> page = new ArrayList<>(all.subList(0, size));
            return new Merged(page, cursorOf(page.get(size - 1)));
        }
        return new Merged(all, frontier);
    }

    /** The cursor just after a listed lock. */
    static Map<String, Object> cursorOf(Map<String, ?> lock) {
        Map<String, Object> cursor = new LinkedHashMap<>();
        cursor.put("key", lock.get("key"));
        cursor.put("scope", lock.get("scope"));
        cursor.put("owner", lock.get("owner"));
        return cursor;
    }

    /** A cursor as an opaque, URL-safe string: base64url (no padding) of its JSON. */
    public static String encode(Map<String, ?> cursor) {
        byte[] json = BridgeJson.toJson(cursorOf(cursor)).getBytes(StandardCharsets.UTF_8);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(json);
    }

    /**
     * The cursor a client passed as {@code after}.
     *
     * @throws IllegalArgumentException naming {@code [after]} when it is not a string {@link #encode} made
     */
    public static Map<String, Object> decode(String after) {
        Map<String, Object> cursor;
        try {
            cursor = BridgeJson.parse(new String(Base64.getUrlDecoder().decode(after), StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            throw badCursor(after);
        }
        if (cursor.size() != 3
                || !(cursor.get("key") instanceof String key && key.isEmpty() == false)
                || !(cursor.get("owner") instanceof String owner && owner.isEmpty() == false)
                || !("key".equals(cursor.get("scope")) || "tree".equals(cursor.get("scope")))) {
            throw badCursor(after);
        }
        return cursorOf(cursor);
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
