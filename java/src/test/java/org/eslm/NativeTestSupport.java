package org.eslm;

import java.nio.file.Path;
import java.util.Map;
import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.eslm.bridge.BridgeField;
import org.eslm.bridge.LockNative;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.eslm.core.BridgeJson;
import org.eslm.rest.RequestBodies;
import org.eslm.settings.LockSettings;

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

    /**
     * The REST layer's reading of bodies over a real core configured with {@code settings}, as a
     * node has it (the core answers what it makes of a body: rust/lock-jni {@code ops/requests}).
     * The core lives for the rest of the test run.
     */
    public static RequestBodies bodies(Settings settings) {
        setUp();
        Map<String, Object> node =
                Map.of("config", LockSettings.Values.of(settings).coreConfig());
        NativeLockCore core = NativeLockCore.create(BridgeJson.toJson(node));
        return new RequestBodies(args -> BridgeJson.object(BridgeField.RESULT.in(
                BridgeJson.parse(core.call(NativeOp.READ_REQUEST, NativeLockCore.ALL_PARTITIONS, args)))));
    }
}
