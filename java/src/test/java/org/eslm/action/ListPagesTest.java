package org.eslm.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.elasticsearch.common.bytes.BytesArray;
import org.eslm.core.BridgeJson;
import org.eslm.service.ListedLocks.Cursor;
import org.eslm.service.ListedLocks.Lock;
import org.eslm.service.ListedLocks.Page;
import org.junit.jupiter.api.Test;

/**
 * {@link ListPages}: merging partition pages in listing order with a correct {@code next}, and the
 * opaque cursor. The partitions here are simulated from the contract the core keeps (each page: the
 * partition's locks after the cursor, in order, at most {@code size}, or fewer with a {@code next}
 * when its scan budget ran out); the core's side is tested in rust/lock-core/tests/listing.rs.
 */
class ListPagesTest {
    /** In the core's order, which is not the alphabetical one. */
    private static final String[] SCOPES = {"key", "tree", "semaphore"};

    private static Lock lock(String key, String scope, String owner) {
        String json = "{\"key\":\"" + key + "\",\"scope\":\"" + scope + "\",\"owner\":\"" + owner + "\"}";
        return new Lock(key, scope, owner, new BytesArray(json));
    }

    private static Page page(List<Lock> locks, Cursor next) {
        return new Page(0, locks, next);
    }

    /** A partition's page as the core answers it, with a budget of {@code budget} locks examined. */
    private static Page corePage(List<Lock> sorted, Cursor after, int size, int budget) {
        List<Lock> out = new ArrayList<>();
        int examined = 0;
        for (Lock l : sorted) {
            if (after != null && ListPages.ORDER.compare(l, after) <= 0) {
                continue;
            }
            if (out.size() == size) {
                return page(out, Cursor.at(out.get(size - 1)));
            }
            if (examined == budget) {
                return page(out, Cursor.at(out.isEmpty() ? after : out.get(out.size() - 1)));
            }
            examined++;
            out.add(l);
        }
        return page(out, null);
    }

    @Test
    void pagesOfSeveralPartitionsMergeIntoTheFullListInOrder() {
        Random r = new Random(13);
        for (int round = 0; round < 200; round++) {
            int partitions = 1 + r.nextInt(4);
            List<List<Lock>> parts = new ArrayList<>();
            TreeSet<Lock> all = new TreeSet<>(ListPages.ORDER);
            for (int p = 0; p < partitions; p++) {
                TreeSet<Lock> mine = new TreeSet<>(ListPages.ORDER);
                for (int i = r.nextInt(40); i > 0; i--) {
                    Lock l = lock("k" + r.nextInt(30), SCOPES[r.nextInt(3)], "o" + r.nextInt(4));
                    if (all.add(l)) {
                        mine.add(l);
                    }
                }
                parts.add(new ArrayList<>(mine));
            }
            int size = 1 + r.nextInt(7);
            int budget = 1 + r.nextInt(10);
            List<Lock> listed = new ArrayList<>();
            Cursor after = null;
            for (int calls = 0; ; calls++) {
                assertTrue(calls < 1000, "paging makes progress");
                List<Page> pages = new ArrayList<>();
                for (List<Lock> part : parts) {
                    pages.add(corePage(part, after, size, budget));
                }
                ListPages.Merged merged = ListPages.merge(pages, size);
                assertTrue(merged.locks().size() <= size);
                listed.addAll(merged.locks());
                if (merged.next() == null) {
                    break;
                }
                after = ListPages.decode(merged.nextCursor());
            }
            assertEquals(new ArrayList<>(all), listed, "round " + round);
        }
    }

    @Test
    void aFullPageEndsAtItsLastLockAndTheLastPageHasNoNext() {
        Lock a = lock("a", "key", "o");
        Lock b = lock("b", "key", "o");
        Lock c = lock("b", "tree", "o");
        ListPages.Merged full = ListPages.merge(List.of(page(List.of(a, c), null), page(List.of(b), null)), 2);
        assertEquals(List.of(a, b), full.locks());
        assertEquals(Cursor.at(b), full.next());
        ListPages.Merged last = ListPages.merge(List.of(page(List.of(a), null), page(List.of(b), null)), 2);
        assertNull(last.next());
        assertNull(last.nextCursor());
    }

    @Test
    void locksBeyondAPartialPartitionPageAreLeftForTheNextPage() {
        Lock a = lock("a", "key", "o");
        Lock z = lock("z", "key", "o");
        // Partition 1 ran out of budget after "m": a lock of partition 2 after "m" must wait, or a
        // lock of partition 1 between "m" and "z" would come after it.
        Lock m = lock("m", "key", "o");
        ListPages.Merged merged = ListPages.merge(List.of(page(List.of(a), Cursor.at(m)), page(List.of(z), null)), 10);
        assertEquals(List.of(a), merged.locks());
        assertEquals(Cursor.at(m), merged.next());
    }

    @Test
    void lockJsonJoinsIntoOneArray() {
        for (int n = 0; n < 4; n++) {
            List<Lock> locks = new ArrayList<>();
            List<Object> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Lock l = lock("k" + i, "key", "o");
                locks.add(l);
                expected.add(l.asMap());
            }
            String json = "{\"locks\":" + ListPages.jsonArray(locks).utf8ToString() + "}";
            assertEquals(expected, BridgeJson.parse(json).get("locks"));
        }
    }

    @Test
    void keysCompareByCodePointLikeTheCoresUtf8Order() {
        // U+FF5E is one UTF-16 unit greater than the high surrogate of U+1F512; in UTF-8 it is smaller.
        assertTrue(ListPages.compareUtf8("\uFF5E", "\uD83D\uDD12") < 0);
        assertTrue(ListPages.compareUtf8("ab", "abc") < 0);
        assertEquals(0, ListPages.compareUtf8("ab", "ab"));
    }

    @Test
    void cursorsRoundTripAndBadOnesNameAfter() {
        for (String scope : SCOPES) {
            Cursor cursor = new Cursor("k/\u00e9 \uD83D\uDD12", scope, "own\"er");
            String encoded = ListPages.encode(cursor);
            assertTrue(encoded.matches("[A-Za-z0-9_-]+"), encoded);
            assertEquals(cursor, ListPages.decode(encoded));
        }
        for (String bad : new String[] {
            "%%%",
            "bm90IGpzb24",
            ListPages.encode(new Cursor("k", "sideways", "o")),
            ListPages.encode(new Cursor("", "key", "o")),
        }) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ListPages.decode(bad));
            assertTrue(e.getMessage().startsWith("[after]"), e.getMessage());
        }
    }
}
