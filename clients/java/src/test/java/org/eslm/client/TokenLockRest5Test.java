package org.eslm.client;

/**
 * {@link TokenLockTest} again, over {@code Rest5Client}, but for the interrupt test: Rest5Client's
 * {@code Cancellable} does not close the connection of a request in flight, so the server keeps
 * the interrupted waiter until its wait runs out (README "Transports").
 */
class TokenLockRest5Test extends TokenLockTest implements NodeTest.OverRest5 {
    /** Not a test here (no {@code @Test}): see the class comment. */
    @Override
    void lockInterruptiblyGivesUpOnInterruptAndLeavesNoWaiter() {}
}
