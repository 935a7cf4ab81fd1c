package org.eslm.client;

/**
 * {@link AsyncTest} again, over {@code Rest5Client}, but for the cancellation test: Rest5Client's
 * {@code Cancellable} does not close the connection of a request in flight, so the server never
 * sees the hang-up and keeps the waiter until its wait runs out (README "Transports").
 */
class AsyncRest5Test extends AsyncTest implements NodeTest.OverRest5 {
    /** Not a test here (no {@code @Test}): see the class comment. */
    @Override
    void cancellingAQueuedAcquireDropsTheWaiter() {}
}
