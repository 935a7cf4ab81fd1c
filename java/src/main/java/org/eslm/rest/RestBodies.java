package org.eslm.rest;

import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.xcontent.XContentParser;

import java.io.IOException;

/** Body handling shared by the lock endpoints. */
final class RestBodies {
    private RestBodies() {}

    /**
     * A parser over the request body.
     *
     * @throws IllegalArgumentException when there is no body, since every mutating lock call needs {@code owner}
     */
    static XContentParser requiredParser(RestRequest request) throws IOException {
        if (request.hasContent() == false) {
            throw new IllegalArgumentException("request body is required: at least [owner]");
        }
        return request.contentParser();
    }
}
