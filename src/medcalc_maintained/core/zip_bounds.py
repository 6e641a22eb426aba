"""A zip a user gives (a review packet ``.xlsx``, an Inspect ``.eval`` log), bounded before any member
is read: the file's size and its count of members (from the end-of-central-directory record, before
the directory is parsed), then from the directory each member's and all members' unpacked size and
the compression ratio of every member over ``ratio_from`` bytes. A bomb is refused in milliseconds,
naming the file, the bound and the measured size.

The directory can understate a member's size. Python's ``zipfile`` never returns more than declared
(for deflate), but a reader that decompresses a member whole (inspect-ai does, for zstd as for
deflate) gets all of it; :func:`check_unpacked` counts what each member really unpacks to, in steps of
64 KiB, and refuses a member that unpacks to more than its entry declares."""

from __future__ import annotations

import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from medcalc_maintained.core.errors import DataError

_STEP = 1 << 16
_ZIP_ZSTANDARD = 93  # zip's method id of zstd (inspect-ai writes its logs with it)


@dataclass(frozen=True)
class ZipBounds:
    """The bounds of one kind of zip; ``what`` names the kind in messages ("a review packet")."""

    what: str
    max_bytes: int                  # the file itself
    max_unpacked: int               # all members, unpacked
    max_member: int | None = None   # one member, unpacked (None: only the total)
    max_members: int = 100_000
    max_ratio: int = 100            # unpacked / packed size of a member over ``ratio_from`` bytes
    ratio_from: int = 1 << 20


def _declared_members(path: Path) -> int | None:
    """The count of members the end-of-central-directory record declares (None when it cannot be read:
    ``zipfile`` then refuses the file)."""
    end_record = getattr(zipfile, "_EndRecData", None)
    if end_record is None:
        return None
    with path.open("rb") as fh:
        try:
            rec = end_record(fh)
        except (OSError, struct.error):
            return None
    return None if not rec else int(rec[4])  # _ECD_ENTRIES_TOTAL


def open_bounded(path: Path, bounds: ZipBounds, unreadable: str) -> zipfile.ZipFile:
    """The zip at ``path``, open, once its size, member count, unpacked sizes and compression ratios are
    within ``bounds`` (a :class:`DataError` names the first one out of bounds; ``unreadable`` is the
    problem of a file that is no zip: "not a readable .xlsx workbook"). The caller closes it."""
    size = path.stat().st_size
    if size > bounds.max_bytes:
        raise DataError(path, f"{size} bytes, over the {bounds.max_bytes}-byte limit for {bounds.what}")
    members = _declared_members(path)
    if members is not None and members > bounds.max_members:
        raise DataError(path, f"{members} members, over the {bounds.max_members}-member limit for {bounds.what}; "
                              "refused before its directory was read")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
        raise DataError(path, f"{unreadable} ({exc})") from None
    try:
        check_directory(path, zf.infolist(), bounds)
    except DataError:
        zf.close()
        raise
    return zf


def check_directory(path: Path, infos: list[zipfile.ZipInfo], bounds: ZipBounds) -> None:
    """Refuse the zip when its members' declared sizes are out of ``bounds`` (nothing is unpacked)."""
    if len(infos) > bounds.max_members:
        raise DataError(path, f"{len(infos)} members, over the {bounds.max_members}-member limit for {bounds.what}")
    total = sum(i.file_size for i in infos)
    if total > bounds.max_unpacked:
        raise DataError(path, f"unpacks to {total} bytes, over the {bounds.max_unpacked}-byte limit for {bounds.what} "
                              "(a zip bomb?)")
    for i in infos:
        if bounds.max_member is not None and i.file_size > bounds.max_member:
            raise DataError(path, f"member {i.filename[:80]} unpacks to {i.file_size} bytes, over the "
                                  f"{bounds.max_member}-byte limit of one member of {bounds.what}")
        if i.file_size > bounds.ratio_from and i.file_size > bounds.max_ratio * max(i.compress_size, 1):
            raise DataError(path, f"member {i.filename[:80]} is compressed {i.file_size // max(i.compress_size, 1)}:1, "
                                  f"over the {bounds.max_ratio}:1 limit (a zip bomb?)")


def check_unpacked(path: Path, zf: zipfile.ZipFile) -> None:
    """Refuse the zip when a member unpacks to more bytes than its directory entry declares, counted
    64 KiB at a time (at most the declared size and one step is unpacked per member)."""
    with path.open("rb") as fh:
        for info in zf.infolist():
            if info.is_dir():
                continue
            got = _unpacked_size(path, fh, info, info.file_size + 1)
            if got > info.file_size:
                raise DataError(path, f"member {info.filename[:80]} unpacks to more than the {info.file_size} bytes "
                                      "its directory entry declares (a zip bomb?); refused unread")


class _Slice:
    """The ``n`` bytes of ``fh`` from where it stands, as a readable stream."""

    def __init__(self, fh: BinaryIO, n: int):
        self.fh, self.left = fh, n

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        data = self.fh.read(size)
        self.left -= len(data)
        return data


def _unpacked_size(path: Path, fh: BinaryIO, info: zipfile.ZipInfo, cap: int) -> int:
    """The unpacked size of one member, counted up to ``cap`` bytes."""
    fh.seek(info.header_offset)
    head = fh.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise DataError(path, f"member {info.filename[:80]}: no local header where the directory says; not a zip")
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    fh.seek(info.header_offset + 30 + name_len + extra_len)
    raw = _Slice(fh, info.compress_size)
    if info.compress_type == zipfile.ZIP_STORED:
        return info.compress_size
    if info.compress_type == zipfile.ZIP_DEFLATED:
        return _count(path, info, _deflated(raw), cap)
    if info.compress_type == _ZIP_ZSTANDARD:
        try:
            import zstandard
        except ImportError:
            raise DataError(path, f"member {info.filename[:80]} is zstd-compressed; reading it needs the zstandard "
                                  "package") from None
        reader = zstandard.ZstdDecompressor().stream_reader(cast(BinaryIO, raw), read_size=_STEP, read_across_frames=True)
        return _count(path, info, iter(lambda: reader.read(_STEP), b""), cap)
    raise DataError(path, f"member {info.filename[:80]} is compressed with zip method {info.compress_type}; only "
                          "stored, deflate and zstd members are read")


def _deflated(raw: _Slice):
    """The unpacked bytes of a deflate stream, at most 64 KiB per step."""
    d = zlib.decompressobj(-15)
    pending = b""
    while not d.eof:
        pending = pending or raw.read(_STEP)
        if not pending:
            yield d.flush()
            return
        yield d.decompress(pending, _STEP)
        pending = d.unconsumed_tail


def _count(path: Path, info: zipfile.ZipInfo, chunks, cap: int) -> int:
    total = 0
    try:
        for chunk in chunks:
            total += len(chunk)
            if total >= cap:
                break
    except Exception as exc:  # zlib.error, zstd.ZstdError: a damaged member
        raise DataError(path, f"member {info.filename[:80]} is not readable ({type(exc).__name__}: {exc})") from None
    return total
