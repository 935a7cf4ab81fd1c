#!/usr/bin/env python3
"""Checks the native libraries in plugin zips: each `native/<platform>/libeslm.so` is an ELF shared
object for its platform's machine that exports every JNI function the Java side declares and needs
no glibc newer than MAX_GLIBC.

    scripts/native_zip.py ZIP...      (`make dist` runs it on dist/*.zip; exit 1 on a problem)

The JNI functions come from the `native` methods of LockNative.java, the one class that declares
them (docs/ARCHITECTURE.md "The bridge"): `Java_org_eslm_bridge_LockNative_<method>`, so the list
is never kept by hand. The ELF reader is the few fields of the System V ABI this needs (the file
header, the section headers, `.dynsym`, `.gnu.version_r` and their string table), with the
standard library only.
tests/test_release_zip.py checks the zips `make build` and `make dist` produce with it."""

from __future__ import annotations

import re
import struct
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK_NATIVE = ROOT / "java/src/main/java/org/eslm/bridge/LockNative.java"
JNI_CLASS = "org.eslm.bridge.LockNative"
LIBRARY = "libeslm.so"

# e_machine of each platform the release zip holds (System V ABI; Linux <elf-em.h>).
EM_X86_64 = 62
EM_AARCH64 = 183
MACHINES = {"linux-x86_64": EM_X86_64, "linux-aarch64": EM_AARCH64}
# What `make dist` releases (docs/OPERATIONS.md "Supported platforms").
RELEASE_PLATFORMS = ("linux-aarch64", "linux-x86_64")

# The newest C library a released library may need (docs/OPERATIONS.md "Supported platforms"): the build
# machine's glibc sets it (Debian 12 has 2.36; Rust's std asks for 2.34's pthread symbols).
MAX_GLIBC = (2, 34)

ET_DYN = 3
SHT_DYNSYM = 11
SHT_GNU_VERNEED = 0x6FFFFFFE
STB_GLOBAL, STB_WEAK = 1, 2
STT_FUNC = 2
STV_DEFAULT = 0
SHN_UNDEF = 0


def jni_symbols(source: Path = LOCK_NATIVE) -> list[str]:
    """`Java_<class>_<method>` of every `native` method declared in `source` (comments ignored)."""
    text = source.read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    methods = re.findall(
        r"^\s*(?:(?:public|protected|private|static|final|synchronized)\s+)*native\s+[\w<>\[\]?, .]+?\s+(\w+)\s*\(",
        text, flags=re.M)
    if len(set(methods)) != len(methods):
        # Overloads get long JNI names (with the argument signature): not handled here.
        raise ValueError(f"overloaded native methods in {source}: {methods}")
    prefix = "Java_" + JNI_CLASS.replace(".", "_") + "_"
    return [prefix + m for m in methods]


@dataclass
class Elf:
    """The facts of an ELF file this check needs."""

    elf_class: int  # 1: 32-bit, 2: 64-bit
    e_type: int
    e_machine: int
    exported_functions: set[str]
    needed_versions: set[str]  # symbol versions it needs from other libraries, e.g. GLIBC_2.34

    def glibc(self) -> tuple[int, ...]:
        """The newest glibc version it needs ((0,) when none)."""
        return max((tuple(int(x) for x in v.removeprefix("GLIBC_").split("."))
                    for v in self.needed_versions if re.fullmatch(r"GLIBC_[0-9.]+", v)), default=(0,))


def read_elf(data: bytes) -> Elf:
    """Reads a little-endian 64-bit ELF file's header and the functions its `.dynsym` exports
    (defined, global or weak, default visibility)."""
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    elf_class, encoding = data[4], data[5]
    if elf_class != 2 or encoding != 1:
        raise ValueError(f"not a little-endian 64-bit ELF file (class {elf_class}, encoding {encoding})")
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    (e_shoff,) = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)

    def section(i: int) -> tuple[int, int, int, int, int]:
        """(sh_type, sh_offset, sh_size, sh_link, sh_entsize) of section i."""
        sh_type, = struct.unpack_from("<I", data, e_shoff + i * e_shentsize + 4)
        sh_offset, sh_size, sh_link, _, _, sh_entsize = struct.unpack_from(
            "<QQIIQQ", data, e_shoff + i * e_shentsize + 0x18)
        return sh_type, sh_offset, sh_size, sh_link, sh_entsize

    def string(table: bytes, at: int) -> str:
        return table[at:table.index(b"\0", at)].decode()

    exported: set[str] = set()
    needed: set[str] = set()
    for i in range(e_shnum):
        sh_type, offset, size, link, entsize = section(i)
        if sh_type not in (SHT_DYNSYM, SHT_GNU_VERNEED):
            continue
        _, str_offset, str_size, _, _ = section(link)
        strings = data[str_offset:str_offset + str_size]
        if sh_type == SHT_GNU_VERNEED:
            # Elf64_Verneed entries, each with a chain of Elf64_Vernaux (one per version needed).
            at = offset
            while True:
                _, count, _, aux, next_need = struct.unpack_from("<HHIII", data, at)
                vernaux = at + aux
                for _ in range(count):
                    _, _, _, name, next_aux = struct.unpack_from("<IHHII", data, vernaux)
                    needed.add(string(strings, name))
                    vernaux += next_aux
                if next_need == 0:
                    break
                at += next_need
            continue
        for at in range(offset, offset + size, entsize or 24):
            st_name, st_info, st_other, st_shndx = struct.unpack_from("<IBBH", data, at)
            bind, kind, visibility = st_info >> 4, st_info & 0xF, st_other & 0x3
            if (st_shndx != SHN_UNDEF and bind in (STB_GLOBAL, STB_WEAK) and kind == STT_FUNC
                    and visibility == STV_DEFAULT):
                exported.add(string(strings, st_name))
    return Elf(elf_class, e_type, e_machine, exported, needed)


def platforms_in(zip_path: Path) -> list[str]:
    """The platforms a plugin zip holds a library for, sorted."""
    with zipfile.ZipFile(zip_path) as z:
        names = z.namelist()
    return sorted(n.split("/")[1] for n in names
                  if n.startswith("native/") and n.endswith("/" + LIBRARY) and n.count("/") == 2)


def check_library(platform: str, data: bytes, symbols: list[str]) -> list[str]:
    """What is wrong with `data` as the library of `platform` (nothing: an empty list)."""
    if platform not in MACHINES:
        return [f"{platform}: no ELF machine known for this platform"]
    try:
        elf = read_elf(data)
    except (ValueError, struct.error) as e:
        return [f"{platform}: {e}"]
    problems = []
    if elf.e_machine != MACHINES[platform]:
        problems.append(f"{platform}: ELF machine {elf.e_machine}, expected {MACHINES[platform]}")
    if elf.e_type != ET_DYN:
        problems.append(f"{platform}: ELF type {elf.e_type}, expected {ET_DYN} (a shared object)")
    if elf.glibc() > MAX_GLIBC:
        problems.append(f"{platform}: needs glibc {'.'.join(map(str, elf.glibc()))}, "
                        f"newer than {'.'.join(map(str, MAX_GLIBC))} (README \"Supported platforms\")")
    missing = [s for s in symbols if s not in elf.exported_functions]
    if missing:
        problems.append(f"{platform}: does not export {missing}")
    return problems


def check_zip(zip_path: Path, platforms=RELEASE_PLATFORMS, symbols: list[str] | None = None) -> list[str]:
    """What is wrong with the plugin zip's libraries: every platform of `platforms` present, and
    each library in it right for its platform."""
    symbols = jni_symbols() if symbols is None else symbols
    held = platforms_in(zip_path)
    problems = [f"no native/{p}/{LIBRARY}" for p in platforms if p not in held]
    with zipfile.ZipFile(zip_path) as z:
        for platform in held:
            problems += check_library(platform, z.read(f"native/{platform}/{LIBRARY}"), symbols)
    return problems


def main(zips: list[str]) -> int:
    if not zips:
        print(__doc__)
        return 2
    symbols = jni_symbols()
    failed = False
    for z in zips:
        problems = check_zip(Path(z), symbols=symbols)
        if problems:
            failed = True
            print(f"{z}: " + "; ".join(problems))
        else:
            print(f"{z}: {', '.join(platforms_in(Path(z)))}: ELF shared objects of their machines, "
                  f"exporting the {len(symbols)} JNI functions of LockNative")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
