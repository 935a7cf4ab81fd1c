package org.eslm.service;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.common.Strings;
import org.elasticsearch.common.xcontent.XContentHelper;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeLockException;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * The node's lock service: turns typed calls into bridge JSON, and native outcomes into
 * Elasticsearch exceptions. It holds no lock logic of its own — every decision is the Rust core's.
 *
 * <p>Every method returns at once: the core never blocks the calling thread.
 */
public final class LockService implements Closeable {
    private static final Logger logger = LogManager.getLogger(LockService.class);

    private final NativeLockCore core;

    public LockService(NativeLockCore core) {
        this.core = core;
    }

    /**
     * Try-lock {@code key} for {@code owner}.
     *
     * @return the grant: key, owner, mode, fencing_token, waited_ms, reentrant
     * @throws LockConflictException when another owner holds the key incompatibly
     * @throws IllegalArgumentException for an invalid key or owner (the message names the field)
     */
    public Map<String, Object> acquire(String key, String owner, LockMode mode) {
        String request = json(b -> b.field("key", key).field("owner", owner).field("mode", mode.wireName()));
        return call(() -> core.acquire(request));
    }

    /**
     * Releases {@code owner}'s hold on {@code key}; with a token, only that grant.
     *
     * @throws LockNotHeldException when the owner (or that token) does not hold the key
     */
    public Map<String, Object> release(String key, String owner, Long fencingToken) {
        String request = json(b -> {
            b.field("key", key).field("owner", owner);
            if (fencingToken != null) {
                b.field("fencing_token", fencingToken.longValue());
            }
        });
        return call(() -> core.release(request));
    }

    /** The holders of {@code key}; a free key has none. */
    public Map<String, Object> keyInfo(String key) {
        return call(() -> core.keyInfo(key));
    }

    /** Node-local facts from the core (versions, epoch, counts). */
    public Map<String, Object> diagnostics() {
        return call(core::diagnostics);
    }

    @Override
    public void close() {
        core.close();
        logger.info("lock core closed");
    }

    private interface JsonBody {
        void write(XContentBuilder builder) throws IOException;
    }

    private static String json(JsonBody body) {
        try (XContentBuilder builder = JsonXContent.contentBuilder()) {
            builder.startObject();
            body.write(builder);
            builder.endObject();
            return Strings.toString(builder);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Map<String, Object> parse(String json) {
        return XContentHelper.convertToMap(JsonXContent.jsonXContent, json, false);
    }

    private interface NativeCall {
        String run();
    }

    private static Map<String, Object> call(NativeCall nativeCall) {
        try {
            return parse(nativeCall.run());
        } catch (NativeLockException e) {
            throw translate(e);
        }
    }

    /** Maps a native lock outcome to the exception the REST layer renders (type and status). */
    static RuntimeException translate(NativeLockException e) {
        Map<String, Object> details = parse(e.detailsJson());
        return switch (e.code()) {
            case NativeLockException.CONFLICT -> new LockConflictException(
                e.getMessage(),
                (String) details.get("key"),
                owners(details.get("holders"))
            );
            case NativeLockException.NOT_HELD -> new LockNotHeldException(
                e.getMessage(),
                (String) details.get("key"),
                (String) details.get("owner")
            );
            default -> new ElasticsearchStatusException(
                "unexpected lock core outcome [" + e.code() + "]: " + e.getMessage(),
                RestStatus.INTERNAL_SERVER_ERROR
            );
        };
    }

    private static List<String> owners(Object holders) {
        if (holders instanceof List<?> list) {
            return list.stream().map(h -> String.valueOf(((Map<?, ?>) h).get("owner"))).toList();
        }
        return List.of();
    }
}
