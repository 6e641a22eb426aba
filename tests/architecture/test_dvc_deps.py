"""dvc.yaml's code deps cannot drift: they are generated, and dvc.yaml must be the generated text.

A stage ``NAME`` is the module ``stages/NAME.py`` (tests/architecture/test_layout.py checks that); what it can
run is the static import closure of that module (``devtools/import_graph.py``), plus the data files
those modules read (``devtools/dvc_deps.py: RESOURCES``). ``make deps`` (``medcalc-maintained
dvc-deps``) writes every stage's ``${src}`` deps by one rule (a directory when every file under it
is run, else each file) and the header's stage list; a hand edit of either fails here.
"""

from __future__ import annotations

import ast
import difflib
import re
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.devtools.dvc_deps import (
    BEGIN,
    END,
    RESOURCES,
    dep_entries,
    docstring_only,
    expand,
    generate,
    package_files,
    problems,
    regenerate,
    run_files,
)
from medcalc_maintained.devtools.import_graph import PACKAGE, graph, module_file
from medcalc_maintained.devtools.stage_list import render
from tests.support.paths import ROOT

SRC = ROOT / "src" / PACKAGE
STAGES = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]


def test_dvc_yaml_is_the_text_make_deps_generates():
    current, generated = generate(ROOT)
    diff = "".join(difflib.unified_diff(current.splitlines(True), generated.splitlines(True),
                                        "dvc.yaml", "dvc.yaml as `make deps` writes it", n=1))
    assert current == generated, ("dvc.yaml's code deps or stage list differ from the code: run `make deps` "
                                  f"(medcalc-maintained dvc-deps), then `dvc repro`\n{diff[:6000]}")


@pytest.mark.parametrize("stage", list(STAGES))
def test_the_deps_of_each_stage_are_exactly_what_it_runs_at_the_stated_granularity(stage):
    """Read back from dvc.yaml: the ${src} deps stand for the files the stage runs (and docstring-only
    package files, which run nothing), each listed directory is wholly run, and no listed file lies in
    a directory that is wholly run (it would have been listed instead)."""
    declared = [d.removeprefix("${src}/") for d in STAGES[stage]["deps"] if d.startswith("${src}/")]
    every = package_files(SRC)  # the package's files, listed once for the closure's folders and the expansions below
    need = run_files(SRC, stage, every)
    inert = {f for f in expand(SRC, declared, every) if f.endswith("__init__.py") and docstring_only(SRC / f)}
    assert expand(SRC, declared, every) - inert == need
    assert len(declared) == len(set(declared))
    for d in declared:
        if (SRC / d).is_dir():
            assert expand(SRC, [d], every) <= need | inert, d
        else:
            parent = str(Path(d).parent)
            assert parent == "." or not expand(SRC, [parent], every) <= need | inert, d


def test_the_header_lists_every_stage_once_each_after_the_stages_it_reads():
    text = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    header = text[text.index(BEGIN):text.index(END)]
    rows = re.findall(r"^#   ([a-z][a-z0-9-]*) +(?:<- ([^+\n]*))?", header, flags=re.M)
    names = [name for name, _ in rows]
    assert sorted(names) == sorted(STAGES) and len(names) == len(set(names))
    for i, (name, producers) in enumerate(rows):
        for p in filter(None, (p.strip() for p in producers.split(","))):
            assert p in names[:i], (name, p)
    # one stage checked by hand against its block: compare-report reads the release tables and ingest's instances
    assert dict(rows)["compare-report"].split(", ") == ["ingest", "release-tables"]


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(SRC, copy / "src" / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("dvc.yaml", "params.yaml", "docs/pipeline.md"):  # what `dvc-deps` reads and writes
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, copy / name)
    return copy


def _deps_cli(root: Path, *args: str):
    return CliRunner().invoke(app, ["dvc-deps", *args], env={"MEDCALC_ROOT": str(root), "COLUMNS": "250"})


def test_an_import_added_to_a_library_module_is_fixed_by_the_one_command(tmp_path):
    copy = _copy(tmp_path)
    assert problems(copy) == []
    target = copy / "src" / PACKAGE / "upstream" / "identity.py"
    # inside a function, as a lazy import would be: it runs all the same
    target.write_text(target.read_text(encoding="utf-8") + "\n\ndef _later():\n"
                      "    from medcalc_maintained.core import parallel\n", encoding="utf-8")
    found = problems(copy)
    users = {s for s in STAGES if "upstream/identity.py" in expand(SRC, [
        d.removeprefix("${src}/") for d in STAGES[s]["deps"] if d.startswith("${src}/")])}
    lacking = {s for s in users if "core/parallel.py" not in run_files(SRC, s)}
    assert {"ingest", "upstream-diff"} <= lacking
    assert {p.split(":")[0].removeprefix("dvc.yaml stage ") for p in found} == lacking
    assert "dvc.yaml stage ingest: deps differ from the code (1 to add: ${src}/core/parallel.py)" in found
    check = _deps_cli(copy, "--check")
    assert check.exit_code == 1 and "run `make deps`" in check.output
    before = (copy / "dvc.yaml").read_text(encoding="utf-8")
    assert _deps_cli(copy).exit_code == 0
    after = (copy / "dvc.yaml").read_text(encoding="utf-8")
    assert problems(copy) == [] and _deps_cli(copy, "--check").exit_code == 0
    changed = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:2] in ("+ ", "- ")]
    assert "+       - ${src}/core/parallel.py" in changed
    assert all(line[2:].startswith("      - ${src}/") for line in changed)  # deps lines only
    stages = yaml.safe_load(after)["stages"]
    for s in users:
        assert "core/parallel.py" in expand(copy / "src" / PACKAGE, [
            d.removeprefix("${src}/") for d in stages[s]["deps"] if d.startswith("${src}/")]), s


def test_a_hand_edit_of_a_deps_block_fails_and_the_command_undoes_it(tmp_path):
    copy = _copy(tmp_path)
    text = (copy / "dvc.yaml").read_text(encoding="utf-8")
    marker = "    cmd: medcalc-maintained ingest\n    deps:\n      - data/upstream/medcalc-bench\n"
    assert text.count(marker) == 1
    edited = text.replace(marker, marker + "      - ${src}/scoring/noise_diagnostics.py\n      - data/extra.csv\n")
    edited = edited.replace("      - ${src}/project.py\n", "", 1)  # and one needed file dropped
    (copy / "dvc.yaml").write_text(edited, encoding="utf-8")
    assert problems(copy) == ["dvc.yaml stage ingest: deps differ from the code (1 to add: ${src}/project.py; "
                              "1 to drop: ${src}/scoring/noise_diagnostics.py)",
                              "dvc.yaml header: the stage list differs from the stages"]  # ingest's new data dep
    lines = text.count("\n") + 1  # two lines added by hand, one dropped; the fix keeps the data dep: one more
    assert regenerate(copy) == (lines, lines)  # the library call of `make deps`
    assert regenerate(copy) is None  # the generated text already: nothing written
    # the code deps are back; the data dep added by hand is kept, with the other data deps
    row = "#   ingest               + data/upstream/medcalc-bench\n"
    assert text.count(row) == 1
    assert (copy / "dvc.yaml").read_text(encoding="utf-8") == text.replace(
        marker, marker + "      - data/extra.csv\n").replace(row, row[:-1] + ", data/extra.csv\n")


def test_everything_but_the_generated_parts_is_kept_byte_for_byte(tmp_path):
    copy = _copy(tmp_path)
    text = (copy / "dvc.yaml").read_text(encoding="utf-8")
    header = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    kept = text.replace("vars:\n", "# a hand-written comment, kept\nvars:\n", 1)
    kept = kept.replace("    cmd: medcalc-maintained ingest\n", "    cmd: medcalc-maintained ingest  # as typed\n", 1)
    (copy / "dvc.yaml").write_text(kept.replace(header, "# a stale list\n"), encoding="utf-8")
    assert problems(copy) == ["dvc.yaml header: the stage list differs from the stages"]
    current, generated = generate(copy)
    assert generated == kept


def test_a_deps_block_it_cannot_rewrite_is_refused_naming_stage_and_line(tmp_path):
    copy = _copy(tmp_path)
    text = (copy / "dvc.yaml").read_text(encoding="utf-8")
    marker = "    cmd: medcalc-maintained apply\n    deps:\n"
    (copy / "dvc.yaml").write_text(text.replace(marker, marker + "      # why\n"), encoding="utf-8")
    line = text[:text.index(marker)].count("\n") + 3
    with pytest.raises(DataError, match=rf"stage apply, line {line}: a deps: item is one line"):
        generate(copy)
    (copy / "dvc.yaml").write_text(text.replace(END, ""), encoding="utf-8")
    result = _deps_cli(copy)
    assert result.exit_code == 2 and "generated header block" in result.output
    assert (copy / "dvc.yaml").read_text(encoding="utf-8") == text.replace(END, "")  # nothing written


def test_the_granularity_rule_on_a_small_package(tmp_path):
    pkg = tmp_path / "pkg"
    for f, body in {"a/__init__.py": '"""Docs only."""\n', "a/x.py": "X = 1\n", "a/y.py": "Y = 1\n",
                    "a/__pycache__/x.cpython-311.pyc": "", "b/__init__.py": "import os\n", "b/z.py": "",
                    "c/d/v.py": "", "c/d/w.yaml": "", "c/u.py": ""}.items():
        (pkg / f).parent.mkdir(parents=True, exist_ok=True)
        (pkg / f).write_text(body, encoding="utf-8")
    # a/__init__.py runs nothing and the bytecode cache is no dep: a/ is wholly run
    assert dep_entries(pkg, {"a/x.py", "a/y.py", "b/z.py"}) == ["a", "b/z.py"]
    # b/__init__.py runs code: b/ is listed only with it; the highest wholly-run directory is listed
    assert dep_entries(pkg, {"b/__init__.py", "b/z.py", "c/d/v.py", "c/d/w.yaml"}) == ["b", "c/d"]
    assert dep_entries(pkg, {"a/x.py", "c/d/v.py", "c/d/w.yaml", "c/u.py"}) == ["a/x.py", "c"]


def _doc(stages: dict) -> dict:
    return {"vars": [{"src": "src/pkg"}], "stages": stages}


def test_the_stage_list_runs_each_stage_after_those_it_reads(tmp_path):
    (tmp_path / "params.yaml").write_text("b: {out: data/b}\n", encoding="utf-8")
    doc = _doc({
        "a": {"deps": ["data/b/part.csv", "${src}/x.py", "data/raw"], "outs": ["data/a.csv"]},
        "b": {"deps": ["data/raw"], "outs": [{"${b.out}": {"cache": False}}]},
        "c": {"deps": ["data/a.csv", "data/b"], "metrics": [{"data/c.json": {"cache": False}}]},
    })
    rows = [line for line in render(tmp_path, doc).splitlines() if re.match(r"#   \w", line)]
    assert [r.split()[1:] for r in rows] == [["b", "+", "data/raw"], ["a", "<-", "b", "+", "data/raw"],
                                             ["c", "<-", "a,", "b"]]
    doc["stages"]["b"]["deps"].append("data/c.json")
    with pytest.raises(DataError, match="a cycle"):
        render(tmp_path, doc)
    doc["stages"]["b"]["deps"].append("${nowhere.out}")
    with pytest.raises(DataError, match=r"\$\{nowhere.out\} is neither in vars: nor in params.yaml"):
        render(tmp_path, doc)


def test_every_data_file_of_the_package_has_a_reader_that_names_it():
    data = {p.relative_to(SRC).as_posix() for p in SRC.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts}
    def owned_by(entry: str) -> set[str]:  # a folder entry ("x/y/") stands for every file under it
        return {f for f in data if f.startswith(entry)} if entry.endswith("/") else {entry}

    owned = {f for files in RESOURCES.values() for e in files for f in owned_by(e)}
    assert data == owned
    for mod, files in RESOURCES.items():
        text = module_file(SRC, f"{PACKAGE}.{mod}").read_text(encoding="utf-8")
        for f in files:
            assert Path(f).stem in text and owned_by(f), (mod, f)


def test_params_yaml_sets_every_default_a_stage_reads():
    def leaves(tree, prefix=()):
        if isinstance(tree, dict) and tree:
            for key, value in tree.items():
                yield from leaves(value, prefix + (str(key),))
        else:
            yield ".".join(prefix)

    defaults = set(leaves(yaml.safe_load((SRC / "defaults.yaml").read_text(encoding="utf-8"))))
    params = set(leaves(yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))))
    # review.* configures the review commands and repro.* where `make repro` writes its stage times: no stage reads them
    assert sorted(k for k in defaults - params if not k.startswith(("review.", "repro."))) == []


def test_the_only_computed_imports_are_the_ones_the_graph_reads():
    users = sorted(p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")
                   if "import_module(" in p.read_text(encoding="utf-8"))
    # conformance imports the implementation under test (a user's module:function, the PyPI package
    # medcalc, a recorded repository's modules): never a module of this package, so the graph misses nothing
    assert users == ["calculators/__init__.py", "conformance/implementations.py", "conformance/medcalc_bench.py",
                     "conformance/recorded.py"]
    for path in users[1:]:
        text = (SRC / path).read_text(encoding="utf-8")
        assert "import_module(f\"medcalc_maintained" not in text and "import_module(\"medcalc_maintained" not in text
    assert {f"{PACKAGE}.calculators.{m}" for m in ("lab", "scores_misc")} <= graph(SRC)[f"{PACKAGE}.calculators"]


@pytest.mark.parametrize("stage", ["ingest", "compare"])
def test_the_closure_holds_what_each_stage_reaches_through_project_and_its_writers(stage):
    files = run_files(SRC, stage)
    assert {"project.py", "core/errors.py", "core/atomic.py", f"stages/{stage}.py"} <= files
    assert "__init__.py" not in files and "stages/__init__.py" not in files  # docstrings only
    assert "defaults.yaml" not in files  # OMITTED, with its reason
    tree = ast.parse((SRC / "stages" / f"{stage}.py").read_text(encoding="utf-8"))
    direct = {n.module.removeprefix(f"{PACKAGE}.").replace(".", "/") for n in ast.walk(tree)
              if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith(PACKAGE)}
    assert all(f"{m}.py" in files or f"{m}/__init__.py" in files or not (SRC / f"{m}.py").exists() for m in direct)
