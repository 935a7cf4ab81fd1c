package org.eslm.bench;

import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eslm.bridge.LockNative;
import org.eslm.bridge.NativeLockCore;
import org.eslm.bridge.NativeOp;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One uncontended acquire + release per invocation:
 * <ul>
 *   <li>{@code jniAcquireRelease}: what the plugin does per lock operation in process — two
 *   {@link NativeLockCore#call} round trips (JSON string in, JNI, Rust lock core, JSON string out),
 *   the acquire with the fields a REST acquire carries (wait, lease, priority, request id);</li>
 *   <li>{@code jniVersionCall}: the bare JNI round trip (one native call returning a short string);</li>
 *   <li>{@code chmAcquireRelease}: a plain Java lock table, {@code ConcurrentHashMap.putIfAbsent} +
 *   {@code remove(key, owner)}: the floor of an in-JVM lock table without queues, leases or tokens.</li>
 * </ul>
 * The library path comes from the system property {@code eslm.lib} (default
 * {@code target/release/libeslm.so} from the repository root).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public class JniBench {
    /** What the plugin sends for a REST acquire with a wait, a lease and a priority. */
    private static final String ACQUIRE = "{\"key\":\"bench-key\",\"owner\":\"bench-owner\",\"wait_ms\":30000,"
            + "\"lease_ms\":60000,\"priority\":\"foreground\",\"request_id\":1}";

    private static final String RELEASE = "{\"key\":\"bench-key\",\"owner\":\"bench-owner\"}";

    private NativeLockCore core;
    private final ConcurrentHashMap<String, String> table = new ConcurrentHashMap<>();

    @Setup(Level.Trial)
    public void setUp() {
        LockNative.load(Path.of(System.getProperty("eslm.lib", "target/release/libeslm.so")));
        core = NativeLockCore.create("{}");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        core.close();
    }

    @Benchmark
    public int jniAcquireRelease() {
        String a = core.call(NativeOp.ACQUIRE, 0, ACQUIRE);
        String r = core.call(NativeOp.RELEASE, 0, RELEASE);
        return a.length() + r.length();
    }

    @Benchmark
    public String jniVersionCall() {
        return LockNative.nativeVersion();
    }

    @Benchmark
    public boolean chmAcquireRelease() {
        if (table.putIfAbsent("bench-key", "bench-owner") != null) {
            throw new IllegalStateException("held");
        }
        return table.remove("bench-key", "bench-owner");
    }
}
