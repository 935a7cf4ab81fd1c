package org.eslm.action;

import java.util.List;

/**
 * The names of the plugin's transport actions that a caller's request is authorized against:
 * what Elasticsearch security roles grant (docs/OPERATIONS.md "Least-privilege roles",
 * docs/examples/roles.yml). Every name is in exactly one of three groups, each under a prefix
 * of its own, so that one pattern grants a whole group and nothing of another:
 *
 * <ul>
 *   <li>{@link #LOCK_CHANGES}: what an application does to its own locks (acquire, release, renew,
 *   downgrade, sessions, groups; semaphores and elections use the same actions);</li>
 *   <li>{@link #LOCK_READS}: reads that change nothing (a key's holders, watches, the listing,
 *   stats, a node's diagnostics);</li>
 *   <li>{@link #LOCK_ADMIN}: what changes other owners' locks: taking locks away from their holders
 *   (force-release), changing a semaphore's limit, an acquire that preempts lower-priority
 *   holders. Not under
 *   {@code cluster:admin/locks}: a role granting {@code cluster:admin/locks/*} — or the raw
 *   prefix {@code cluster:admin/locks}, which Elasticsearch matches as {@code cluster:admin/locks*}
 *   — must not grant it.</li>
 * </ul>
 *
 * The plugin's other actions are {@code internal:locks/...} (replication, hand-over, ownership,
 * catch-up): the nodes send them as the system user, no role grants them, and no caller's
 * request is authorized against them. A request forwarded from the coordinating node to the
 * partition's owner travels under the same name as it arrived, so the role that allowed it on
 * one node allows it on the other.
 */
public final class LockActionNames {
    /** Lock changes by their holders. */
    public static final String LOCK_CHANGES = "cluster:admin/locks/";
    /** Reads of locks, stats and diagnostics. */
    public static final String LOCK_READS = "cluster:monitor/locks/";
    /** Operations on other owners' locks. */
    public static final String LOCK_ADMIN = "cluster:admin/lock_manager/";

    public static final String ACQUIRE = LOCK_CHANGES + "acquire";
    public static final String RELEASE = LOCK_CHANGES + "release";
    public static final String RENEW = LOCK_CHANGES + "renew";
    /** A held lock's mode weakened, without letting a writer in (docs/API.md, {@code POST /_locks/{key}/_downgrade}). */
    public static final String DOWNGRADE = LOCK_CHANGES + "downgrade";

    public static final String SESSION = LOCK_CHANGES + "session";
    /** Creating and deleting groups, and a member's own capabilities (docs/API.md "Groups"). */
    public static final String GROUP = LOCK_CHANGES + "group";

    public static final String GET = LOCK_READS + "get";
    public static final String WATCH = LOCK_READS + "watch";
    public static final String LIST = LOCK_READS + "list";
    public static final String STATS = LOCK_READS + "stats";
    public static final String NODE_DIAGNOSTICS = LOCK_READS + "node/diagnostics";
    public static final String DIAGNOSTICS = LOCK_READS + "diagnostics";

    public static final String FORCE_RELEASE = LOCK_ADMIN + "force_release";
    public static final String SEMAPHORE_LIMIT = LOCK_ADMIN + "semaphore_limit";
    public static final String PREEMPT = LOCK_ADMIN + "preempt";

    /** Every name above, by group. */
    public static final List<String> CHANGES = List.of(ACQUIRE, RELEASE, RENEW, DOWNGRADE, SESSION, GROUP);

    public static final List<String> READS = List.of(GET, WATCH, LIST, STATS, NODE_DIAGNOSTICS, DIAGNOSTICS);
    public static final List<String> ADMIN = List.of(FORCE_RELEASE, SEMAPHORE_LIMIT, PREEMPT);

    private LockActionNames() {}
}
