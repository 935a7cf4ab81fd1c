package org.eslm.shedlock;

import java.io.IOException;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's own test suite for extensible providers (shedlock-test-support), on the real node. */
class ShedLockSupportIntegrationTest extends AbstractExtensibleLockProviderIntegrationTest {
    private static ShedLockNode node;

    @BeforeAll
    static void connect() {
        node = new ShedLockNode();
    }

    @AfterAll
    static void disconnect() throws IOException {
        node.close();
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return node.provider;
    }

    @Override
    protected void assertUnlocked(String lockName) {
        node.assertUnlocked(lockName);
    }

    @Override
    protected void assertLocked(String lockName) {
        node.assertLocked(lockName);
    }
}
