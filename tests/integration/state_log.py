"""The lock state log as the tests see it on disk (docs/ARCHITECTURE.md "The state log"): where a
node keeps a partition's log, and its records as byte ranges, so that a test can do to the file
what a crash or a bad disk does (cut the last append short, flip a byte) without any code of the
plugin. The format: an 8-byte magic, the format number and a CRC32C; then per record its length, a
CRC32C of the payload, a CRC32C of those 8 bytes, and the payload (the batch's JSON)."""

from __future__ import annotations

import struct
from pathlib import Path

MAGIC = b"ESLMLOG\n"
HEADER_BYTES = len(MAGIC) + 8
FRAME_BYTES = 12


def log_file(node, partition: int = 0) -> Path:
    """The state log of `partition`'s copy on `node` (its one `.locks` index folder)."""
    found = sorted(node.data.glob(f"indices/*/{partition}/_state/locks-batches.log"))
    assert len(found) == 1, f"expected one lock state log on {node.name}, found {found}"
    return found[0]


def records(path: Path) -> list[tuple[int, int]]:
    """(start, end) of every whole record: the frame and its payload."""
    data = path.read_bytes()
    assert data[:len(MAGIC)] == MAGIC, f"{path} has no lock state log header"
    out, at = [], HEADER_BYTES
    while at + FRAME_BYTES <= len(data):
        (length,) = struct.unpack(">i", data[at:at + 4])
        end = at + FRAME_BYTES + length
        if end > len(data):
            break
        out.append((at, end))
        at = end
    return out


def payload(path: Path, record: tuple[int, int]) -> str:
    start, end = record
    return path.read_bytes()[start + FRAME_BYTES:end].decode()


def append_torn(path: Path) -> int:
    """Appends what a crash in the middle of an append leaves: the first half of a record (a
    copy of the last one). Answers how many bytes were appended."""
    start, end = records(path)[-1]
    fragment = path.read_bytes()[start:start + (end - start) // 2]
    with path.open("ab") as f:
        f.write(fragment)
    return len(fragment)


def flip_byte(path: Path, offset: int) -> None:
    """Flips one bit of the byte at `offset`, as a bad sector or a stray write would."""
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x10
    path.write_bytes(bytes(data))
