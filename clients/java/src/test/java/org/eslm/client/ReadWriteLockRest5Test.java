package org.eslm.client;

/** {@link ReadWriteLockTest} again, over {@code Rest5Client}. */
class ReadWriteLockRest5Test extends ReadWriteLockTest implements NodeTest.OverRest5 {}
