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
