package org.eslm.client;

/** {@link WatchdogTest} again, over {@code Rest5Client}: both transports proven against the real node. */
class WatchdogRest5Test extends WatchdogTest implements NodeTest.OverRest5 {}
