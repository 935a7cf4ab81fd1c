package org.eslm.shedlock;

import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ShedLock's own test suite for extensible providers (shedlock-test-support), on the real node. */
class ShedLockSupportIntegrationTest extends AbstractExtensibleLockProviderIntegrationTest {
    @RegisterExtension
    static final ShedLockNode NODE = new ShedLockNode();

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return NODE.provider;
    }

    @Override
    protected void assertUnlocked(String lockName) {
        NODE.assertUnlocked(lockName);
    }

    @Override
    protected void assertLocked(String lockName) {
        NODE.assertLocked(lockName);
    }
}
