package org.eslm.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which library a node loads from the plugin's {@code native/<platform>/}, and the one line it stops with. */
class NativePlatformTest {
    @TempDir
    Path pluginDir;

    @Test
    void theJvmNamesMapToTheZipsPlatformNames() {
        assertEquals("linux-x86_64", NativePlatform.of("Linux", "amd64"));
        assertEquals("linux-x86_64", NativePlatform.of("Linux", "x86_64"));
        assertEquals("linux-aarch64", NativePlatform.of("Linux", "aarch64"));
        assertEquals("linux-aarch64", NativePlatform.of("Linux", "arm64"));
        assertEquals("macos-aarch64", NativePlatform.of("Mac OS X", "aarch64"));
        assertEquals("windows-x86_64", NativePlatform.of("Windows Server 2022", "amd64"));
        // no alias: kept, so the message still names it
        assertEquals("linux-riscv64", NativePlatform.of("Linux", "riscv64"));
        assertEquals("freebsd-x86_64", NativePlatform.of("FreeBSD", "amd64"));
    }

    /** The build labels the library it compiled with pom.xml's native.platform: this JVM's platform. */
    @Test
    void thisJvmsPlatformIsTheOneTheBuildPackagedForIt() {
        assertEquals(System.getProperty("eslm.native.platform"), NativePlatform.current());
    }

    @Test
    void aNodeLoadsTheLibraryOfItsPlatform() throws IOException {
        Path x86 = library("linux-x86_64");
        Path arm = library("linux-aarch64");
        assertEquals(x86, NativePlatform.library(pluginDir, "Linux", "amd64"));
        assertEquals(arm, NativePlatform.library(pluginDir, "Linux", "aarch64"));
        assertEquals(List.of("linux-aarch64", "linux-x86_64"), NativePlatform.held(pluginDir));
    }

    @Test
    void onAPlatformTheZipLacksTheNodeStopsWithOneLineNamingItAndThoseTheZipHolds() throws IOException {
        library("linux-x86_64");
        library("linux-aarch64");
        Files.createDirectories(pluginDir.resolve("native/linux-s390x")); // a folder without the library
        IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> NativePlatform.library(pluginDir, "Linux", "riscv64"));
        assertEquals(
                "the lock-manager plugin has no native library for this node's platform [linux-riscv64]"
                        + " (os.name [Linux], os.arch [riscv64]); the installed plugin holds"
                        + " [linux-aarch64, linux-x86_64]: install a release zip that holds it (README \"Install\")",
                e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void aPluginWithoutAnyLibrarySaysItHoldsNone() {
        IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> NativePlatform.library(pluginDir, "Linux", "aarch64"));
        assertEquals(
                "the lock-manager plugin has no native library for this node's platform [linux-aarch64]"
                        + " (os.name [Linux], os.arch [aarch64]); the installed plugin holds none:"
                        + " install a release zip that holds it (README \"Install\")",
                e.getMessage());
    }

    /**
     * A library the linker refuses (here: not an ELF file; on a node, e.g. too old a C library).
     * HotSpot prints a harmless "might have disabled stack guard" warning when dlopen fails so.
     */
    @Test
    void aLibraryTheLinkerRefusesStopsTheNodeWithOneLineNamingItNotAnError() throws IOException {
        Path bogus = library("linux-x86_64");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> LockNative.systemLoad(bogus));
        assertTrue(e.getMessage().startsWith("cannot load the native lock library [" + bogus + "]: "), e.getMessage());
        assertTrue(e.getCause() instanceof UnsatisfiedLinkError, String.valueOf(e.getCause()));
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
    }

    private Path library(String platform) throws IOException {
        Path dir = Files.createDirectories(pluginDir.resolve("native").resolve(platform));
        return Files.writeString(dir.resolve("libeslm.so"), "not loaded by these tests");
    }
}
