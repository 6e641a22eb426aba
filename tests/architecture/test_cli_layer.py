"""The command line parses and prints (issue 47, item 4; CONTRIBUTING "Where things live": `cli/`:
argument parsing and printing only): every command is one library call and its rendering, as DVC's
`commands/` call into `repo/`.

* A cli module imports public names of the package only: no private module (`stages/_llm.py`) and
  no private name (`_helper`), also not as an attribute of an imported module (`stage._helper`).
* From the ledger only its entry points (:data:`LEDGER_ENTRY_POINTS`: the package's own names and
  the function each command calls), never one of its internal modules (`ledger/derivation.py`,
  `ledger/records.py`, `ledger/rules.py`...).
* A stage module only whole, and only the module of a `dvc.yaml` stage, whose result the command
  renders (`from medcalc_maintained.stages import release as stage`, then `stage.run(...)`), never a
  name taken out of one (`from medcalc_maintained.stages.ingest import ingest`).
* A command's body, without its signature and docstring, holds at most :data:`MAX_COMMAND_LINES`
  lines of code; a command is a function decorated or registered with ``.command(...)`` or
  ``.callback(...)``, or one with a ``typer.Option``/``typer.Argument`` parameter.
* `compare`, `evaluate` and `regrade` live in modules of their own.

Each rule is a function of a module's source text, checked on a synthetic violation below."""

from __future__ import annotations

import ast
from collections import defaultdict
from typing import Iterator

import yaml

from medcalc_maintained.devtools.import_graph import parse
from tests.support.paths import ROOT

SRC = ROOT / "src" / "medcalc_maintained"
CLI = SRC / "cli"
PACKAGE = "medcalc_maintained"
MAX_COMMAND_LINES = 25
# module -> the names a command may import from it (None: every public name of the ledger package)
LEDGER_ENTRY_POINTS: dict[str, set[str] | None] = {
    f"{PACKAGE}.ledger": None,                                    # LedgerError, collect, ... (ledger/__init__.py)
    f"{PACKAGE}.ledger.propose": {"propose"},                     # propose
    f"{PACKAGE}.ledger.derivation_check": {"check_row"},          # ledger derive
}
STAGES = {name.replace("-", "_") for name in
          yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]}


def is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module or package of ``src/``."""
    path = SRC.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def package_imports(node: ast.AST, module: str) -> Iterator[tuple[int, str, str | None, str]]:
    """``(line, module, name, local name)`` of each import of the package under ``node`` (inside
    functions too); ``name`` is None for a whole module (``from pkg import submodule`` included)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name.split(".")[0] == PACKAGE:
                    yield n.lineno, a.name, None, a.asname or a.name.split(".")[0]
        elif isinstance(n, ast.ImportFrom):
            base = n.module or ""
            if n.level:  # relative: from the module's own package
                parent = module.split(".")[:-n.level]
                base = ".".join([*parent, *([base] if base else [])])
            if base.split(".")[0] != PACKAGE:
                continue
            for a in n.names:
                full = f"{base}.{a.name}"
                yield (n.lineno, full, None, a.asname or a.name) if is_module(full) else \
                    (n.lineno, base, a.name, a.asname or a.name)


def rule_problems(line: int, mod: str, name: str | None, *, attribute: bool = False) -> list[str]:
    """What breaks the import rules in one import (or one attribute of an imported module)."""
    what = f"{line}: {mod}" + (f".{name}" if name else "")
    parts = mod.split(".")[1:] + ([name] if name else [])
    if any(p.startswith("_") and p != "__init__" for p in parts):
        return [f"{what}: a private module or name"]
    if mod == f"{PACKAGE}.ledger" or mod.startswith(f"{PACKAGE}.ledger."):
        allowed = LEDGER_ENTRY_POINTS.get(mod, set())
        if not (allowed is None or (name is not None and name in allowed)):
            return [f"{what}: an internal of the ledger (entry points: tests/architecture/test_cli_layer.py)"]
    if mod.startswith(f"{PACKAGE}.stages.") and not attribute:
        if name is not None:
            return [f"{what}: a name out of a stage module (import the stage module whole and render its result)"]
        if len(mod.split(".")) != 3 or mod.split(".")[2] not in STAGES:
            return [f"{what}: not the module of a dvc.yaml stage"]
    return []


def import_problems(source: str, module: str = f"{PACKAGE}.cli.example") -> list[str]:
    """Every import of ``source`` (a cli module named ``module``) that breaks the rules above, and
    every private or ledger-internal attribute taken from an imported module (``stage._helper``)."""
    tree = ast.parse(source)
    found = [p for line, mod, name, _ in package_imports(tree, module) for p in rule_problems(line, mod, name)]

    def aliases(node: ast.AST) -> dict[str, str]:
        return {local: mod for _, mod, name, local in package_imports(node, module) if name is None}

    def visit(node: ast.AST, bound: dict[str, str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, {**bound, **aliases(child)})
                continue
            if isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name) and child.value.id in bound:
                mod, attr = bound[child.value.id], child.attr
                found.extend(rule_problems(child.lineno, f"{mod}.{attr}", None, attribute=True) if is_module(f"{mod}.{attr}")
                             else rule_problems(child.lineno, mod, attr, attribute=True))
            visit(child, bound)

    visit(tree, {local: mod for local, mod in aliases(tree).items()})
    return sorted(set(found), key=lambda p: (int(p.split(":")[0]), p))


def _is_registration(call: ast.AST) -> bool:
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("command", "callback"))


def _has_typer_parameter(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    defaults = [*fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]
    return any(isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in ("Option", "Argument")
               and isinstance(d.func.value, ast.Name) and d.func.value.id == "typer" for d in defaults)


def command_sizes(source: str) -> dict[str, int]:
    """Lines of code (not blank, not a comment) of the body of each command of ``source``, without
    its signature and docstring."""
    tree = ast.parse(source)
    lines = source.splitlines()
    registered = {n.args[0].id for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_registration(n.func)
                  and n.args and isinstance(n.args[0], ast.Name)}
    sizes = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not (fn.name in registered or any(_is_registration(d) for d in fn.decorator_list) or _has_typer_parameter(fn)):
            continue
        body = fn.body[1:] if ast.get_docstring(fn, clean=False) is not None else fn.body
        code = lines[body[0].lineno - 1:body[-1].end_lineno] if body else []
        sizes[fn.name] = sum(1 for line in code if line.strip() and not line.strip().startswith("#"))
    return sizes


def cli_modules():
    return sorted(CLI.glob("*.py"))


def module_name(path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


# -- the rules on the command line ---------------------------------------------------------------

def test_cli_modules_import_only_public_entry_points():
    found = {path.name: p for path in cli_modules()
             if (p := import_problems(path.read_text(encoding="utf-8"), module_name(path)))}
    assert found == {}


def test_no_command_holds_more_than_a_call_and_its_rendering():
    long = {f"{path.name}: {name}": n for path in cli_modules()
            for name, n in command_sizes(path.read_text(encoding="utf-8")).items() if n > MAX_COMMAND_LINES}
    assert long == {}


def test_the_rules_see_every_command_and_the_stage_and_ledger_imports_of_the_cli():
    """Never vacuous: every command registered on the app is one the size rule measures, and the
    command line does import stage modules and the ledger's entry points."""
    from medcalc_maintained.cli import app

    def callbacks(typer_app):
        for info in typer_app.registered_commands:
            yield info.callback
        for group in typer_app.registered_groups:
            if group.typer_instance.registered_callback is not None:
                yield group.typer_instance.registered_callback.callback
            yield from callbacks(group.typer_instance)

    measured = {(module_name(path), name) for path in cli_modules() for name in command_sizes(path.read_text(encoding="utf-8"))}
    registered = {(getattr(cb, "__wrapped__", cb).__module__, getattr(cb, "__wrapped__", cb).__name__)
                  for cb in callbacks(app)}
    assert len(registered) >= 40 and registered <= measured, registered - measured
    assert {("medcalc_maintained.cli.ledger", "derive_cmd"), ("medcalc_maintained.cli.review", "triage")} <= measured
    imported = [(mod, name) for path in cli_modules()
                for _, mod, name, _ in package_imports(parse(path), module_name(path))]
    assert sum(mod.startswith(f"{PACKAGE}.stages.") for mod, _ in imported) >= 15
    assert {(f"{PACKAGE}.ledger.derivation_check", "check_row"), (f"{PACKAGE}.ledger.propose", "propose")} <= set(imported)


def test_compare_evaluate_and_regrade_live_in_modules_of_their_own():
    from medcalc_maintained.cli import app

    by_module: dict[str, set[str]] = defaultdict(set)

    def walk(typer_app, prefix: str) -> None:
        for info in typer_app.registered_commands:
            by_module[getattr(info.callback, "__wrapped__", info.callback).__module__].add(prefix + info.name)
        for group in typer_app.registered_groups:
            walk(group.typer_instance, f"{prefix}{group.name} ")

    walk(app, "")
    assert by_module[f"{PACKAGE}.cli.evaluate"] == {"evaluate"}
    assert by_module[f"{PACKAGE}.cli.regrade"] == {"regrade"}
    assert by_module[f"{PACKAGE}.cli.compare"] == {f"compare {c}" for c in
                                                   ("train", "export", "analyze", "report", "run", "predictions", "example")}


# -- each rule fails on a synthetic violation ----------------------------------------------------

def test_the_import_rule_refuses_ledger_internals_stage_names_and_private_modules():
    bad = """
from medcalc_maintained.ledger import derivation as D
from medcalc_maintained.ledger.records import read_derivation_file
from medcalc_maintained.ledger.propose import current_row


def derive_cmd():
    from medcalc_maintained.stages.evaluate_example import new_run_dir
    from medcalc_maintained.stages import _llm
    from medcalc_maintained.stages import apply as stage

    stage._check(D.label_derivation)
"""
    found = import_problems(bad)
    assert [p.split(":")[0] for p in found] == ["2", "3", "4", "8", "9", "12", "12"], found
    assert all("an internal of the ledger" in p for p in found[:3]) and "a name out of a stage module" in found[3]
    assert "a private module or name" in found[4]
    assert found[5].startswith("12: medcalc_maintained.ledger.derivation.label_derivation: an internal of the ledger")
    assert found[6] == "12: medcalc_maintained.stages.apply._check: a private module or name"


def test_the_import_rule_accepts_entry_points_and_whole_stage_modules():
    good = """
import typer

from medcalc_maintained.cli.common import fail as _fail
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.ledger import LedgerError


def derive_cmd():
    from medcalc_maintained.ledger.derivation_check import check_row
    from medcalc_maintained.stages import release as stage

    return stage.run(check_row, LedgerError, DataError, _fail)


def other():
    from medcalc_maintained.stages import compare as stage

    return stage.ARMS
"""
    assert import_problems(good) == []
    # a name bound in one command is not another command's: `stage` of compare is no private access
    assert import_problems(good.replace("stage.ARMS", "stage._ARMS")) == [
        "19: medcalc_maintained.stages.compare._ARMS: a private module or name"]


def test_the_size_rule_measures_every_kind_of_command_and_refuses_a_long_one():
    logic = "".join(f"    x{k} = {k}\n" for k in range(MAX_COMMAND_LINES + 1))
    source = f'''
import typer


@group.command("derive")
def decorated():
    """A docstring is not counted."""
{logic}

def registered():
    # a comment is not counted

    return 1


def with_option(uid: int = typer.Option(..., "--uid")):
    return uid


def helper():
{logic}

def register(app):
    app.command("registered")(registered)
'''
    sizes = command_sizes(source)
    assert sizes == {"decorated": MAX_COMMAND_LINES + 1, "registered": 1, "with_option": 1}  # helper: no command
    assert [n for n, size in sizes.items() if size > MAX_COMMAND_LINES] == ["decorated"]
