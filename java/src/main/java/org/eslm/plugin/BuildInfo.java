package org.eslm.plugin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.eslm.bridge.LockNative;

/** What was built and loaded: plugin and Elasticsearch versions, native versions and library path. */
public record BuildInfo(String pluginVersion, String elasticsearchVersion, String nativeVersion, String nativeLibrary) {

    /** Reads the versions Maven stamped into {@code build.properties} and asks the loaded library for its own. */
    public static BuildInfo current() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("build.properties")) {
            if (in == null) {
                throw new IllegalStateException("build.properties missing from the plugin jar");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new BuildInfo(
                p.getProperty("plugin.version"),
                p.getProperty("es.version"),
                LockNative.nativeVersion(),
                String.valueOf(LockNative.loadedFrom()));
    }

    /** The facts as a map for diagnostics. */
    public Map<String, Object> asMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", pluginVersion);
        m.put("elasticsearch_version", elasticsearchVersion);
        m.put("native_version", nativeVersion);
        m.put("native_library", nativeLibrary);
        return m;
    }
}
