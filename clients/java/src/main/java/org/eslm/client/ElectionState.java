package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * An election's state (docs/API.md "GET /_elections/{name}" and its {@code _observe}): the leader
 * and its published value (empty when there is none), the leadership's {@code term} (0 when there
 * is no leader), the lease it has left, the candidates queued in the order they would be elected,
 * and for an observe whether the term changed from the one observed.
 */
public record ElectionState(
        String name,
        Optional<String> leader,
        Optional<String> value,
        long term,
        long leaseMs,
        List<String> candidates,
        boolean changed) {
    public ElectionState {
        candidates = List.copyOf(candidates);
    }

    static ElectionState of(JsonNode answer) {
        List<String> queued = new ArrayList<>();
        answer.path("candidates").forEach(candidate -> queued.add(candidate.asText()));
        return new ElectionState(
                answer.get("name").asText(),
                text(answer.get("leader")),
                text(answer.get("value")),
                answer.path("term").asLong(),
                answer.path("lease_ms").asLong(),
                queued,
                answer.path("changed").asBoolean(false));
    }

    private static Optional<String> text(JsonNode node) {
        return node == null || node.isNull() ? Optional.empty() : Optional.of(node.asText());
    }
}
