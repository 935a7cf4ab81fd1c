package org.eslm.client.internal;

import co.elastic.clients.transport.rest5_client.low_level.Cancellable;
import co.elastic.clients.transport.rest5_client.low_level.Request;
import co.elastic.clients.transport.rest5_client.low_level.RequestOptions;
import co.elastic.clients.transport.rest5_client.low_level.Response;
import co.elastic.clients.transport.rest5_client.low_level.ResponseException;
import co.elastic.clients.transport.rest5_client.low_level.ResponseListener;
import co.elastic.clients.transport.rest5_client.low_level.Rest5Client;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.ParseException;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.util.Timeout;

/**
 * {@link Transport} over {@link Rest5Client} ({@code co.elastic.clients:elasticsearch-rest5-client},
 * Apache HttpClient 5): the low-level client under the Elasticsearch Java API client's {@code
 * Rest5ClientTransport}, and what Spring Boot 4 configures. Only this class names its types, so an
 * application without that jar never loads them.
 */
public final class Rest5ClientTransport implements Transport {
    private final Rest5Client rest;
    private final RequestOptions options;

    public Rest5ClientTransport(Rest5Client rest, RequestOptions options) {
        this.rest = rest;
        this.options = options;
    }

    /** The same client with {@code newOptions} (headers, request config) on every request. */
    public Rest5ClientTransport withOptions(RequestOptions newOptions) {
        return new Rest5ClientTransport(rest, newOptions);
    }

    @Override
    public CompletableFuture<Answer> send(String method, String endpoint, String jsonBody, long serverWaitMs) {
        Request request = new Request(method, endpoint);
        if (jsonBody != null) {
            request.setJsonEntity(jsonBody);
        }
        request.setOptions(optionsFor(serverWaitMs));
        CompletableFuture<Answer> answer = new CompletableFuture<>();
        Cancellable inFlight = rest.performRequestAsync(request, new ResponseListener() {
            @Override
            public void onSuccess(Response response) {
                complete(answer, response, null);
            }

            @Override
            public void onFailure(Exception exception) {
                if (exception instanceof ResponseException error) {
                    complete(answer, error.getResponse(), exception);
                } else {
                    answer.completeExceptionally(exception);
                }
            }
        });
        answer.whenComplete((value, error) -> {
            if (answer.isCancelled()) {
                inFlight.cancel();
            }
        });
        return answer;
    }

    /** The answer's status and text; an unreadable body is a failure caused by {@code context}. */
    private static void complete(CompletableFuture<Answer> answer, Response response, Exception context) {
        try {
            HttpEntity entity = response.getEntity();
            String body = entity == null ? "" : EntityUtils.toString(entity);
            answer.complete(new Answer(response.getStatusCode(), body));
        } catch (IOException | ParseException | RuntimeException e) {
            if (context != null) {
                e.addSuppressed(context);
            }
            answer.completeExceptionally(e);
        }
    }

    /**
     * The client's options, with the response timeout raised past {@code serverWaitMs}: the
     * client's default (30 s) would otherwise cut a longer wait short.
     */
    private RequestOptions optionsFor(long serverWaitMs) {
        if (serverWaitMs <= 0) {
            return options;
        }
        RequestConfig base = options.getRequestConfig();
        RequestConfig.Builder config = base == null ? RequestConfig.custom() : RequestConfig.copy(base);
        long timeoutMs = Transport.socketTimeoutMs(serverWaitMs);
        Timeout given = base == null ? null : base.getResponseTimeout();
        if (given != null && given.toMilliseconds() > timeoutMs) {
            timeoutMs = given.toMilliseconds();
        }
        return options.toBuilder()
                .setRequestConfig(config.setResponseTimeout(Timeout.ofMilliseconds(timeoutMs))
                        .build())
                .build();
    }
}
