"""The runtime dependencies of pyproject.toml are what src/ imports, and the extras what the optional
modules import: every third-party import of the package, read from the source (imports inside
functions included; under ``if TYPE_CHECKING:`` or in a ``try`` that catches ``ImportError`` they
are optional), mapped to its distribution by ``importlib.metadata.packages_distributions()``."""

from __future__ import annotations

import ast
import functools
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from medcalc_maintained.devtools.import_graph import parse
from tests.support.paths import ROOT

SRC = ROOT / "src" / "medcalc_maintained"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

# Modules whose third-party imports come from an extra, not from `dependencies` (None: no extra,
# crfm-helm lives in its own venv, `make harness-env H=helm`).
OPTIONAL = {
    "harnesses/inspect_task.py": "inspect",
    "harnesses/verifiers_env.py": "verifiers",
    "harnesses/helm_scenario.py": None,
    "harnesses/helm_run_spec.py": None,
    "harnesses/lm_eval_task.py": "lm-eval",  # its task class (the chat-template check) runs inside lm_eval
    "harnesses/inspect_harness/reader.py": "inspect",  # regrade of an Inspect log (a clear error without it)
    "scoring/report.py": "train",
    "scoring/safe_grpo.py": "train",
    "scoring/small_model.py": "train",
    "scoring/train.py": "train",
    "scoring/warmup.py": "train",
    "stages/compare_report.py": "train",
}

# Declared distributions that no module imports by name, and why each is declared all the same.
NOT_IMPORTED = {
    "ruamel-yaml-clib": "DVC's YAML reader is 4x faster with its C parser (comment in pyproject.toml)",
    "accelerate": "transformers' Trainer (under trl's GRPOTrainer) requires it at run time",
    "gguf": "transformers reads the GGUF of SmolLM2 with it (scoring/small_model.py, gguf_file=)",
    "fastapi": "`transformers serve`, the OpenAI-compatible server vf-eval talks to, runs on it (docs/harnesses.md, verifiers)",
    "uvicorn": "`transformers serve` runs its FastAPI app with it (docs/harnesses.md, verifiers)",
}


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (isinstance(t, ast.Attribute)
                                                                       and t.attr == "TYPE_CHECKING")


def _catches_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        if handler.type is None:
            return True
        names = {n.id for n in ast.walk(handler.type) if isinstance(n, ast.Name)}
        if names & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}:
            return True
    return False


def imports(tree: ast.AST, optional: bool = False):
    """(top-level module name, optional) of every absolute import under ``tree``."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and _is_type_checking(child):
            yield from (i for sub in child.orelse for i in imports(ast.Module(body=[sub], type_ignores=[]), optional))
            continue
        if isinstance(child, ast.Import):
            yield from ((a.name.split(".")[0], optional) for a in child.names)
        elif isinstance(child, ast.ImportFrom) and not child.level and child.module:
            yield child.module.split(".")[0], optional
        if isinstance(child, ast.Try) and _catches_import_error(child):
            yield from imports(ast.Module(body=child.body, type_ignores=[]), True)
            rest = [*child.handlers, *child.orelse, *child.finalbody]
            yield from (i for sub in rest for i in imports(ast.Module(body=[sub], type_ignores=[]), optional))
        else:
            yield from imports(child, optional)


@functools.cache
def third_party(src: Path) -> dict[str, dict[str, bool]]:
    """Top-level module -> {file relative to ``src``: whether every import of it there is optional}."""
    found: dict[str, dict[str, bool]] = {}
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        for top, optional in imports(parse(path)):
            if top in sys.stdlib_module_names or top == src.name:
                continue
            files = found.setdefault(top, {})
            files[rel] = files.get(rel, True) and optional
    return found


@functools.cache
def _installed() -> dict[str, list[str]]:
    return dict(packages_distributions())  # read once: it walks every installed distribution


def providers(top: str) -> set[str]:
    """The distributions that provide module ``top``: the installed ones, else (an extra not installed
    here, as in `make test-fast` on the venv `make venv` builds) the distribution of its own name."""
    return {normal(d) for d in _installed().get(top, [])} or {normal(top)}


def declared(group: list[str]) -> set[str]:
    return {normal(Requirement(r).name) for r in group}


def test_the_reader_sees_function_level_and_guarded_imports():
    tree = ast.parse("import a.b\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import t\n"
                     "def f():\n    from c.d import e\n    try:\n        import g\n    except ImportError:\n"
                     "        pass\n    try:\n        import h\n    except ValueError:\n        pass\n"
                     "from . import rel\n")
    assert sorted(imports(tree)) == [("a", False), ("c", False), ("g", True), ("h", False), ("typing", False)]


def test_every_required_import_of_a_module_is_a_declared_dependency_of_it():
    runtime = declared(PROJECT["dependencies"])
    extras = {name: declared(reqs) for name, reqs in PROJECT["optional-dependencies"].items()}
    problems = []
    for top, files in third_party(SRC).items():
        for rel, optional in files.items():
            if optional:
                continue
            allowed = runtime | (extras.get(OPTIONAL[rel], set()) if OPTIONAL.get(rel) else set())
            if rel in OPTIONAL and OPTIONAL[rel] is None:
                continue
            names = providers(top)
            if not names & allowed:
                where = f"the {OPTIONAL[rel]} extra" if OPTIONAL.get(rel) else "dependencies"
                problems.append(f"{rel} imports {top} ({', '.join(sorted(names))}), not in {where}")
    assert problems == []


def test_every_declared_dependency_is_imported_or_says_why_not():
    imported_by: dict[str, set[str]] = {}
    for top, files in third_party(SRC).items():
        for d in providers(top):
            imported_by.setdefault(d, set()).update(files)
    unused = sorted(d for d in declared(PROJECT["dependencies"]) if d not in imported_by and d not in NOT_IMPORTED)
    assert unused == []
    for extra in {e for e in OPTIONAL.values() if e} | {"gpu", "lm-eval"}:
        for d in declared(PROJECT["optional-dependencies"][extra]):
            users = {f for f in imported_by.get(d, set()) if OPTIONAL.get(f) == extra}
            assert users or d in NOT_IMPORTED, f"extra {extra}: {d} is imported by no module of that extra"
    assert all(normal(n) == n for n in NOT_IMPORTED)


@pytest.mark.parametrize("rel", sorted(OPTIONAL))
def test_each_optional_module_exists_and_imports_something_of_its_extra(rel):
    assert (SRC / rel).is_file(), rel
    assert any(rel in files for files in third_party(SRC).values()), rel


def test_nothing_in_src_imports_the_test_runner():
    assert "pytest" not in third_party(SRC) and "pytest" not in declared(PROJECT["dependencies"])
