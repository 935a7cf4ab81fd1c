package org.eslm.bridge;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Which copy of the native library a node loads. The plugin zip holds one library per platform,
 * {@code native/<platform>/libeslm.so} (pom.xml {@code native.platform}; the release zip of
 * {@code make dist} holds {@code linux-x86_64} and {@code linux-aarch64}, README "Install"). A
 * platform is {@code <os>-<arch>} from the JVM's {@code os.name} and {@code os.arch}, with the
 * names the zip uses: the JVM says {@code amd64} where the zip says {@code x86_64}.
 */
public final class NativePlatform {
    /** The folder of the plugin directory holding one folder per platform. */
    public static final String DIRECTORY = "native";
    /** The library's file name in each platform's folder. */
    public static final String LIBRARY = "libeslm.so";

    private NativePlatform() {}

    /** This JVM's platform name. */
    public static String current() {
        return of(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
    }

    /**
     * The platform name of {@code os.name} and {@code os.arch}, e.g. {@code Linux} and {@code
     * amd64} -> {@code linux-x86_64}; {@code Linux} and {@code aarch64} -> {@code linux-aarch64}.
     * Names with no alias are kept, in lower case without spaces, so the error for a platform the
     * zip lacks still names it ({@code Linux}, {@code riscv64} -> {@code linux-riscv64}).
     */
    public static String of(String osName, String osArch) {
        return os(osName) + "-" + arch(osArch);
    }

    private static String os(String osName) {
        String name = osName.toLowerCase(Locale.ROOT);
        if (name.startsWith("linux")) {
            return "linux";
        }
        if (name.startsWith("mac") || name.startsWith("darwin")) {
            return "macos";
        }
        if (name.startsWith("windows")) {
            return "windows";
        }
        return name.replaceAll("[^a-z0-9]", "");
    }

    private static String arch(String osArch) {
        String arch = osArch.toLowerCase(Locale.ROOT);
        return switch (arch) {
            case "amd64", "x86_64", "x86-64", "x64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch.replaceAll("[^a-z0-9_]", "");
        };
    }

    /**
     * The library for this JVM's platform in {@code pluginDir}, the plugin's directory.
     *
     * @throws IllegalStateException when the plugin holds none for it, with one line naming the
     *     platform and the platforms it holds (the node does not start)
     */
    public static Path library(Path pluginDir) {
        return library(pluginDir, System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
    }

    /** {@link #library(Path)} for a JVM reporting {@code osName} and {@code osArch}. */
    static Path library(Path pluginDir, String osName, String osArch) {
        Path library = pluginDir.resolve(DIRECTORY).resolve(of(osName, osArch)).resolve(LIBRARY);
        if (Files.isRegularFile(library) == false) {
            throw new IllegalStateException(missing(osName, osArch, held(pluginDir)));
        }
        return library;
    }

    /** The platforms {@code pluginDir} holds a library for, sorted. */
    public static List<String> held(Path pluginDir) {
        Path natives = pluginDir.resolve(DIRECTORY);
        if (Files.isDirectory(natives) == false) {
            return List.of();
        }
        try (Stream<Path> platforms = Files.list(natives)) {
            return platforms
                    .filter(p -> Files.isRegularFile(p.resolve(LIBRARY)))
                    .map(p -> p.getFileName().toString())
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list [" + natives + "]", e);
        }
    }

    /** The one line a node on a platform the plugin lacks stops with. */
    static String missing(String osName, String osArch, List<String> held) {
        return "the lock-manager plugin has no native library for this node's platform ["
                + of(osName, osArch)
                + "] (os.name ["
                + osName
                + "], os.arch ["
                + osArch
                + "]); the installed plugin holds "
                + (held.isEmpty() ? "none" : held.toString())
                + ": install a release zip that holds it (README \"Install\")";
    }
}
