package org.eslm.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.eslm.NativeTestSupport;
import org.eslm.action.LockActionNames;
import org.junit.jupiter.api.Test;

/**
 * The action names security roles grant (docs/OPERATIONS.md "Least-privilege roles"): every
 * action the plugin registers is in one group of {@link LockActionNames} or internal, and no
 * pattern that grants one group grants a name of another. The roles themselves are proven on a
 * node with security on (tests/integration/test_security.py).
 */
class ActionNamesTest {
    private static final List<List<String>> GROUPS =
            List.of(LockActionNames.CHANGES, LockActionNames.READS, LockActionNames.ADMIN);
    private static final List<String> PREFIXES =
            List.of(LockActionNames.LOCK_CHANGES, LockActionNames.LOCK_READS, LockActionNames.LOCK_ADMIN);

    @Test
    void everyRegisteredActionIsInOneGroupOrInternal() {
        Set<String> named = new HashSet<>();
        GROUPS.forEach(named::addAll);
        List<String> registered = new ArrayList<>();
        NativeTestSupport.setUp(); // the plugin's constructor needs Elasticsearch's logging, as on a node
        for (var action : new LockManagerPlugin().actions()) {
            String name = action.type().name();
            registered.add(name);
            assertTrue(
                    named.contains(name) || name.startsWith("internal:locks/"),
                    name + " is neither in LockActionNames nor internal");
        }
        assertTrue(registered.containsAll(named), "LockActionNames names an action the plugin does not register");
        assertEquals(registered.size(), new HashSet<>(registered).size(), "an action registered twice");
    }

    @Test
    void eachGroupLivesUnderItsOwnPrefix() {
        for (int g = 0; g < GROUPS.size(); g++) {
            for (String name : GROUPS.get(g)) {
                assertTrue(name.startsWith(PREFIXES.get(g)), name + " outside " + PREFIXES.get(g));
            }
        }
    }

    /**
     * Elasticsearch grants a cluster privilege given as an action name or pattern {@code p} to
     * every action matching {@code p + "*"} (x-pack's RawActionPatternClusterPrivilege), so the
     * patterns an operator writes for one group — with or without the slash, with or without
     * the star — must match nothing of another group.
     */
    @Test
    void noPatternForOneGroupGrantsAnotherGroupsAction() {
        for (int g = 0; g < GROUPS.size(); g++) {
            String prefix = PREFIXES.get(g);
            String bare = prefix.substring(0, prefix.length() - 1);
            for (String pattern : List.of(prefix, prefix + "*", bare, bare + "*")) {
                for (int other = 0; other < GROUPS.size(); other++) {
                    if (other == g) {
                        continue;
                    }
                    for (String name : GROUPS.get(other)) {
                        assertFalse(grants(pattern, name), pattern + " would grant " + name);
                    }
                }
            }
        }
        assertTrue(grants("cluster:admin/locks/*", LockActionNames.ACQUIRE));
        assertFalse(grants("cluster:admin/locks/*", LockActionNames.FORCE_RELEASE));
        assertFalse(grants("cluster:admin/locks", LockActionNames.FORCE_RELEASE));
        assertTrue(grants("cluster:admin/*", LockActionNames.FORCE_RELEASE));
    }

    /** Elasticsearch's reading of a raw action privilege: {@code pattern + "*"}, where {@code *} matches anything. */
    private static boolean grants(String pattern, String action) {
        String glob = pattern + "*";
        StringBuilder regex = new StringBuilder();
        for (char c : glob.toCharArray()) {
            regex.append(c == '*' ? ".*" : Pattern.quote(String.valueOf(c)));
        }
        return action.matches(regex.toString());
    }
}
