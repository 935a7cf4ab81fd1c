package org.eslm.client;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eslm.client.errors.LockException;

/** A lost-lock listener that records what it was told, awaitable with a bound. */
final class LostRecorder implements LockLostListener {
    private final CountDownLatch told = new CountDownLatch(1);
    private final List<LockException> causes = new CopyOnWriteArrayList<>();

    @Override
    public void onLockLost(LockException cause) {
        causes.add(cause);
        told.countDown();
    }

    /** The first cause told, failing if none came within {@code time}. */
    LockException awaitCause(Duration time, String what) throws InterruptedException {
        assertTrue(told.await(time.toMillis(), TimeUnit.MILLISECONDS), what);
        return causes.get(0);
    }

    /** How many times it was told. */
    int calls() {
        return causes.size();
    }
}
