package org.eslm.client;

/** {@link LossWatchTest} again, over {@code Rest5Client}: both transports proven against the real node. */
class LossWatchRest5Test extends LossWatchTest implements NodeTest.OverRest5 {}
