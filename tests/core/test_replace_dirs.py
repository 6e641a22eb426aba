"""Directories replaced as a whole (core/atomic.py) never lose what the writer did not write (issue 46):
`replace_files` carries every entry or refuses a folder it would lose, refuses a directory that changed
while it wrote, `swap_in_dir` re-checks the target at the moment of the swap, and the old set a kill
left aside between the two renames of the fallback swap is put back by the next writer; `write_dir`, the one
"write a directory whole" of the commands that write one (harness adapters, evaluate, regrade), leaves the old
set or the new and never its scratch directory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from medcalc_maintained.core.atomic import replace_files, scratch_dir, swap_in_dir, write_dir
from medcalc_maintained.core.errors import OutRefused
from medcalc_maintained.core.out_dirs import check_replace


def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root``: a folder, a link (its target) or a file's text."""
    return {str(p.relative_to(root)): ("dir" if p.is_dir() and not p.is_symlink() else
                                       f"-> {os.readlink(p)}" if p.is_symlink() else p.read_text())
            for p in sorted(root.rglob("*"))}


def dead_pid() -> int:
    """The pid of a process that has finished (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def writers(text: str):
    return {"a.json": lambda p: p.write_text(text), "b.json": lambda p: p.write_text(text)}


def test_a_directory_holding_a_folder_is_refused_whole(tmp_path):
    out = tmp_path / "out"
    (out / "objects" / "pack").mkdir(parents=True)
    (out / "objects" / "pack" / "p.pack").write_text("PACK")
    (out / "HEAD").write_text("ref\n")
    before = tree(tmp_path)
    with pytest.raises(OutRefused, match=r"out: holds the folder 'objects', which replacing the directory would lose"):
        replace_files(out, writers("new"))
    assert tree(tmp_path) == before  # nothing written, no scratch directory left


def test_plain_files_and_links_are_carried_over(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".gitignore").write_text("/a.json\n")
    (out / "a.json").write_text("old")
    (out / "link").symlink_to("a.json")
    replace_files(out, writers("new"))
    assert tree(out) == {".gitignore": "/a.json\n", "a.json": "new", "b.json": "new", "link": "-> a.json"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_file_saved_while_the_files_are_written_is_kept(tmp_path):
    out = tmp_path / "out"
    replace_files(out, writers("old"))

    def saving(path: Path) -> None:  # the user saves a file into the directory meanwhile
        (out / "notes.md").write_text("mine")
        path.write_text("new")

    with pytest.raises(OutRefused, match="changed while the new files were written"):
        replace_files(out, {"a.json": saving})
    assert tree(out) == {"a.json": "old", "b.json": "old", "notes.md": "mine"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_the_target_is_checked_again_at_the_moment_of_the_swap(tmp_path):
    out, new = tmp_path / "out", tmp_path / "new"
    for d, text in ((out, "old"), (new, "new")):
        d.mkdir()
        (d / "a.json").write_text(text)

    def check(target: Path) -> None:
        check_replace(target, command="x", writes={"a.json"}, required={"a.json"}, force=True)

    check(out)  # before the work: an earlier output
    (out / "thesis.tex").write_text("mine")  # saved during the work
    with pytest.raises(OutRefused, match=r"is not an earlier output of `x` \(holds 1 entry .*'thesis.tex'"):
        swap_in_dir(new, out, check=check)
    assert tree(out) == {"a.json": "old", "thesis.tex": "mine"}
    assert tree(new) == {"a.json": "new"}  # left to the caller


def test_the_old_set_a_killed_swap_left_aside_is_put_back(tmp_path):
    # the state a kill between the two renames of swap_in_dir's fallback leaves: no target, the old
    # set renamed aside with the dead writer's pid, its complete new set in its scratch directory
    pid = dead_pid()
    out = tmp_path / "out"
    (tmp_path / f".out.old-{pid}").mkdir()
    (tmp_path / f".out.old-{pid}" / "a.json").write_text("old")
    (tmp_path / f".out.{pid}-x1y2").mkdir()
    (tmp_path / f".out.{pid}-x1y2" / "a.json").write_text("new")
    (tmp_path / f".other.old-{pid}").mkdir()  # another target's: not this one's to restore
    tmp = scratch_dir(out)  # the next writer
    assert tree(out) == {"a.json": "old"}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".other.old-" + str(pid), "out", tmp.name])
    tmp.rmdir()


def test_a_swap_into_a_missing_target_puts_the_old_set_back_first(tmp_path):
    pid = dead_pid()
    out, new = tmp_path / "out", tmp_path / "new"
    (tmp_path / f".out.old-{pid}").mkdir()
    (tmp_path / f".out.old-{pid}" / "a.json").write_text("old")
    new.mkdir()
    (new / "a.json").write_text("new")
    with pytest.raises(OutRefused, match="exists and is not empty"):  # the restored set, as if never moved
        swap_in_dir(new, out, check=lambda t: check_replace(t, command="x", writes={"a.json"}, required=(), force=False))
    assert tree(out) == {"a.json": "old"}
    swap_in_dir(new, out, check=lambda t: check_replace(t, command="x", writes={"a.json"}, required=(), force=True))
    assert tree(out) == {"a.json": "new"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_write_dir_replaces_the_directory_whole_or_leaves_it(tmp_path):
    out = tmp_path / "out"
    assert write_dir(out, {"a.yaml": "one", "utils.py": "two"}) == out  # file name -> text, into a new directory
    assert tree(tmp_path) == {"out": "dir", "out/a.yaml": "one", "out/utils.py": "two"}

    def half(directory: Path) -> None:  # a writer that fails after its first file
        (directory / "a.yaml").write_text("three")
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        write_dir(out, half)
    assert tree(tmp_path) == {"out": "dir", "out/a.yaml": "one", "out/utils.py": "two"}  # no scratch left

    def only_earlier(target: Path) -> None:
        check_replace(target, command="x", writes={"a.yaml", "utils.py"}, required={"a.yaml"}, force=True)

    write_dir(out, lambda d: (d / "a.yaml").write_text("four"), check=only_earlier)
    assert tree(tmp_path) == {"out": "dir", "out/a.yaml": "four"}
    (out / "notes.md").write_text("mine")
    with pytest.raises(OutRefused, match="is not an earlier output of `x`"):
        write_dir(out, {"a.yaml": "five"}, check=only_earlier)
    assert tree(tmp_path) == {"out": "dir", "out/a.yaml": "four", "out/notes.md": "mine"}
