"""A zip a user gives is bounded before any member is read (issue 46): its size, its count of members
(from the end record, before the directory is parsed), each member's and all members' unpacked size and
the compression ratio, each refusal naming the file, the bound and the measured size; and a member that
unpacks to more than its directory entry declares (deflate or zstd) is refused after unpacking at most
the declared size and one 64 KiB step. The CLI refusals are in tests/scoring/test_results_bounds.py."""

from __future__ import annotations

import random
import struct
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.zip_bounds import ZipBounds, _unpacked_size, check_unpacked, open_bounded

SMALL = ZipBounds("a test zip", max_bytes=1 << 20, max_unpacked=4 << 20, max_member=2 << 20, max_members=5,
                  max_ratio=100, ratio_from=1 << 16)
MEMBER = "samples/1_epoch_1.json"


def zip_with(path: Path, members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def declare(path: Path, member: str, size: int) -> Path:
    """``path`` with the unpacked size of ``member`` in its local header and directory entry set to ``size``."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    local = data.find(b"PK\x03\x04")
    while data[local + 30:local + 30 + len(name)] != name:
        local = data.find(b"PK\x03\x04", local + 4)
    central = data.find(b"PK\x01\x02")
    while data[central + 46:central + 46 + len(name)] != name:
        central = data.find(b"PK\x01\x02", central + 4)
    struct.pack_into("<I", data, local + 22, size)
    struct.pack_into("<I", data, central + 24, size)
    path.write_bytes(bytes(data))
    return path


def refusal(path: Path, bounds: ZipBounds = SMALL) -> str:
    with pytest.raises(DataError) as exc:
        with open_bounded(path, bounds, "not a readable test zip") as zf:
            check_unpacked(path, zf)
    return str(exc.value)


def test_each_bound_is_checked_from_the_directory_and_named(tmp_path):
    ratio = zip_with(tmp_path / "ratio.zip", {MEMBER: b" " * (1 << 20)})  # 1 MiB of spaces: ~1000:1
    assert refusal(ratio).startswith(f"{ratio}: member {MEMBER} is compressed ")
    assert "over the 100:1 limit (a zip bomb?)" in refusal(ratio)
    member = zip_with(tmp_path / "member.zip", {MEMBER: bytes(range(256)) * 12289}, zipfile.ZIP_STORED)
    assert refusal(member, replace(SMALL, max_bytes=8 << 20)) == (
        f"{member}: member {MEMBER} unpacks to 3145984 bytes, over the 2097152-byte limit of one member of a test zip")
    total = zip_with(tmp_path / "total.zip", {f"m{i}": bytes(range(256)) * 6000 for i in range(3)}, zipfile.ZIP_STORED)
    bigger = ZipBounds("a test zip", max_bytes=8 << 20, max_unpacked=4 << 20)
    assert refusal(total, bigger) == (f"{total}: unpacks to 4608000 bytes, over the 4194304-byte limit for a test zip "
                                      "(a zip bomb?)")
    assert refusal(total) == f"{total}: {total.stat().st_size} bytes, over the 1048576-byte limit for a test zip"
    many = zip_with(tmp_path / "many.zip", {f"m{i}": b"" for i in range(6)})
    assert refusal(many) == (f"{many}: 6 members, over the 5-member limit for a test zip; refused before its "
                             "directory was read")
    (tmp_path / "no.zip").write_bytes(b"not a zip")
    assert refusal(tmp_path / "no.zip").startswith(f"{tmp_path / 'no.zip'}: not a readable test zip (")


@pytest.mark.parametrize("method", ["deflate", "zstd"])
def test_a_member_unpacking_to_more_than_declared_is_refused_after_one_step(tmp_path, method):
    if method == "zstd":
        pytest.importorskip("zipfile_zstd")  # inspect-ai's patch of zipfile, as inspect writes its logs
        code = 93
    else:
        code = zipfile.ZIP_DEFLATED
    honest = {MEMBER: b'{"note": "' + random.Random(0).randbytes(100_000).hex().encode() + b'"}', "header.json": b"{}", "raw": b"x" * 10}
    path = zip_with(tmp_path / f"honest-{method}.eval", honest, code)
    with open_bounded(path, SMALL, "x") as zf, path.open("rb") as fh:
        check_unpacked(path, zf)  # an honest zip passes: every member unpacks to what it declares
        assert [_unpacked_size(path, fh, i, 1 << 40) for i in zf.infolist()] == [len(v) for v in honest.values()]
    # 64 MiB of spaces compress to ~64 KB: declared as 1,000 bytes, within every bound of the directory
    lying = tmp_path / f"lying-{method}.eval"
    with zipfile.ZipFile(lying, "w", code) as zf, zf.open(MEMBER, "w") as out:
        for _ in range(64):
            out.write(b" " * (1 << 20))
    declare(lying, MEMBER, 1000)
    assert refusal(lying, ZipBounds("a test zip", 1 << 20, 4 << 20)) == (
        f"{lying}: member {MEMBER} unpacks to more than the 1000 bytes its directory entry declares (a zip bomb?); "
        "refused unread")
