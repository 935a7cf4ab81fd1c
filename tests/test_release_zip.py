"""The release zip's native libraries (issue 28 item 3; README "Install"): the plugin zip of this
Elasticsearch version holds `native/linux-x86_64/libeslm.so` and `native/linux-aarch64/libeslm.so`,
each an ELF shared object of its machine (EM_X86_64 62, EM_AARCH64 183) exporting every JNI
function LockNative.java declares and needing no glibc newer than the README states. The zip is the one `make build` built with `-Pall-platforms`
(the one the integration tests install); `make dist` runs the same check (scripts/native_zip.py)
on its copies in dist/. No node: reading a zip takes milliseconds."""

from __future__ import annotations

import functools
import re
import struct
import zipfile
from pathlib import Path

import pytest

import native_zip
import node as esnode

pytestmark = pytest.mark.every_version

ROOT = Path(__file__).resolve().parent.parent
JNI_API = ROOT / "rust/lock-jni/src/jni_api.rs"


@pytest.fixture(scope="module")
def plugin_zip() -> Path:
    z = esnode.plugin_zip(esnode.es_version())
    held = native_zip.platforms_in(z)
    assert "linux-aarch64" in held, (
        f"{z.name} holds {held}, not linux-aarch64: build it with `make build` "
        f"(mvn package -Pall-platforms), not plain `mvn package`")
    return z


@functools.cache
def library(zip_path: Path, platform: str) -> bytes:
    with zipfile.ZipFile(zip_path) as z:
        return z.read(f"native/{platform}/libeslm.so")


def test_the_jni_functions_are_those_lock_native_declares_and_rust_defines():
    symbols = native_zip.jni_symbols()
    assert len(symbols) >= 4, symbols
    assert "Java_org_eslm_bridge_LockNative_call" in symbols
    defined = re.findall(r'extern "system" fn (Java_org_eslm_bridge_LockNative_\w+)', JNI_API.read_text())
    assert sorted(symbols) == sorted(defined)


def test_the_arm64_library_is_an_aarch64_shared_object_exporting_every_jni_function(plugin_zip):
    elf = native_zip.read_elf(library(plugin_zip, "linux-aarch64"))
    assert elf.e_machine == native_zip.EM_AARCH64 == 183
    assert elf.e_type == native_zip.ET_DYN
    missing = set(native_zip.jni_symbols()) - elf.exported_functions
    assert not missing, f"the aarch64 library does not export {sorted(missing)}"
    assert (2, 17) <= elf.glibc() <= native_zip.MAX_GLIBC


def test_the_zip_holds_the_release_platforms_each_right_for_its_machine(plugin_zip):
    assert native_zip.platforms_in(plugin_zip) == sorted(native_zip.RELEASE_PLATFORMS)
    assert native_zip.check_zip(plugin_zip) == []
    assert native_zip.read_elf(library(plugin_zip, "linux-x86_64")).e_machine == native_zip.EM_X86_64


# The checks above can fail: the same reader on libraries that are wrong.

def test_a_library_of_the_wrong_machine_or_type_or_without_a_symbol_is_reported(plugin_zip):
    symbols = native_zip.jni_symbols()
    x86 = library(plugin_zip, "linux-x86_64")
    assert native_zip.check_library("linux-aarch64", x86, symbols) == [
        "linux-aarch64: ELF machine 62, expected 183"]
    arm = bytearray(library(plugin_zip, "linux-aarch64"))
    struct.pack_into("<H", arm, 16, 2)  # ET_EXEC
    assert native_zip.check_library("linux-aarch64", bytes(arm), symbols) == [
        "linux-aarch64: ELF type 2, expected 3 (a shared object)"]
    absent = "Java_org_eslm_bridge_LockNative_notThere"
    assert native_zip.check_library("linux-aarch64", library(plugin_zip, "linux-aarch64"), [*symbols, absent]) == [
        f"linux-aarch64: does not export ['{absent}']"]
    assert native_zip.check_library("linux-aarch64", b"PK\x03\x04", symbols) == ["linux-aarch64: not an ELF file"]


def test_a_library_needing_a_newer_glibc_than_the_readme_states_is_reported(plugin_zip, monkeypatch):
    arm = library(plugin_zip, "linux-aarch64")
    needed = native_zip.read_elf(arm).glibc()
    monkeypatch.setattr(native_zip, "MAX_GLIBC", (2, 17))
    assert native_zip.check_library("linux-aarch64", arm, native_zip.jni_symbols()) == [
        f"linux-aarch64: needs glibc {'.'.join(map(str, needed))}, newer than 2.17 (README \"Supported platforms\")"]


def test_a_zip_without_the_arm64_library_is_reported(plugin_zip, tmp_path):
    lacking = tmp_path / "x86-only.zip"
    with zipfile.ZipFile(plugin_zip) as src, zipfile.ZipFile(lacking, "w") as dst:
        for item in src.infolist():
            if not item.filename.startswith("native/linux-aarch64/"):
                dst.writestr(item, src.read(item))
    assert native_zip.check_zip(lacking) == ["no native/linux-aarch64/libeslm.so"]
