"""The checkout guard (tests/support/checkout_guard.py) fails a test that writes into the checkout: shown on a
throw-away git checkout in tmp whose tests write into it, run by a real pytest in a subprocess."""

from __future__ import annotations

import os

from tests.support.checkout_guard import CheckoutGuard, walk
from tests.support.paths import TESTS

HERE = TESTS
SUPPORT = TESTS / "support"


def test_guard_ignores_caches_and_dvc_scratch(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a")
    guard = CheckoutGuard(tmp_path)
    for d in ("__pycache__", ".pytest_cache", os.path.join(".dvc", "tmp"), ".git"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
        (tmp_path / d / "x").write_text("x")
    assert guard.check() == []
    (tmp_path / ".dvc" / "config").write_text("x")
    assert guard.check() == ["created .dvc/config"]
    assert guard.check() == []  # the new state is the reference


def test_guard_walk_covers_the_project_and_skips_virtualenvs(tmp_path):
    """The walk sees data/ and src/ of this checkout but no virtualenv (``.venv``, ``.venv-helm``):
    thousands of installed files would make the per-test walk slow (benchmarks/checkout_guard.py
    prints its cost)."""
    files = walk(str(HERE.parent))
    assert any(p.startswith("data" + os.sep) for p in files) and any(p.startswith("src" + os.sep) for p in files)
    assert not any(p.split(os.sep)[0].startswith(".venv") for p in files)
    for d in (".venv", ".venv-helm"):
        (tmp_path / d / "lib").mkdir(parents=True)
        (tmp_path / d / "lib" / "x.py").write_text("x")
    (tmp_path / "venvish").mkdir()
    (tmp_path / "venvish" / "y").write_text("y")
    assert sorted(walk(str(tmp_path))) == [os.path.join("venvish", "y")]


def test_with_watches_a_cheap_check_walks_only_after_an_event_it_covers(tmp_path, monkeypatch):
    """With inotify (Linux) the guard skips the walk after a test that raised no event; every kind of
    change to a walked file is still reported, in a directory made during the run too."""
    import tests.support.checkout_guard as guard_module

    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "a.py").write_text("a")
    guard = CheckoutGuard(tmp_path, watch=True)
    assert guard.watcher is not None, "inotify is available on the project's machines (Linux)"
    walks = []
    real_walk = guard_module.walk
    monkeypatch.setattr(guard_module, "walk", lambda root, dirs=None: walks.append(root) or real_walk(root, dirs))
    assert guard.check(cheap=True) == [] and walks == []  # nothing happened: no walk
    (tmp_path / "src" / "pkg" / "__pycache__").mkdir()
    (tmp_path / "src" / "pkg" / "__pycache__" / "a.pyc").write_bytes(b"x")
    assert guard.check(cheap=True) == [] and walks == []  # a cache the walk skips raises no walk either
    (tmp_path / "src" / "pkg" / "x.egg-info").write_text("a file, not the directory the walk skips")
    assert guard.check(cheap=True) == ["created src/pkg/x.egg-info"]
    walks.clear()
    with (tmp_path / "src" / "pkg" / "a.py").open("a") as f:  # appended in place: same directory entries
        f.write("b")
    assert guard.check(cheap=True) == ["changed src/pkg/a.py"]
    os.utime(tmp_path / "src" / "pkg" / "a.py", ns=(1, 1))  # only the mtime
    assert guard.check(cheap=True) == ["changed src/pkg/a.py"]
    (tmp_path / "data" / "new").mkdir(parents=True)
    (tmp_path / "data" / "new" / "x.csv").write_text("1")
    assert guard.check(cheap=True) == ["created data/new/x.csv"]
    (tmp_path / "data" / "new" / "x.csv").write_text("22")  # inside the directory made since the first walk
    assert guard.check(cheap=True) == ["changed data/new/x.csv"]
    os.rename(tmp_path / "data" / "new" / "x.csv", tmp_path / "src" / "x.csv")
    assert guard.check(cheap=True) == ["created src/x.csv", "deleted data/new/x.csv"]
    n = len(walks)
    assert guard.check(cheap=True) == [] and len(walks) == n
    assert guard.check() == [] and len(walks) == n + 1  # a full check walks regardless
