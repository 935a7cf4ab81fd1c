package org.eslm;

import java.nio.file.Path;
import org.elasticsearch.common.logging.LogConfigurator;
import org.eslm.bridge.LockNative;

/** One-time set-up for tests that touch the native library or Elasticsearch exceptions. */
public final class NativeTestSupport {
    private static boolean done;

    private NativeTestSupport() {}

    /**
     * Configures Elasticsearch's logging (as ESTestCase would; its exceptions need it) and loads
     * the library Maven points to with {@code -Deslm.native.library}.
     */
    public static synchronized void setUp() {
        if (done) {
            return;
        }
        LogConfigurator.configureESLogging();
        LockNative.load(Path.of(System.getProperty("eslm.native.library")));
        done = true;
    }
}
