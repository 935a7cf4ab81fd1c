package org.eslm.client;

/** {@link SemaphoreTest} again, over {@code Rest5Client}: both transports proven against the real node. */
class SemaphoreRest5Test extends SemaphoreTest implements NodeTest.OverRest5 {}
