package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * The answer of {@link LockClient#watch}: whether the lock with {@code fencingToken} ended
 * ({@code changed}) and why ({@code released}, {@code expired}, {@code force_released},
 * {@code session_ended}, {@code session_expired}, {@code upgraded}, {@code not_held}), or that it
 * was still held when the wait ran out (docs/API.md "Watch a lock").
 */
public record LockWatch(String key, long fencingToken, boolean changed, Optional<String> reason) {
    static LockWatch of(JsonNode answer) {
        JsonNode reason = answer.get("reason");
        return new LockWatch(
                answer.get("key").asText(),
                answer.get("fencing_token").asLong(),
                answer.get("changed").asBoolean(),
                reason == null || reason.isNull() ? Optional.empty() : Optional.of(reason.asText()));
    }
}
