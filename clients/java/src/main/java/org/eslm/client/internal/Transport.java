package org.eslm.client.internal;

import java.util.concurrent.CompletableFuture;

/**
 * One HTTP exchange with the cluster, over whichever Elasticsearch low-level client the
 * application already has: {@link RestClientTransport} for the legacy {@code
 * org.elasticsearch.client.RestClient}, {@link Rest5ClientTransport} for {@code Rest5Client} (what
 * the Java API client and Spring Boot 4 configure). Each adapter only moves bytes; JSON, error
 * types and threads are {@link JsonExchange}'s, so both clients behave the same.
 */
public interface Transport {
    /** An HTTP answer, whatever its status: the caller decides what an error status means. */
    record Answer(int status, String body) {}

    /**
     * Sends {@code method endpoint} with {@code jsonBody} (null: none). {@code serverWaitMs} is how
     * long the server may keep the request open (a queued acquire): the adapter raises the socket
     * timeout past it. The future completes with the answer of any status, or exceptionally with
     * the I/O failure when none came (refused, timed out, reset). Cancelling it aborts the request,
     * which the server treats as the client hanging up.
     */
    CompletableFuture<Answer> send(String method, String endpoint, String jsonBody, long serverWaitMs);

    /** Socket time allowed beyond a request's server-side wait before the client gives up. */
    int SOCKET_MARGIN_MS = 30_000;

    /** The socket timeout of a request the server may hold {@code serverWaitMs}. */
    static int socketTimeoutMs(long serverWaitMs) {
        return (int) Math.min(Integer.MAX_VALUE, serverWaitMs + SOCKET_MARGIN_MS);
    }
}
