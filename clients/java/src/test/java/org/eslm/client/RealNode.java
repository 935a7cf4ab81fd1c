package org.eslm.client;

import static org.junit.jupiter.api.Assertions.fail;

import co.elastic.clients.transport.rest5_client.low_level.Rest5Client;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.http.HttpHost;
import org.apache.http.util.EntityUtils;
import org.elasticsearch.client.Request;
import org.elasticsearch.client.Response;
import org.elasticsearch.client.ResponseException;
import org.elasticsearch.client.RestClient;
import org.eslm.client.internal.Endpoints;

/**
 * The real node the tests talk to: its URL comes from the system property {@code eslm.url}
 * (tests/integration/test_java_clients.py starts the node and passes it). Without it the tests
 * fail: a test that cannot reach the lock manager proves nothing and must not pass or skip.
 */
public final class RealNode {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RealNode() {}

    public static String url() {
        String url = System.getProperty("eslm.url", "");
        if (url.isBlank()) {
            fail("-Deslm.url=<node URL> is required: these tests run against a real node with the plugin");
        }
        return url;
    }

    public static RestClient restClient() {
        return RestClient.builder(HttpHost.create(url())).build();
    }

    /** The node through {@code Rest5Client}, the Java API client's low-level client. */
    public static Rest5Client rest5Client() {
        return Rest5Client.builder(URI.create(url())).build();
    }

    /** A key no other test (or earlier run on the same node) uses. */
    public static String uniqueKey(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    /** A request outside the client under test; answers the status and JSON body. */
    public static Answer http(RestClient rest, String method, String path, String jsonBody) {
        Request request = new Request(method, path);
        if (jsonBody != null) {
            request.setJsonEntity(jsonBody);
        }
        Response response;
        try {
            response = rest.performRequest(request);
        } catch (ResponseException e) {
            response = e.getResponse();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            String text = response.getEntity() == null ? "{}" : EntityUtils.toString(response.getEntity());
            return new Answer(response.getStatusLine().getStatusCode(), JSON.readTree(text));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code POST /_locks/{key}/_force_release}: the admin eviction of every holder. */
    public static Answer forceRelease(RestClient rest, String key) {
        return http(rest, "POST", Endpoints.lock(key) + "/_force_release", "{\"reason\":\"test\"}");
    }

    /** The owners holding {@code key} now, from {@code GET /_locks/{key}}. */
    public static JsonNode holders(RestClient rest, String key) {
        Answer answer = http(rest, "GET", Endpoints.lock(key), null);
        if (answer.status() != 200) {
            fail("GET " + key + " answered " + answer);
        }
        return answer.body().get("holders");
    }

    /** Polls {@code condition} until it holds, failing after {@code within}. */
    public static void await(BooleanSupplier condition, Duration within, String what) {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("not within " + within + ": " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted while waiting for: " + what);
            }
        }
    }

    public record Answer(int status, JsonNode body) {}
}
