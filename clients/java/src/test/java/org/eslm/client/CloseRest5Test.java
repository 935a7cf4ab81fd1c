package org.eslm.client;

/** {@link CloseTest} again, over {@code Rest5Client}. */
class CloseRest5Test extends CloseTest implements NodeTest.OverRest5 {}
