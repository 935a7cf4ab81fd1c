package org.eslm.action;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class RoutingValuesTest {
    @Test
    void aKeyRoutesByItselfOrItsHashTag() {
        assertEquals("orders-42", RoutingValues.of("orders-42", null));
        assertEquals("orders-42", RoutingValues.of("orders-42", "key"));
        assertEquals("tenant-7", RoutingValues.of("{tenant-7}invoices", "key"));
        assertEquals("tenant-7", RoutingValues.of("jobs:{tenant-7}:nightly", "key"), "the tag may sit anywhere");
        assertEquals("a", RoutingValues.of("{a}{b}", "key"), "the first tag counts");
        assertEquals("{}x", RoutingValues.of("{}x", "key"), "an empty tag is no tag");
        assertEquals("{x", RoutingValues.of("{x", "key"), "an unclosed brace is no tag");
        assertEquals("}x{", RoutingValues.of("}x{", "key"));
    }

    @Test
    void aTreeRoutesByItsFirstSegmentOrThatSegmentsHashTag() {
        assertEquals("/warehouse", RoutingValues.of("/warehouse/aisle-3/bin-7", "tree"));
        assertEquals("/warehouse", RoutingValues.of("/warehouse", "tree"));
        assertEquals("t1", RoutingValues.of("/{t1}warehouse/aisle-3", "tree"));
        assertEquals(
                "/warehouse",
                RoutingValues.of("/warehouse/{t1}aisle", "tree"),
                "a tag below the first segment would split a tree from its ancestors: ignored");
        assertEquals("/warehouse/aisle", RoutingValues.of("/warehouse/aisle", "key"), "a key-scope path is a key");
    }
}
