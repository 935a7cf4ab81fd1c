package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What {@link LockClient#setSemaphoreLimit} did (docs/API.md "POST /_semaphores/{name}/_limit"):
 * the semaphore's new {@code limit}, the {@code previous} one, and the permits {@code held} when it
 * took effect ({@code held} may exceed {@code limit} after a lowering: nothing held is revoked).
 */
public record SemaphoreLimitChange(String key, int limit, int previous, int held) {
    static SemaphoreLimitChange of(JsonNode answer) {
        return new SemaphoreLimitChange(
                answer.path("key").asText(),
                answer.path("limit").asInt(),
                answer.path("previous").asInt(),
                answer.path("held").asInt());
    }
}
