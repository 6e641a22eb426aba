"""The suite mirrors the package (CONTRIBUTING "Development"): only conftest.py at tests/ root, a
package (``__init__.py``) in every folder of tests, a folder per package of src/medcalc_maintained plus
e2e/, architecture/ and support/; `slow` is set by tests/e2e/conftest.py alone, and no test file
changes sys.path (helpers import as ``tests.support.<name>``)."""

from __future__ import annotations

import ast
import re

from tests.support.paths import ROOT, TESTS

PACKAGE = ROOT / "src" / "medcalc_maintained"
EXTRA = {"e2e", "architecture", "support", "data"}


def holds_python(p):
    """A folder with a .py file in it or below (a folder left with only __pycache__ is no folder of the suite)."""
    return p.is_dir() and p.name != "__pycache__" and any(q for q in p.rglob("*.py") if "__pycache__" not in q.parts)


def folders(base):
    return [p for p in base.rglob("*") if holds_python(p) and "__pycache__" not in p.parts
            and "data" not in p.relative_to(TESTS).parts]


def test_only_conftest_and_a_docstring_only_init_live_at_the_root():
    assert sorted(p.name for p in TESTS.glob("*.py")) == ["__init__.py", "conftest.py"]
    body = ast.parse((TESTS / "__init__.py").read_text(encoding="utf-8")).body
    assert len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)


def test_every_folder_is_a_package():
    assert [p.relative_to(ROOT).as_posix() for p in folders(TESTS) if not (p / "__init__.py").is_file()] == []


def test_top_folders_are_packages_of_the_source_or_the_named_extras():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    for base in (TESTS, TESTS / "e2e"):
        tops = {p.name for p in base.iterdir() if holds_python(p) and p.name != "data"}
        extra = EXTRA if base == TESTS else {"pipeline", "architecture"}
        assert tops - packages - extra == set(), base



def test_every_package_of_the_source_has_its_folder_of_tests():
    """The other direction: no package of src/medcalc_maintained goes without ``tests/<package>/``
    (package data folders such as ``prompts/`` and ``schemas/`` hold no ``__init__.py``)."""
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert {"core", "devtools", "stages"} <= packages  # never vacuous
    assert sorted(packages - {p.name for p in TESTS.iterdir() if holds_python(p)}) == []

def test_slow_is_set_by_the_e2e_conftest_and_nowhere_under_e2e():
    marked = [p.relative_to(ROOT).as_posix() for p in (TESTS / "e2e").rglob("test_*.py")
              if re.search(r"mark\.slow\b", p.read_text(encoding="utf-8"))]
    assert marked == []
    assert "add_marker(pytest.mark.slow)" in (TESTS / "e2e" / "conftest.py").read_text(encoding="utf-8")


def test_no_test_module_changes_sys_path():
    changes = re.compile(r"\bsys\.path\.(insert|append|extend)\(|\bsys\.path\s*(\+=|=[^=])")
    found = [p.relative_to(ROOT).as_posix() for p in TESTS.rglob("*.py")
             if changes.search(p.read_text(encoding="utf-8"))]
    assert found == []
