"""A full disk is not a traceback: `propose`, `review import` and `release build` writing onto a
full file system (a small tmpfs mounted in a private user and mount namespace, filled up first) end
with one line naming the file and "no space left on device", exit 1, and leave what was there
intact (no partial file, no scratch left behind)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.ledger.test_ledger_concurrency import packets, small_project
from tests.support.ledger_support import minimal_project
from tests.support.paths import ROOT

SRC = ROOT / "src"


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=8k tmpfs /mnt"], capture_output=True)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _namespaces_work(), reason="needs unshare -rm (user + mount namespaces) for a tmpfs")


def run_on_full_disk(full: Path, root: Path, *args: str) -> subprocess.CompletedProcess:
    """Mount a 64 KiB tmpfs on ``full`` (keeping what was in it), fill it up, then run the CLI."""
    keep = full.parent / f".{full.name}.keep"
    shutil.copytree(full, keep) if full.is_dir() else keep.mkdir()
    cli = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "medcalc_maintained.cli", *args))
    script = (f"mount -t tmpfs -o size=64k tmpfs {shlex.quote(str(full))} && "
              f"cp -a {shlex.quote(str(keep))}/. {shlex.quote(str(full))}/ && "
              f"(head -c 1000000 /dev/zero > {shlex.quote(str(full))}/filler.bin 2>/dev/null; true) && "
              f"{cli}; rc=$?; find {shlex.quote(str(full))} -mindepth 1 -not -name filler.bin | sort "
              f"> {shlex.quote(str(root))}/.seen; exit $rc")
    env = {**os.environ, "MEDCALC_ROOT": str(root), "PYTHONPATH": str(SRC)}
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)


def assert_one_line(proc: subprocess.CompletedProcess, names: str) -> str:
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "Traceback" not in out, out
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "no space left on device" in lines[0] and names in lines[0], out
    return lines[0]


def seen(root: Path) -> list[str]:
    """What was in the full directory when the command ended (the filler excepted)."""
    return [Path(p).name for p in (root / ".seen").read_text().split()]


# the CLI in a new process
def test_propose_on_a_full_disk(tmp_path, real_instances):
    root = minimal_project(tmp_path / "p", real_instances)
    corrections = root / "data" / "corrections"
    (corrections / "2026-03-proposals.yaml").write_text("corrections: []  # kept as it is\n")
    proc = run_on_full_disk(corrections, root, "propose", "--uid", "41", "--new-value", "N/A", "--error-type",
                            "unanswerable", "--rationale", "The note lacks an input.", "--date", "2026-03-02",
                            "--file", str(corrections / "2026-03-new.yaml"))
    assert_one_line(proc, "2026-03-new.yaml")
    assert seen(root) == ["2026-03-proposals.yaml"]  # no new file, no temporary file


# the CLI in a new process
def test_propose_appending_on_a_full_disk_keeps_the_file(tmp_path, real_instances):
    root = minimal_project(tmp_path / "p", real_instances)
    corrections = root / "data" / "corrections"
    (corrections / "2026-03-proposals.yaml").write_text("corrections: []  # kept as it is\n")
    proc = run_on_full_disk(corrections, root, "propose", "--uid", "41", "--new-value", "N/A", "--error-type",
                            "unanswerable", "--rationale", "The note lacks an input. " * 200, "--date", "2026-03-02")
    assert_one_line(proc, "2026-03-proposals.yaml")
    assert seen(root) == ["2026-03-proposals.yaml"]


# the CLI in a new process
def test_review_import_on_a_full_disk(tmp_path, real_instances):
    first, _ = packets(tmp_path, real_instances)
    root = small_project(tmp_path / "p", real_instances)
    proc = run_on_full_disk(root / "data" / "corrections", root, "review", "import", str(first),
                            "--decided-at", "2026-02-02")
    assert_one_line(proc, "review-packet.yaml")
    assert seen(root) == []


def test_release_build_on_a_full_disk(project_root, tmp_path):
    full = tmp_path / "disk"
    full.mkdir()
    proc = run_on_full_disk(full, project_root, "release", "build", "--out", str(full / "release"),
                            "--version", "1.0.0")
    assert_one_line(proc, str(full / "release"))
    assert seen(project_root) == []  # no partial build, no scratch directory
