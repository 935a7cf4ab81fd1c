package org.eslm.client;

import static org.eslm.client.RealNode.uniqueKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eslm.client.errors.GroupAlreadyExistsException;
import org.eslm.client.errors.GroupNotEmptyException;
import org.eslm.client.errors.GroupNotFoundException;
import org.eslm.client.errors.LockNotHeldException;
import org.eslm.client.errors.MemberAlreadyJoinedException;
import org.junit.jupiter.api.Test;

/**
 * Groups against a real node (docs/API.md "Groups"): the life of a group with its errors as
 * classes of their own, capabilities as JSON, and an observer woken by a join and by a member
 * whose lease ran out.
 */
class GroupTest extends NodeTest {
    @Test
    void aGroupIsCreatedJoinedUpdatedLeftAndDeleted() {
        Group group = locks.group(uniqueKey("group"));
        assertThrows(GroupNotFoundException.class, () -> group.join("m1", null, null));
        group.create();
        assertThrows(GroupAlreadyExistsException.class, group::create);
        assertTrue(locks.groups().contains(group.name()));
        long token = group.join("m1", Map.of("zone", "a"), Duration.ofSeconds(30));
        assertEquals(token, group.join("m1", Map.of("zone", "a"), Duration.ofSeconds(30)), "a retried join");
        group.join("m2", List.of(1, 2), null);
        GroupState state = group.state();
        assertEquals(
                List.of("m1", "m2"),
                state.members().stream().map(GroupState.Member::member).toList());
        GroupState.Member m1 = state.member("m1").orElseThrow();
        assertEquals("a", m1.capabilities().orElseThrow().get("zone").asText());
        assertEquals(token, m1.fencingToken());
        assertFalse(m1.session());
        group.update("m2", "busy");
        assertEquals(
                "busy",
                group.state()
                        .member("m2")
                        .orElseThrow()
                        .capabilities()
                        .orElseThrow()
                        .asText());
        group.heartbeat("m1", Duration.ofSeconds(60));
        assertTrue(group.state().member("m1").orElseThrow().leaseMs() > 55_000);
        assertThrows(GroupNotEmptyException.class, group::delete);
        group.leave("m1");
        assertThrows(LockNotHeldException.class, () -> group.leave("m1"));
        group.leave("m2");
        group.delete();
        assertThrows(GroupNotFoundException.class, group::state);
    }

    @Test
    void aSecondJoinOfAMemberUnderAnotherAcquisitionIsRefused() {
        Group group = locks.group(uniqueKey("group"));
        group.create();
        group.join("m", null, null);
        assertThrows(
                MemberAlreadyJoinedException.class,
                () -> Sync.await(
                        locks.shared().requests().groupMember("join", group.name(), "m", "another", null, null)));
        group.leave("m");
        group.delete();
    }

    @Test
    void anObserverWakesOnAJoinAndWhenAMembersLeaseEnds() throws Exception {
        Group group = locks.group(uniqueKey("group"));
        group.create();
        long empty = group.state().version();
        CompletableFuture<GroupState> observed = group.observeAsync(empty, Duration.ofSeconds(20));
        group.join("short", null, Duration.ofSeconds(2));
        GroupState joined = observed.get(10, TimeUnit.SECONDS);
        assertTrue(joined.changed());
        assertEquals("short", joined.members().get(0).member());
        GroupState left = group.observe(joined.version(), Duration.ofSeconds(10));
        assertTrue(left.changed() && left.members().isEmpty(), "the member left with its lease: " + left);
        assertFalse(group.observe(left.version(), Duration.ofMillis(100)).changed());
        group.delete();
    }
}
