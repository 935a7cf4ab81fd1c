package org.eslm.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A group's state (docs/API.md "GET /_groups/{name}" and its {@code _observe}): its members in
 * name order, its version (which changes whenever a member joins, leaves or changes its
 * capabilities), and for an observe whether the version changed from the one observed.
 */
public record GroupState(String group, List<Member> members, long version, boolean changed) {
    public GroupState {
        members = List.copyOf(members);
    }

    /**
     * One member: its name, its capabilities as the JSON it joined with (empty when none), its
     * membership's fencing token, its lease left, and whether it is a member under a session.
     */
    public record Member(
            String member, Optional<JsonNode> capabilities, long fencingToken, long leaseMs, boolean session) {}

    /** The member named {@code member}, if it is one. */
    public Optional<Member> member(String member) {
        return members.stream().filter(m -> m.member().equals(member)).findFirst();
    }

    static GroupState of(JsonNode answer) {
        List<Member> members = new ArrayList<>();
        for (JsonNode m : answer.path("members")) {
            JsonNode capabilities = m.get("capabilities");
            members.add(new Member(
                    m.get("member").asText(),
                    capabilities == null || capabilities.isNull() ? Optional.empty() : Optional.of(capabilities),
                    m.path("fencing_token").asLong(),
                    m.path("lease_ms").asLong(),
                    m.path("session").asBoolean(false)));
        }
        return new GroupState(
                answer.get("group").asText(),
                members,
                answer.path("version").asLong(),
                answer.path("changed").asBoolean(false));
    }
}
