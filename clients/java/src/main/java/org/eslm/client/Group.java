package org.eslm.client;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.eslm.client.internal.Durations;

/**
 * A group (docs/API.md "Groups"), from {@link LockClient#group}: created once, joined by members
 * with their capabilities (anything Jackson writes as JSON) under a lease they renew with {@link
 * #heartbeat}, left, observed, deleted. A member whose process dies leaves by itself when its
 * lease runs out. A membership is named by its acquisition, the member's name here: a retried
 * join gets it back; a join of the same member under another acquisition is refused ({@link
 * org.eslm.client.errors.MemberAlreadyJoinedException}).
 */
public final class Group {
    private final Shared shared;
    private final String name;

    Group(Shared shared, String name) {
        this.shared = Objects.requireNonNull(shared, "shared");
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("[group] must not be empty");
        }
        this.name = name;
    }

    public String name() {
        return name;
    }

    /** Creates the group; {@link org.eslm.client.errors.GroupAlreadyExistsException} when it exists. */
    public void create() {
        Sync.await(shared.requests().group("PUT", name));
    }

    /** Deletes the group; {@link org.eslm.client.errors.GroupNotEmptyException} while it has members. */
    public void delete() {
        Sync.await(shared.requests().group("DELETE", name));
    }

    /**
     * Joins as {@code member} with {@code capabilities} (null for none) under a lease of {@code
     * lease} (null: the server's default); answers the membership's fencing token.
     */
    public long join(String member, Object capabilities, Duration lease) {
        return Sync.await(shared.requests().groupMember("join", name, member, member, capabilities, leaseMs(lease)))
                .path("fencing_token")
                .asLong();
    }

    /** Renews {@code member}'s lease (null: the server's default). */
    public void heartbeat(String member, Duration lease) {
        Sync.await(shared.requests().groupMember("heartbeat", name, member, member, null, leaseMs(lease)));
    }

    /** Replaces {@code member}'s capabilities (null for none). */
    public void update(String member, Object capabilities) {
        Sync.await(shared.requests().groupMember("update", name, member, null, capabilities, null));
    }

    /** Leaves the group; {@link org.eslm.client.errors.LockNotHeldException} when not a member. */
    public void leave(String member) {
        Sync.await(shared.requests().groupMember("leave", name, member, member, null, null));
    }

    /** The group now: members and version. */
    public GroupState state() {
        return Sync.await(shared.requests().group("GET", name).thenApply(GroupState::of));
    }

    /**
     * Waits at most {@code wait} until the group is not at {@code version} (0: none known): the
     * group, {@link GroupState#changed()} false if the wait ran out.
     */
    public GroupState observe(long version, Duration wait) {
        return Sync.await(observeAsync(version, wait));
    }

    /** {@link #observe} without blocking a thread while it waits. */
    public CompletableFuture<GroupState> observeAsync(long version, Duration wait) {
        if (version < 0) {
            throw new IllegalArgumentException(
                    "[version] must be a group's version (0 for none), got [" + version + "]");
        }
        long waitMs = Durations.millis(wait, "wait");
        return shared.requests().observeGroup(name, version, waitMs).thenApply(GroupState::of);
    }

    private static Long leaseMs(Duration lease) {
        return lease == null ? null : Durations.millis(lease, "lease");
    }
}
