package org.eslm.client.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockTransportException;
import org.eslm.client.errors.ServerErrors;

/**
 * JSON requests over a {@link Transport}, never blocking a thread: an error answer becomes the
 * exception of its type, and a request that got no answer (refused, timed out, reset) a {@link
 * LockTransportException} whose cause is the I/O failure. Answers are completed on {@code
 * callbacks}, not on the HTTP client's I/O thread, so a caller's continuation may block without
 * stalling other requests.
 */
public final class JsonExchange {
    private final Transport transport;
    private final ObjectMapper json = new ObjectMapper();
    private final Executor callbacks;

    public JsonExchange(Transport transport, Executor callbacks) {
        this.transport = transport;
        this.callbacks = callbacks;
    }

    public ObjectNode object() {
        return json.createObjectNode();
    }

    /** {@code value} (a map, a record, any object Jackson writes) as a JSON object. */
    public ObjectNode tree(Object value) {
        if (json.valueToTree(value) instanceof ObjectNode object) {
            return object;
        }
        throw new IllegalArgumentException("[document] must be a JSON object, got [" + value + "]");
    }

    /** {@code value} (a map, a record, a string, a number, any object Jackson writes) as JSON. */
    public JsonNode node(Object value) {
        return json.valueToTree(value);
    }

    /** A JSON object (or anything {@link #tree} takes) as a new map of plain values. */
    public Map<String, Object> map(Object value) {
        return json.convertValue(value, new TypeReference<LinkedHashMap<String, Object>>() {});
    }

    /**
     * Sends one request (see {@link Transport#send}); its answer as JSON, or its failure as a
     * {@link LockException}. Cancelling the future aborts the request: a queued waiter is dropped.
     */
    public CompletableFuture<JsonNode> send(String method, String endpoint, ObjectNode body, long serverWaitMs) {
        return sendText(method, endpoint, body == null ? null : write(body), serverWaitMs);
    }

    /**
     * Sends {@code lines} as one body of JSON lines, each ended by a newline (a {@code _bulk}),
     * which Elasticsearch reads with the JSON content type the transports send.
     */
    public CompletableFuture<JsonNode> sendLines(String method, String endpoint, List<ObjectNode> lines) {
        StringBuilder text = new StringBuilder();
        for (ObjectNode line : lines) {
            text.append(write(line)).append('\n');
        }
        return sendText(method, endpoint, text.toString(), 0);
    }

    private CompletableFuture<JsonNode> sendText(String method, String endpoint, String text, long serverWaitMs) {
        CompletableFuture<Transport.Answer> exchange = transport.send(method, endpoint, text, serverWaitMs);
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        exchange.whenComplete((raw, error) -> settle(answer, raw, error));
        answer.whenComplete((value, error) -> {
            if (answer.isCancelled()) {
                exchange.cancel(true);
            }
        });
        return answer;
    }

    /** Completes {@code answer} on the callback executor, from the answer or the failure. */
    private void settle(CompletableFuture<JsonNode> answer, Transport.Answer raw, Throwable error) {
        Runnable done = () -> {
            try {
                if (raw == null) {
                    throw noAnswer(Retrier.unwrap(error));
                }
                answer.complete(parse(raw));
            } catch (LockException e) {
                answer.completeExceptionally(e);
            }
        };
        try {
            callbacks.execute(done);
        } catch (RejectedExecutionException closing) {
            done.run(); // the client is closing: complete here rather than leave the caller waiting
        }
    }

    private static LockException noAnswer(Throwable cause) {
        if (cause instanceof LockException known) {
            return known;
        }
        return new LockTransportException(0, "no answer from the cluster: " + cause, cause);
    }

    /** A 2xx answer's JSON; any other status as the exception of its error type. */
    JsonNode parse(Transport.Answer raw) {
        if (raw.status() >= 200 && raw.status() < 300) {
            try {
                return json.readTree(raw.body());
            } catch (IOException | RuntimeException e) {
                throw new LockTransportException(raw.status(), "unreadable answer: " + e, e);
            }
        }
        throw toLockException(raw);
    }

    /** An error answer as its typed exception; one that is not the lock manager's as a transport failure. */
    LockException toLockException(Transport.Answer raw) {
        try {
            JsonNode error =
                    raw.body().isEmpty() ? null : json.readTree(raw.body()).get("error");
            if (error == null || !error.isObject() || !error.path("type").isTextual()) {
                return new LockTransportException(raw.status(), "not a lock manager answer: " + raw.body(), null);
            }
            return error(raw.status(), error);
        } catch (IOException | RuntimeException e) {
            return new LockTransportException(raw.status(), "unreadable error answer: " + e, e);
        }
    }

    /** An {@code error} object (of an answer, or of one item of a {@code _bulk}) as its typed exception. */
    public LockException error(int status, JsonNode error) {
        return ServerErrors.of(
                status, error.path("type").asText(""), error.path("reason").asText(""), details(error));
    }

    private Map<String, Object> details(JsonNode error) {
        Map<String, Object> all = json.convertValue(error, new TypeReference<LinkedHashMap<String, Object>>() {});
        all.remove("type");
        all.remove("reason");
        all.remove("root_cause");
        all.values().removeIf(v -> v == null);
        return all;
    }

    private String write(ObjectNode body) {
        try {
            return json.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
