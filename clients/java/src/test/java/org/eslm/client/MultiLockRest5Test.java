package org.eslm.client;

/** {@link MultiLockTest} again, over {@code Rest5Client}: both transports proven against the real node. */
class MultiLockRest5Test extends MultiLockTest implements NodeTest.OverRest5 {}
