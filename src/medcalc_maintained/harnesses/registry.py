"""The harness table: one row per harness whose saved results ``regrade`` reads (name, what its
results look like, its reader, its own grading rule, its extra, the version its adapter gives its
task, its adapter's modules), and the readers of results that consult it.

A harness lives in its folder ``harnesses/<name>_harness/`` (its reader, ``reader.py``, and the
adapter of a new harness) and in one row of :data:`HARNESSES`. ``regrade`` (:func:`read_results`:
detection, reading, the rule it reproduces), ``--format`` and the adapters that ``harness lm-eval``
and Inspect run (the task version they record, :func:`task_version`) take everything else from the
row: adding a harness touches its folder and this table (``tests/harnesses/test_registry.py`` checks
it). The adapters of lm-eval, Inspect, verifiers and HELM keep the module names by which their
harness loads them, the released card and docs/harnesses.md name them, and written task directories import
them (``harnesses/lm_eval_task.py``, ``inspect_task.py``, ``verifiers_env.py``, ``helm_scenario.py``,
``helm_run_spec.py``, ``helm_model.py``): the column ``adapters`` names them. ``jsonl`` and ``csv``
are ``evaluate``'s own predictions, read by :func:`~.results.read_plain` (nothing recorded to reproduce).

:func:`detect_format`: a run directory is the harness whose ``run_files`` it holds; a file is a run's
first file (with the rest beside it), else the harness of its ending (``suffixes``), else, for JSON
Lines, the first harness whose ``first_line`` accepts the file's first line, in table order.
"""

from __future__ import annotations

import os
from pathlib import Path

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.harnesses.eee_harness import reader as eee
from medcalc_maintained.harnesses.helm_harness import reader as helm
from medcalc_maintained.harnesses.inspect_harness import reader as inspect_log
from medcalc_maintained.harnesses.lm_eval_harness import reader as lm_eval
from medcalc_maintained.harnesses.results import Harness, Results, first_record, read_plain
from medcalc_maintained.harnesses.upstream_harness import reader as upstream
from medcalc_maintained.harnesses.verifiers_harness import reader as verifiers

HARNESSES: dict[str, Harness] = {h.name: h for h in (
    Harness("lm-eval", "lm-eval", lm_eval.read, grader="ours", extra="lm-eval", task_version=2, folder="lm_eval_harness",
            adapters=("lm_eval_task",), first_line=lm_eval.is_sample, shape="lm-eval samples (doc, filtered_resps)"),
    Harness("inspect", "Inspect", inspect_log.read, grader="ours", extra="inspect", task_version=2,
            folder="inspect_harness", adapters=("inspect_task",), suffixes=(".eval", ".json")),
    Harness("helm", "HELM", helm.read, grader="ours", folder="helm_harness",
            adapters=("helm_scenario", "helm_run_spec", "helm_model"), run_files=("scenario_state.json",), shape="a HELM run (scenario_state.json)"),
    Harness("verifiers", "verifiers", verifiers.read, grader="ours", extra="verifiers", folder="verifiers_harness",
            adapters=("verifiers_env",), run_files=("results.jsonl", "metadata.json"), shape="verifiers results (results.jsonl + metadata.json)"),
    Harness("upstream", "MedCalc-Bench run.py", upstream.read, grader="upstream", folder="upstream_harness",
            first_line=upstream.is_run_output, shape="MedCalc-Bench's run.py output (Row Number, LLM Answer, Result)"),
    Harness("eee", "Every Eval Ever", eee.read, grader="ours", folder="eee_harness", first_line=eee.is_instance,
            shape="Every Eval Ever instance-level results (schema_version, sample_id, evaluation)"),
    Harness("jsonl", "predictions (JSONL)", read_plain, first_line=lambda rec: "uid" in rec,
            shape="predictions (uid, output)"),
    Harness("csv", "predictions (CSV)", read_plain, suffixes=(".csv",)),
)}


def task_version(name: str) -> int:
    """The version the adapter of harness ``name`` gives its task."""
    version = HARNESSES[name].task_version
    if version is None:
        raise ValueError(f"harness {name!r} has no task of ours")
    return version


def detect_format(path: os.PathLike | str, max_line_bytes: int | None = None,
                  harnesses: dict[str, Harness] | None = None) -> str:
    """The harness (format) of a results file or directory (see the module doc); a :class:`DataError`
    when it is none of ``harnesses`` (:data:`HARNESSES`)."""
    table = HARNESSES if harnesses is None else harnesses
    path = Path(path)
    runs = [h for h in table.values() if h.run_files]
    if path.is_dir():
        for h in runs:
            if all((path / f).is_file() for f in h.run_files):
                return h.name
        raise DataError(path, "unknown results directory: neither " + " nor ".join(h.shape for h in runs))
    if not path.is_file():
        raise DataError(path, "results file not found")
    for h in runs:
        if path.name == h.run_files[0] and all((path.parent / f).is_file() for f in h.run_files[1:]):
            return h.name
    for h in table.values():
        if path.suffix.lower() in h.suffixes:
            return h.name
    rec = first_record(path, max_line_bytes)
    for h in table.values():
        if h.first_line is not None and h.first_line(rec):
            return h.name
    shapes = [h.shape for h in table.values() if h.first_line is not None]
    raise DataError(f"{path}, line 1", f"unknown results format: keys {sorted(rec)[:12]}; expected "
                    f"{', '.join(shapes[:-1])} or {shapes[-1]}; or name it with --format ({', '.join(table)})")


def read_results(path: os.PathLike | str, fmt: str | None = None, *, max_line_bytes: int | None = None,
                 harnesses: dict[str, Harness] | None = None) -> Results:
    """One results file or directory of harness ``fmt`` (detected when ``None``), read by its row's reader."""
    table = HARNESSES if harnesses is None else harnesses
    path = Path(path)
    if fmt is not None and fmt not in table:
        raise ValueError(f"--format {fmt!r} is not one of {', '.join(table)}")
    harness = table[fmt or detect_format(path, max_line_bytes, table)]
    if harness.run_files and path.is_file():
        path = path.parent
    if not harness.run_files and not path.is_file():
        raise DataError(path, f"{harness.name} results must be a file")
    if harness.run_files and not path.is_dir():
        raise DataError(path, f"{harness.name} results must be a run directory")
    return harness.reader(path, max_line_bytes, harness)
