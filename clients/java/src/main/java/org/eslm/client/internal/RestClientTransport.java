package org.eslm.client.internal;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import org.apache.http.HttpEntity;
import org.apache.http.client.config.RequestConfig;
import org.apache.http.util.EntityUtils;
import org.elasticsearch.client.Cancellable;
import org.elasticsearch.client.Request;
import org.elasticsearch.client.RequestOptions;
import org.elasticsearch.client.Response;
import org.elasticsearch.client.ResponseException;
import org.elasticsearch.client.ResponseListener;
import org.elasticsearch.client.RestClient;

/**
 * {@link Transport} over Elasticsearch's legacy low-level {@link RestClient}
 * ({@code org.elasticsearch.client:elasticsearch-rest-client}, Apache HttpClient 4). Only this
 * class names its types, so an application without that jar never loads them.
 */
public final class RestClientTransport implements Transport {
    private static final int CONNECT_TIMEOUT_MS = 1_000; // RestClientBuilder's default

    private final RestClient rest;
    private final RequestOptions options;

    public RestClientTransport(RestClient rest, RequestOptions options) {
        this.rest = rest;
        this.options = options;
    }

    /** The same client with {@code newOptions} (headers, request config) on every request. */
    public RestClientTransport withOptions(RequestOptions newOptions) {
        return new RestClientTransport(rest, newOptions);
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
            answer.complete(new Answer(response.getStatusLine().getStatusCode(), body));
        } catch (IOException | RuntimeException e) {
            if (context != null) {
                e.addSuppressed(context);
            }
            answer.completeExceptionally(e);
        }
    }

    /**
     * The client's options, with the socket timeout raised past {@code serverWaitMs}: RestClient's
     * default (30 s) would otherwise cut a longer wait short.
     */
    private RequestOptions optionsFor(long serverWaitMs) {
        if (serverWaitMs <= 0) {
            return options;
        }
        RequestConfig base = options.getRequestConfig();
        RequestConfig.Builder config =
                base == null ? RequestConfig.custom().setConnectTimeout(CONNECT_TIMEOUT_MS) : RequestConfig.copy(base);
        int socketTimeout = Transport.socketTimeoutMs(serverWaitMs);
        if (base != null && base.getSocketTimeout() > socketTimeout) {
            socketTimeout = base.getSocketTimeout();
        }
        return options.toBuilder()
                .setRequestConfig(config.setSocketTimeout(socketTimeout).build())
                .build();
    }
}
