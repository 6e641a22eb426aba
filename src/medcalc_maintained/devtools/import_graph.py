"""The static import graph of the package, read from the source files (nothing is imported).

``closure(src, roots)`` is every module of ``medcalc_maintained`` that importing ``roots`` can run:
the imports at the top of each module and inside its functions (all of them may run), the
packages above each module (their ``__init__.py`` runs first), and the imports a module makes by
name at run time, which are read from the module that makes them (:data:`DYNAMIC`). Imports
under ``if TYPE_CHECKING:`` never run and are left out. ``graph(src)`` is every module -> the
package modules it imports (the layout tests read cycles and upward imports from it).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Callable, Iterable, Iterator

from medcalc_maintained.core.errors import DataError

PACKAGE = "medcalc_maintained"


def _calculator_modules(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MODULES" for t in node.targets)
                and isinstance(node.value, (ast.List, ast.Tuple))):
            names = [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(names) == len(node.value.elts):
                return [f"{PACKAGE}.calculators.{name}" for name in names]
    raise DataError("calculators/__init__.py", "no longer defines MODULES as a list of module names (the modules it imports by name): "
                    "update DYNAMIC in src/medcalc_maintained/devtools/import_graph.py")


# Modules that import others by a computed name (importlib.import_module), and how to read which.
DYNAMIC: dict[str, Callable[[ast.Module], list[str]]] = {f"{PACKAGE}.calculators": _calculator_modules}


@functools.lru_cache(maxsize=None)
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def parse(path: Path) -> ast.Module:
    """The syntax tree of ``path``, parsed once per text (a copy of the package in a test's tmp
    shares the trees of the checkout's files)."""
    return _parse(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def module_file(src: Path, name: str) -> Path | None:
    """The file of module ``name`` under ``src`` (the package directory), or None."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = src.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_name(src: Path, path: Path) -> str:
    rel = path.relative_to(src).with_suffix("")
    parts = [PACKAGE, *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for sub in child.orelse:
                yield from _import_nodes(sub)
            continue
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        yield from _import_nodes(child)


# An import statement that can run: (level, module, names); ``import a.b`` is (0, None, ("a.b",)).
Statement = tuple[int, "str | None", tuple[str, ...]]


def _statements(tree: ast.AST) -> tuple[Statement, ...]:
    return tuple((0, None, tuple(a.name for a in n.names)) if isinstance(n, ast.Import)
                 else (n.level, n.module, tuple(a.name for a in n.names)) for n in _import_nodes(tree))


@functools.lru_cache(maxsize=None)
def _module_statements(text: str) -> tuple[Statement, ...]:
    """The import statements of a whole module's text (read once per text)."""
    return _statements(_parse(text))


def imports_of(src: Path, name: str, tree: ast.AST | None = None) -> set[str]:
    """The package's modules that module ``name`` (or the given part ``tree`` of it) imports."""
    path = module_file(src, name)
    if tree is None:
        if path is None:
            raise DataError(src, f"no module {name} under it")
        text = path.read_text(encoding="utf-8")
        return _resolve(src, name, path, _module_statements(text), _parse(text) if name in DYNAMIC else None)
    return _resolve(src, name, path, _statements(tree), tree if isinstance(tree, ast.Module) else None)


def _resolve(src: Path, name: str, path: Path | None, statements: tuple[Statement, ...],
             module: ast.Module | None) -> set[str]:
    """The package modules that ``statements`` of module ``name`` import (``module``: its whole tree,
    for the modules of :data:`DYNAMIC`)."""
    package = name if path is not None and path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for level, module_name, names in statements:
        if module_name is None and level == 0:
            found.update(names)
            continue
        if level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - level + 1]
            base = ".".join(anchor + ([module_name] if module_name else []))
        else:
            base = module_name or ""
        found.add(base)
        for alias in names:
            if module_file(src, f"{base}.{alias}") is not None:
                found.add(f"{base}.{alias}")
    if name in DYNAMIC and module is not None:
        found.update(DYNAMIC[name](module))
    return {m for m in found if module_file(src, m) is not None}


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def closure(src: Path, roots: Iterable[str]) -> set[str]:
    """Every package module that importing ``roots`` can run (``roots`` included)."""
    seen: set[str] = set()
    todo = [p for r in roots for p in _with_parents(r)]
    while todo:
        name = todo.pop()
        if name in seen or module_file(src, name) is None:
            continue
        seen.add(name)
        for imported in imports_of(src, name):
            todo.extend(_with_parents(imported))
    return seen


def graph(src: Path) -> dict[str, set[str]]:
    """Every module of the package -> the package modules it imports."""
    return {module_name(src, p): imports_of(src, module_name(src, p))
            for p in sorted(src.rglob("*.py")) if "__pycache__" not in p.parts}
