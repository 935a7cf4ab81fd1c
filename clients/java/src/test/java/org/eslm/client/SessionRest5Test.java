package org.eslm.client;

/** {@link SessionTest} again, over {@code Rest5Client}: both transports proven against the real node. */
class SessionRest5Test extends SessionTest implements NodeTest.OverRest5 {}
