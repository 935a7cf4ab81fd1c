package org.eslm.client;

/** {@link LockClientTest} again, over {@code Rest5Client}: both transports proven against the real node. */
class LockClientRest5Test extends LockClientTest implements NodeTest.OverRest5 {}
