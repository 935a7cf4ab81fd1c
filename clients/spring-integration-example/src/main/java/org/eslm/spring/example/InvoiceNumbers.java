package org.eslm.spring.example;

import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.stereotype.Service;

/**
 * Hands out invoice numbers by reading the last one, taking a while, and writing the next: a
 * read-modify-write that loses numbers or gives one twice unless one caller at a time runs it,
 * whichever instance of the application it runs in. {@link LockRegistry#executeLocked} takes the
 * lock manager's lock {@code invoices-number} around it.
 *
 * <p>The "store" is this JVM's {@link #LAST} (shared by every instance the test starts), standing
 * in for the row or document an application would keep it in.
 */
@Service
public class InvoiceNumbers {
    /** The last number handed out, across instances. */
    public static final AtomicInteger LAST = new AtomicInteger();
    /** Callers inside the read-modify-write now, and the most seen at once (1 under the lock). */
    public static final AtomicInteger INSIDE = new AtomicInteger();

    public static final AtomicInteger MOST_INSIDE = new AtomicInteger();

    private final LockRegistry<?> locks;

    public InvoiceNumbers(LockRegistry<?> locks) {
        this.locks = locks;
    }

    /** The next invoice number: waits for the lock, then reads, waits 20 ms, writes. */
    public int next() throws InterruptedException {
        return locks.executeLocked("number", () -> {
            MOST_INSIDE.accumulateAndGet(INSIDE.incrementAndGet(), Math::max);
            try {
                int last = LAST.get();
                Thread.sleep(20); // another caller's read in this window would give the same number
                LAST.set(last + 1);
                return last + 1;
            } finally {
                INSIDE.decrementAndGet();
            }
        });
    }
}
