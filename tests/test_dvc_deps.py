"""dvc.yaml's code deps cannot drift: each stage declares every file its module can run.

A stage ``NAME`` is the module ``stages/NAME.py`` (tests/test_layout.py checks that); what it can
run is the static import closure of that module (tests/import_graph.py), plus the data files those
modules read (:data:`RESOURCES`). A declared directory covers every file under it. A code file the
closure lacks may not be declared either (a stale dep), and a declared directory must hold at least
one file of the closure.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
import yaml

from import_graph import PACKAGE, closure, graph, module_file, parse
from paths import ROOT

SRC = ROOT / "src" / "medcalc_maintained"

# Data files of the package and the module that reads each (its source names the file).
RESOURCES = {
    "calculators.base": ["calculators/plausibility.yaml"],
    "calculators.policy": ["calculators/definitions.yaml"],
    "calculators.population": ["calculators/populations.yaml"],
    "calculators.lexicon": ["calculators/lexicon.yaml"],
    "calculators.ranges": ["calculators/output_ranges.yaml"],
    "calculators.thresholds": ["calculators/thresholds.yaml"],
    "ledger.records": ["schemas/correction.schema.json"],
    "quality.checks.rules": ["quality/checks/rules.yaml"],
    "verifiers.prompts": ["prompts/audit_system.txt", "prompts/audit_user.txt",
                          "prompts/relabel_system.txt", "prompts/relabel_user.txt"],
    "project": ["defaults.yaml"],
}

# What a stage may leave out of its deps although its closure reaches it, and why (the one place).
OMITTED = {
    "defaults.yaml": "params.yaml sets every key the stages read (test_params_yaml_sets_every_default_"
                     "a_stage_reads) and DVC tracks those values as params, so a changed default cannot "
                     "change an output; listing it would rerun every stage on a documentation edit",
}


def docstring_only(path: Path) -> bool:
    """An ``__init__.py`` that holds nothing but its docstring runs nothing: no stage lists it."""
    if path.name != "__init__.py":
        return False
    body = parse(path).body
    return all(
        isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str) for n in body)


def stage_module(name: str) -> str:
    return f"{PACKAGE}.stages.{name.replace('-', '_')}"


def required_files(src: Path, stage: str) -> set[str]:
    """Paths relative to ``src`` that stage ``stage`` must declare (less :data:`OMITTED`)."""
    files = set()
    for mod in closure(src, [stage_module(stage)]):
        path = module_file(src, mod)
        if not docstring_only(path):
            files.add(path.relative_to(src).as_posix())
        files.update(RESOURCES.get(mod.removeprefix(f"{PACKAGE}."), ()))
    return files - set(OMITTED)


def dep_problems(root: Path) -> list[str]:
    """Every disagreement between dvc.yaml's code deps under ``root`` and the stages' closures."""
    src = root / "src" / PACKAGE
    dvc = yaml.safe_load((root / "dvc.yaml").read_text(encoding="utf-8"))
    prefix = "${src}/"
    assert dvc["vars"] == [{"src": f"src/{PACKAGE}"}]
    problems = []
    for stage, spec in dvc["stages"].items():
        declared = [str(d)[len(prefix):] for d in spec.get("deps", []) if str(d).startswith(prefix)]
        need = required_files(src, stage)
        for f in sorted(need):
            if not any(f == d or f.startswith(d.rstrip("/") + "/") for d in declared):
                problems.append(f"dvc.yaml stage {stage}: its module can run {prefix}{f}, not in its deps")
        for d in declared:
            if (src / d).is_dir():
                if not any(f.startswith(d.rstrip("/") + "/") for f in need):
                    problems.append(f"dvc.yaml stage {stage}: dep {prefix}{d} holds nothing its module runs")
            elif d not in need:
                problems.append(f"dvc.yaml stage {stage}: dep {prefix}{d} is not run by its module")
    return problems


def test_every_stage_declares_the_import_closure_of_its_module():
    assert dep_problems(ROOT) == []


@pytest.mark.slow  # dvc in a copy of the project
def test_a_stage_that_gains_an_undeclared_import_fails_on_a_copy(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(SRC, copy / "src" / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "dvc.yaml", copy / "dvc.yaml")
    assert dep_problems(copy) == []
    stage = copy / "src" / PACKAGE / "stages" / "ingest.py"
    # inside a function, as a lazy import would be: it runs all the same
    stage.write_text(stage.read_text(encoding="utf-8") + "\n\ndef _later():\n"
                     "    from medcalc_maintained.scoring import noise_diagnostics\n", encoding="utf-8")
    problems = dep_problems(copy)
    assert "dvc.yaml stage ingest: its module can run ${src}/scoring/noise_diagnostics.py, not in its deps" in problems
    # every stage that runs stages/ingest.py is reported, and no other
    importers = {s for s in yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
                 if "stages/ingest.py" in required_files(SRC, s)}
    assert {"ingest", "ledger-rebase"} <= importers
    assert {p.split(":")[0].removeprefix("dvc.yaml stage ") for p in problems} == importers


@pytest.mark.slow  # dvc in a copy of the project
def test_a_stale_dep_fails_on_a_copy(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(SRC, copy / "src" / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    text = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    marker = "    cmd: medcalc-maintained ingest\n    deps:\n"
    assert text.count(marker) == 1
    (copy / "dvc.yaml").write_text(text.replace(marker, marker + "      - ${src}/scoring/noise_diagnostics.py\n"),
                                   encoding="utf-8")
    assert dep_problems(copy) == ["dvc.yaml stage ingest: dep ${src}/scoring/noise_diagnostics.py is not run by its module"]


def test_every_data_file_of_the_package_has_a_reader_that_names_it():
    data = {p.relative_to(SRC).as_posix() for p in SRC.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts}
    owned = {f for files in RESOURCES.values() for f in files}
    assert data == owned
    for mod, files in RESOURCES.items():
        text = module_file(SRC, f"{PACKAGE}.{mod}").read_text(encoding="utf-8")
        for f in files:
            assert Path(f).stem in text, (mod, f)


def test_params_yaml_sets_every_default_a_stage_reads():
    def leaves(tree, prefix=()):
        if isinstance(tree, dict) and tree:
            for key, value in tree.items():
                yield from leaves(value, prefix + (str(key),))
        else:
            yield ".".join(prefix)

    defaults = set(leaves(yaml.safe_load((SRC / "defaults.yaml").read_text(encoding="utf-8"))))
    params = set(leaves(yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))))
    # review.* configures the review commands, which are no stage
    assert sorted(k for k in defaults - params if not k.startswith("review.")) == []


def test_the_only_computed_imports_are_the_ones_the_graph_reads():
    users = sorted(p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")
                   if "import_module(" in p.read_text(encoding="utf-8"))
    assert users == ["calculators/__init__.py"]
    assert {f"{PACKAGE}.calculators.{m}" for m in ("lab", "scores_misc")} <= graph(SRC)[f"{PACKAGE}.calculators"]


@pytest.mark.parametrize("stage", ["ingest", "compare"])
def test_the_closure_holds_what_each_stage_reaches_through_project_and_io(stage):
    files = required_files(SRC, stage)
    assert {"project.py", "core/io.py", f"stages/{stage}.py"} <= files
    assert "__init__.py" not in files and "stages/__init__.py" not in files  # docstrings only
