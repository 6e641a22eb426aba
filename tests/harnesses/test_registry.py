"""The harness table (harnesses/registry.py) is the one place that names a harness: adding one touches its
folder (``harnesses/<name>_harness/``) and one row of the table. No module outside its folder but the table
imports a harness's reader; a harness added to the table, and only there, is detected, read and reproduced
by ``regrade``; and each reader reads a small run of its harness as the harness recorded it."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.devtools.import_graph import PACKAGE, graph
from medcalc_maintained.harnesses.registry import HARNESSES, detect_format, read_results, task_version
from medcalc_maintained.harnesses.results import Harness, ResultRow, Results
from medcalc_maintained.scoring.regrade import REFERENCE_COLUMNS, Reference, identify, reproduce
from tests.architecture.test_dependencies import OPTIONAL
from tests.support.paths import ROOT

SRC = ROOT / "src" / "medcalc_maintained"
ROW = {"uid": 3, "Calculator ID": "2", "Note ID": "n1", "Ground Truth Answer": "4", "Lower Limit": "4",
       "Upper Limit": "4", "Output Type": "integer", "Category": "risk"}


def write(path: Path, content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    jsonl = path.suffix == ".jsonl"  # JSON Lines: one record a line
    path.write_text("".join(json.dumps(r) + "\n" for r in content) if jsonl else json.dumps(content))
    return path


def test_every_harness_folder_is_one_row_of_the_table_and_holds_its_reader():
    folders = sorted(p.name for p in (SRC / "harnesses").iterdir() if (p / "__init__.py").is_file())
    rows = [h for h in HARNESSES.values() if h.folder is not None]
    assert sorted(h.folder for h in rows) == folders
    assert len(folders) >= 5  # lm-eval, Inspect, HELM, verifiers, MedCalc-Bench's run.py: never vacuous
    for h in rows:
        assert h.folder == f"{h.name.replace('-', '_')}_harness", h
        assert h.reader.__module__ == f"{PACKAGE}.harnesses.{h.folder}.reader", h
        assert h.grader in ("ours", "upstream"), h  # a grader of grading/graders.py
    for h in HARNESSES.values():  # evaluate's own predictions: no folder, nothing recorded to reproduce
        assert (h.folder is None) == (h.grader is None) == (h.name in ("jsonl", "csv")), h
    # a module directly in harnesses/ is shared by every harness or an adapter a row names
    adapters = [a for h in HARNESSES.values() for a in h.adapters]
    modules = sorted(p.stem for p in (SRC / "harnesses").glob("*.py"))
    assert sorted(m for m in modules if m not in ("__init__", "common", "results", "registry")) == sorted(adapters)
    assert all((SRC / "harnesses" / Path(*a.split("."))).with_suffix(".py").is_file() for a in adapters)


def test_only_the_table_imports_a_harness_folder():
    """What ``regrade`` knows of a harness comes from its row: no module outside the harness's folder
    but the table imports its reader."""
    folders = {h.folder for h in HARNESSES.values() if h.folder}
    importers = sorted(f"{mod} -> {imp}" for mod, imports in graph(SRC).items() for imp in imports
                       for folder in folders if imp.startswith(f"{PACKAGE}.harnesses.{folder}")
                       and not mod.startswith(f"{PACKAGE}.harnesses.{folder}"))
    assert importers and all(i.startswith(f"{PACKAGE}.harnesses.registry -> ") for i in importers), importers


def test_the_extras_and_task_versions_of_the_table_are_the_projects():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for h in HARNESSES.values():
        assert h.extra is None or h.extra in extras, h
        reader = f"harnesses/{h.folder}/reader.py"
        assert OPTIONAL.get(reader, h.extra) == h.extra, h  # a reader importing an extra imports its harness's
    assert (task_version("lm-eval"), task_version("inspect")) == (2, 2)
    with pytest.raises(ValueError, match="harness 'helm' has no task of ours"):
        task_version("helm")
    from medcalc_maintained.harnesses.lm_eval_task import Release, task_yaml

    release = Release(path="org/medcalc-maintained", revision="v2.1", version="2.1", local=False)
    assert "\n  version: 2.0\n" in task_yaml("mini", release)  # what lm-eval records, from the table


def read_toy(run: Path, max_line_bytes: int | None, harness: Harness) -> Results:
    """A harness of the test: ``toy.json`` holds ``[uid, output, verdict]`` rows and their accuracy."""
    doc = json.loads((run / "toy.json").read_text())
    rows = [ResultRow(where=f"{run}, row {i}", output=out, uid=uid, verdict=ok) for i, (uid, out, ok) in enumerate(doc["rows"])]
    return harness.results(run, rows, metric="acc", recorded=doc["acc"], recorded_from="toy.json: acc")


def test_a_harness_added_to_the_table_alone_is_detected_read_and_reproduced(tmp_path):
    toy = Harness("toy", "Toy", read_toy, grader="ours", folder="toy_harness", run_files=("toy.json",),
                  shape="a toy run (toy.json)")
    table = {**HARNESSES, "toy": toy}
    run = tmp_path / "run"
    write(run / "toy.json", {"rows": [[3, "<answer>4</answer>", True], [5, "<answer>7</answer>", True]], "acc": 1.0})
    assert detect_format(run, harnesses=table) == detect_format(run / "toy.json", harnesses=table) == "toy"
    with pytest.raises(DataError, match=r"neither a HELM run \(scenario_state.json\) nor verifiers results "
                                        r"\(results.jsonl \+ metadata.json\)$"):
        detect_format(run)  # the table without the row knows no such run
    with pytest.raises(ValueError, match=r"--format 'toy' is not one of lm-eval, inspect, helm, verifiers, upstream, eee, "
                                         r"jsonl, csv$"):
        read_results(run, "toy")
    res = read_results(run / "toy.json", harnesses=table)
    assert (res.path, res.format, res.harness, res.rule) == (run, "toy", "Toy", "ours")
    refs = {uid: dict.fromkeys(REFERENCE_COLUMNS, "") | {"Ground Truth Answer": label, "Lower Limit": label,
                                                        "Upper Limit": label, "Output Type": "integer"}
            for uid, label in ((3, "4"), (5, "6"))}
    ref = Reference("ref", refs)
    rep = reproduce(res, identify([res], ref), ref)  # the toy recorded uid 5 (answer 7, label 6) as correct
    assert (rep.n, rep.recorded_correct, rep.regraded_correct, rep.exact) == (2, 2, 1, False)
    assert rep.message.startswith("run: Toy acc 1 NOT reproduced: ")
    assert "rule 'ours' gives 1/2 = 0.5 against the recorded 2/2" in rep.message


def runs(root: Path) -> dict[str, Path]:
    """A small saved run of each harness whose reader needs no extra."""
    lm = write(root / "lm" / "samples_medcalc_maintained_mini_2026-01-02T03-04-05.678.jsonl", [
        {"doc": ROW, "filtered_resps": [["<answer>4</answer>"]], "acc": 1.0, "filter": "none"},
        {"doc": {**ROW, "uid": 4}, "filtered_resps": [["five"]], "acc": 0, "filter": "none"}])
    write(root / "lm" / "results_2026-01-02T03-04-05.678.json", {"results": {"medcalc_maintained_mini": {"acc,none": 0.5}}})
    state = {"request_states": [{"instance": {"id": "uid3", "split": "test", "extra_data": ROW},
                                 "result": {"completions": [{"text": "<answer>4</answer>"}]}}]}
    write(root / "helm" / "scenario_state.json", state)
    write(root / "helm" / "per_instance_stats.json",
          [{"instance_id": "uid3", "stats": [{"name": {"name": "medcalc_correct"}, "mean": 1}]}])
    write(root / "helm" / "stats.json", [{"name": {"name": "medcalc_correct", "split": "test"}, "mean": 1.0}])
    write(root / "vf" / "results.jsonl", [{"completion": [{"role": "assistant", "content": "<answer>5</answer>"}],
                                           "info": ROW, "metrics": {"correct": 0.0}}])
    write(root / "vf" / "metadata.json", {"avg_metrics": {"correct": 0.0}})
    up = write(root / "up" / "run.jsonl", [{"Row Number": 3, "Calculator ID": 2, "Note ID": "n1", "LLM Answer": "N/A",
                                            "Ground Truth Answer": "4", "Result": "Incorrect"}])
    return {"lm-eval": lm, "helm": root / "helm", "verifiers": root / "vf" / "results.jsonl", "upstream": up}


@pytest.mark.parametrize("name, rows, recorded, rule, recorded_from", [
    ("lm-eval", [(3, True), (4, False)], 0.5, "ours",
     "results_2026-01-02T03-04-05.678.json: results['medcalc_maintained_mini']['acc,none']"),
    ("helm", [(3, True)], 1.0, "ours", "stats.json: medcalc_correct (test split) mean"),
    ("verifiers", [(3, False)], 0.0, "ours", "metadata.json: avg_metrics['correct']"),
    ("upstream", [(3, False)], 0.0, "upstream", "the share of Result 'Correct' (compute_overall_accuracy)"),
])
def test_each_reader_reads_a_run_of_its_harness(tmp_path, name, rows, recorded, rule, recorded_from):
    path = runs(tmp_path)[name]
    assert detect_format(path) == name
    res = read_results(path)
    assert (res.format, res.harness, res.rule, res.recorded, res.recorded_from) == (
        name, HARNESSES[name].label, rule, recorded, recorded_from)
    assert [(r.uid, r.verdict) for r in res.rows] == rows
    assert res.path == (path.parent if HARNESSES[name].run_files and path.is_file() else path)  # a run: its directory


def test_an_inspect_log_is_detected_by_its_ending_and_read_only_with_inspect_ai(tmp_path):
    log = write(tmp_path / "log.json", {})
    assert detect_format(log) == detect_format(write(tmp_path / "log.eval", {})) == "inspect"
    with pytest.raises(DataError, match=r"reading an Inspect log needs inspect-ai|not a readable Inspect log"):
        read_results(log)  # refused, naming the file, with inspect-ai installed or not
