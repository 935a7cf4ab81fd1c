package org.eslm.client;

/** {@link ElectionTest} again, over {@code Rest5Client}: both transports proven against the real node. */
class ElectionRest5Test extends ElectionTest implements NodeTest.OverRest5 {}
