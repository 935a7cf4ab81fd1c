package org.eslm.client.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.apache.http.client.config.RequestConfig;
import org.apache.http.util.EntityUtils;
import org.elasticsearch.client.Cancellable;
import org.elasticsearch.client.Request;
import org.elasticsearch.client.RequestOptions;
import org.elasticsearch.client.Response;
import org.elasticsearch.client.ResponseException;
import org.elasticsearch.client.ResponseListener;
import org.elasticsearch.client.RestClient;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockTransportException;
import org.eslm.client.errors.ServerErrors;

/**
 * JSON requests over the application's {@link RestClient}, never blocking a thread: every call
 * is {@code performRequestAsync}, and an error answer becomes the exception of its type. Answers
 * are completed on {@code callbacks}, not on the REST client's I/O thread, so a caller's
 * continuation may block without stalling other requests.
 */
public final class Transport {
    /** Socket time allowed beyond a request's server-side wait before the client gives up. */
    static final int SOCKET_MARGIN_MS = 30_000;

    private static final int CONNECT_TIMEOUT_MS = 1_000; // RestClientBuilder's default

    private final RestClient rest;
    private final RequestOptions options;
    private final ObjectMapper json = new ObjectMapper();
    private final Executor callbacks;

    public Transport(RestClient rest, RequestOptions options, Executor callbacks) {
        this.rest = rest;
        this.options = options;
        this.callbacks = callbacks;
    }

    public ObjectNode object() {
        return json.createObjectNode();
    }

    public RestClient rest() {
        return rest;
    }

    /**
     * Sends one request. {@code serverWaitMs} is how long the server may keep it open (a queued
     * acquire): the socket timeout is raised past it, since RestClient's default (30 s) would
     * otherwise cut a longer wait short. Cancelling the future aborts the request, which the
     * server treats as the client hanging up: a queued waiter is dropped (docs/API.md).
     */
    public CompletableFuture<JsonNode> send(String method, String endpoint, ObjectNode body, long serverWaitMs) {
        Request request = new Request(method, endpoint);
        if (body != null) {
            request.setJsonEntity(write(body));
        }
        request.setOptions(optionsFor(serverWaitMs));
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        Cancellable inFlight = rest.performRequestAsync(request, new ResponseListener() {
            @Override
            public void onSuccess(Response response) {
                JsonNode parsed;
                try {
                    parsed = json.readTree(EntityUtils.toString(response.getEntity()));
                } catch (IOException | RuntimeException e) {
                    settle(answer, null, new LockTransportException(200, "unreadable answer: " + e, e));
                    return;
                }
                settle(answer, parsed, null);
            }

            @Override
            public void onFailure(Exception exception) {
                settle(answer, null, toLockException(exception));
            }
        });
        answer.whenComplete((value, error) -> {
            if (answer.isCancelled()) {
                inFlight.cancel();
            }
        });
        return answer;
    }

    private void settle(CompletableFuture<JsonNode> answer, JsonNode value, LockException error) {
        Runnable done = () -> {
            if (error == null) {
                answer.complete(value);
            } else {
                answer.completeExceptionally(error);
            }
        };
        try {
            callbacks.execute(done);
        } catch (RejectedExecutionException closing) {
            done.run(); // the client is closing: complete here rather than leave the caller waiting
        }
    }

    private RequestOptions optionsFor(long serverWaitMs) {
        if (serverWaitMs <= 0) {
            return options;
        }
        RequestConfig base = options.getRequestConfig();
        RequestConfig.Builder config =
                base == null ? RequestConfig.custom().setConnectTimeout(CONNECT_TIMEOUT_MS) : RequestConfig.copy(base);
        int socketTimeout = (int) Math.min(Integer.MAX_VALUE, serverWaitMs + SOCKET_MARGIN_MS);
        if (base != null && base.getSocketTimeout() > socketTimeout) {
            socketTimeout = base.getSocketTimeout();
        }
        return options.toBuilder()
                .setRequestConfig(config.setSocketTimeout(socketTimeout).build())
                .build();
    }

    /** An error answer as its typed exception; anything else as a transport failure. */
    LockException toLockException(Exception exception) {
        if (exception instanceof LockException known) {
            return known;
        }
        if (!(exception instanceof ResponseException responseException)) {
            return new LockTransportException(0, String.valueOf(exception), exception);
        }
        Response response = responseException.getResponse();
        int status = response.getStatusLine().getStatusCode();
        try {
            String text = response.getEntity() == null ? "" : EntityUtils.toString(response.getEntity());
            JsonNode error = text.isEmpty() ? null : json.readTree(text).get("error");
            if (error == null || !error.isObject() || !error.path("type").isTextual()) {
                return new LockTransportException(status, "not a lock manager answer: " + text, exception);
            }
            return ServerErrors.of(
                    status, error.get("type").asText(), error.path("reason").asText(""), details(error));
        } catch (IOException | RuntimeException e) {
            return new LockTransportException(status, "unreadable error answer: " + e, exception);
        }
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
