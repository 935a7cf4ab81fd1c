package org.eslm.client;

/** {@link ListenerTest} again, over {@code Rest5Client}. */
class ListenerRest5Test extends ListenerTest implements NodeTest.OverRest5 {}
