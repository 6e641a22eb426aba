"""``regrade``: a harness's saved results, first reproduced as the harness scored them, then re-scored
by ``evaluate`` under any releases and graders.

1. **Read** each results file or run directory with its harness's reader
   (:func:`medcalc_maintained.harnesses.registry.read_results`, the harness table: lm-eval samples,
   Inspect logs, HELM runs, verifiers results, MedCalc-Bench's run.py output, or ``evaluate``'s
   predictions).
2. **Identify** every row (:func:`identify`) as a row of the reference release (the first
   ``--against`` release, whose ``full`` config holds every row): by our ``uid``, which is upstream
   v1.0's ``Row Number`` (``ingest``), or by ``Calculator ID`` + ``Note ID`` when no row number is
   recorded, else by the note and question its prompt states (Every Eval Ever files). A row number
   that is no row, a recorded calculator, note id or note that differs from
   that row's (results made on another dataset version, e.g. upstream 2024-06, whose rows are
   renumbered), a row number and a ``Calculator ID`` + ``Note ID`` naming two different rows, or a
   row given twice (Inspect epochs, verifiers rollouts, several files) is refused, naming the file
   and line (or sample, or instance).
3. **Reproduce** the harness's score (:func:`reproduce`): each row's verdict is recomputed with the
   harness's own rule (:mod:`medcalc_maintained.grading.graders`: ``ours`` for our adapters, ``upstream`` for MedCalc-Bench's
   run.py, ``helm`` on the whole stripped completion for HELM's own scenario, whose metric extracts
   nothing) against the labels the harness recorded (the grading
   columns it did not record are the reference row's: upstream's run.py keeps no limits), and the
   count is compared with the verdicts and the score it recorded: "reproduced lm-eval acc 0.35
   (7/20) exactly", or which rows differ and why.
4. **Re-score** the outputs with :func:`~.evaluate.evaluate` under every ``--against`` release and
   ``--grader`` (accuracy per version, per calculator, the accuracy.png chart, the change due to
   labels apart from the change due to grading), and count the **tag compliance** of the outputs:
   the share with an ``<answer>`` tag and the share whose answer parses
   (:func:`~medcalc_maintained.core.answers.parse_model_answer`), per label set beside its accuracy,
   per calculator and overall.

Output: ``evaluate``'s files plus ``regrade.json`` (inputs, reproductions, compliance, the EEE
files), ``reproduction.csv`` (the rows whose verdict did not reproduce), ``compliance.csv`` and
``eee/<label set>.jsonl``: the re-graded rows of each label set and grader as Every Eval Ever
instance-level logs carrying the release tag and the labels' content hash (:mod:`.eee`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.answers import extract_answer, graded_answer, limits, parse_model_answer
from medcalc_maintained.core.atomic import write_dir, write_text_atomic
from medcalc_maintained.core.csv_for_people import write_csv_for_people
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.grading.graders import grader
from medcalc_maintained.harnesses.results import ResultRow, Results, text
from medcalc_maintained.scoring import eee
from medcalc_maintained.scoring.eee import to_jsonl
from medcalc_maintained.scoring.evaluate import EvaluationReport, evaluate

EEE_DIR = "eee"  # regrade's Every Eval Ever files: eee/<label set>.jsonl

REGRADE_FILES = frozenset({"regrade.json", "reproduction.csv", "compliance.csv"})
FILES = EvaluationReport.FILES | REGRADE_FILES
ALWAYS = EvaluationReport.ALWAYS | REGRADE_FILES
REFERENCE_COLUMNS = ("Calculator ID", "Calculator Name", "Note ID", "Patient Note", "Question", "Output Type",
                     "Category", "Ground Truth Answer", "Lower Limit", "Upper Limit")
SHOWN_DIFFERENCES = 10
COMPLIANCE_COLUMNS = ["scope", "name", "outputs", "tagged", "tagged_share", "parsable", "parsable_share"]


@dataclass
class Reference:
    """The rows results are identified against: a release's ``full`` config, by uid."""

    name: str
    rows: dict[int, dict[str, str]]                         # uid -> REFERENCE_COLUMNS as text
    by_key: dict[tuple[str, str], int] = field(default_factory=dict)  # (Calculator ID, Note ID) -> uid
    by_note: dict[str, list[int]] = field(default_factory=dict)       # Patient Note -> its uids (one per question)


def reference_rows(sources) -> Reference:
    """The ``full`` config of the first ``--against`` release (every row of the benchmark)."""
    src = next((s for s in sources if s.read_config is not None and "full" in s.config_names), None)
    if src is None:
        raise DataError("--against", "regrade needs a release (a version, tag or built release directory) among "
                                     "--against to identify rows by; label files carry no row identity")
    full = src.read_config("full")
    cols = {c: [text(v).strip() for v in full[c]] if c in full.columns else [""] * len(full)
            for c in REFERENCE_COLUMNS}
    rows = {int(u): {c: cols[c][i] for c in REFERENCE_COLUMNS} for i, u in enumerate(full["uid"].tolist())}
    keys = {(r["Calculator ID"], r["Note ID"]): u for u, r in rows.items() if r["Note ID"]}
    notes: dict[str, list[int]] = {}
    for u, r in rows.items():
        notes.setdefault(r["Patient Note"], []).append(u)
    return Reference(src.name, rows, keys, notes)


def _by_prompt(row: ResultRow, ref: Reference, taken: Container[int]) -> int | None:
    """The uid whose note is the recorded note and whose question opens the recorded prompt's text after
    the note (the longest such question: one question may begin another). Rows that share a note and
    question (7 pairs or triples of v1.0, each with one label in every release) are one prompt: they
    take its results in file order, the first row not yet ``taken`` (a result beyond them is refused
    as given twice)."""
    if row.note is None or row.question is None:
        return None
    found = [u for u in ref.by_note.get(row.note.strip(), []) if row.question.startswith(ref.rows[u]["Question"])]
    longest = max((len(ref.rows[u]["Question"]) for u in found), default=0)
    found = [u for u in found if len(ref.rows[u]["Question"]) == longest]
    return next((u for u in found if u not in taken), found[0] if found else None)


def _mismatch(row: ResultRow, ref: Reference, uid: int) -> str | None:
    got = ref.rows[uid]
    checks = (("Calculator ID", row.calculator_id), ("Note ID", row.note_id))
    for col, value in checks:
        if value is not None and text(value).strip() != got[col]:
            return f"recorded {col} {value!r}, but {row.by} {uid} of {ref.name} is {col} {got[col]!r}"
    if row.note is not None and row.note.strip() != got["Patient Note"]:
        return f"the recorded Patient Note is not the note of {row.by} {uid} of {ref.name}"
    return None


def _uid_of(row: ResultRow, ref: Reference, taken: Container[int]) -> int:
    """The uid of one recorded row (see the module doc for the rules), or a :class:`DataError`."""
    keyed = None
    if row.calculator_id is not None and row.note_id is not None:
        keyed = ref.by_key.get((text(row.calculator_id).strip(), text(row.note_id).strip()))
    if row.uid is None:
        keyed = keyed if keyed is not None else _by_prompt(row, ref, taken)
        if keyed is None:
            raise DataError(row.where, "no uid or Row Number, no Calculator ID + Note ID, and no note and question "
                                       f"of a row of {ref.name}: the row cannot be identified")
        return keyed
    if row.uid not in ref.rows:
        raise DataError(row.where, f"{row.by} {row.uid} is not a row of {ref.name} ({len(ref.rows)} rows, uid "
                                   f"{min(ref.rows)}..{max(ref.rows)})")
    if keyed is not None and keyed != row.uid:
        raise DataError(row.where, f"ambiguous row: {row.by} {row.uid} and Calculator ID {row.calculator_id} + Note "
                                   f"ID {row.note_id!r} (uid {keyed}) name two rows of {ref.name}; results made on "
                                   "another upstream version (its rows renumbered)? regrade identifies the rows of "
                                   "upstream v1.0, whose Row Number is our uid")
    problem = _mismatch(row, ref, row.uid)
    if problem:
        raise DataError(row.where, f"{problem}: results made on another dataset version? refused")
    return row.uid


def identify(results: list[Results], ref: Reference) -> dict[int, tuple[ResultRow, Results]]:
    """``{uid: (row, its results)}`` over every results file; one output per row."""
    out: dict[int, tuple[ResultRow, Results]] = {}
    for res in results:
        for row in res.rows:
            uid = _uid_of(row, ref, out)
            if uid in out:
                raise DataError(row.where, f"uid {uid} is given twice (also {out[uid][0].where}); regrade takes one "
                                           "output per row (Inspect epochs, verifiers rollouts_per_example and lm-eval "
                                           "repeats must be 1; regrade the files of one run together, of two runs apart)")
            out[uid] = (row, res)
    return out


# -- reproduction ---------------------------------------------------------------------------------

@dataclass
class Reproduction:
    """How the score a harness recorded was reproduced (see :func:`reproduce`)."""

    path: str
    harness: str
    metric: str | None
    rule: str | None
    recorded: float | None
    recorded_from: str
    n: int = 0
    recorded_correct: int = 0
    regraded_correct: int = 0
    exact: bool = False
    message: str = ""
    differences: list[dict[str, Any]] = field(default_factory=list)
    derived_limits: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("path", "harness", "metric", "rule", "recorded", "recorded_from", "n",
                                              "recorded_correct", "regraded_correct", "exact", "message",
                                              "derived_limits")} | {"differing_rows": len(self.differences)}


def grading_row(row: ResultRow, ref_row: dict[str, str]) -> tuple[dict[str, str], bool]:
    """The grading columns the harness used: those it recorded, the rest from the reference row (its
    limits only when the recorded label is the reference's; else derived from the label, ±5% for
    decimals, as upstream made them). Returns the columns and whether the limits were derived."""
    cols = {k: ref_row[k] for k in ("Calculator ID", "Category", "Output Type")} | dict(row.labels)
    label = cols.get("Ground Truth Answer", ref_row["Ground Truth Answer"])
    cols["Ground Truth Answer"] = label
    if "Lower Limit" in row.labels and "Upper Limit" in row.labels:
        return cols, False
    if text(label).strip() == ref_row["Ground Truth Answer"]:
        return cols | {"Lower Limit": ref_row["Lower Limit"], "Upper Limit": ref_row["Upper Limit"]}, False
    lo, hi = limits(label, cols["Output Type"])
    return cols | {"Lower Limit": lo, "Upper Limit": hi}, True


def whole_text_rule(name: str):
    """The rule ``name`` applied to the whole stripped output, as a harness that extracts nothing does
    (HELM's ``MedCalcBenchMetric``); :data:`~medcalc_maintained.grading.graders.GRADERS` first extracts the answer by our rule."""
    from medcalc_maintained.grading.graders import helm_rule, upstream_rule

    rules = {"helm": helm_rule, "upstream": upstream_rule}
    if name not in rules:
        raise ValueError(f"no whole-text form of grader {name!r}")
    return lambda row, output: rules[name](output.strip(), row)


def _score(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".") if x not in (0, 1) else str(int(x))


def reproduce(res: Results, uids: dict[int, tuple[ResultRow, Results]], ref: Reference) -> Reproduction:
    """Recompute every recorded verdict of ``res`` with its harness's rule and compare the counts with the
    score the harness recorded."""
    rep = Reproduction(str(res.path), res.harness, res.metric, res.rule, res.recorded, res.recorded_from)
    rows = [(u, r) for u, (r, owner) in uids.items() if owner is res and r.verdict is not None]
    name = f"{res.harness} {res.metric}" if res.metric else res.harness
    if not rows:
        rep.message = f"{res.path.name}: nothing to reproduce ({res.harness} records no per-row verdict)"
        return rep
    rep.n, rep.recorded_correct = len(rows), sum(bool(r.verdict) for _, r in rows)
    if res.rule is None:
        rep.message = (f"{res.path.name}: {name} {_score(res.recorded or 0)} not reproduced: the harness's grading rule "
                       "is not one of ours (a scorer of another task?)")
        return rep
    rule = grader(res.rule) if res.extracts else whole_text_rule(res.rule)
    for uid, row in rows:
        cols, derived = grading_row(row, ref.rows[uid])
        rep.derived_limits += derived
        again = bool(rule(cols, row.output))
        rep.regraded_correct += again
        if again != row.verdict:
            rep.differences.append({"file": str(res.path), "where": row.where, "uid": uid, "recorded": row.verdict,
                                    "regraded": again, "answer": graded_answer(row.output)[:200],
                                    "label": cols["Ground Truth Answer"], "lower": cols["Lower Limit"],
                                    "upper": cols["Upper Limit"], "output_type": cols["Output Type"]})
    return _conclude(rep, res, name)


def _conclude(rep: Reproduction, res: Results, name: str) -> Reproduction:
    n, k_rec, k_new = rep.n, rep.recorded_correct, rep.regraded_correct
    agg_ok = res.recorded is not None and abs(res.recorded - k_rec / n) < 1e-9
    head = f"{res.path.name}: "
    rule = f"rule {res.rule!r}" + ("" if res.extracts else " on the whole completion")
    if not rep.differences and agg_ok:
        rep.exact = True
        rep.message = (f"{head}reproduced {name} {_score(k_rec / n)} ({k_new}/{n}) exactly ({rule} on the labels it "
                       f"recorded; recorded: {res.recorded_from})")
        return rep
    why = []
    if not agg_ok:
        why.append(f"the recorded {name} {res.recorded!r} ({res.recorded_from}) is not its per-row verdicts' "
                   f"{k_rec}/{n} = {_score(k_rec / n)}")
    if rep.differences:
        shown = "; ".join(f"uid {d['uid']}: recorded {'correct' if d['recorded'] else 'wrong'}, regraded "
                          f"{'correct' if d['regraded'] else 'wrong'} (answer {d['answer']!r}, label {d['label']!r} "
                          f"[{d['lower']}, {d['upper']}] {d['output_type']})"
                          for d in rep.differences[:SHOWN_DIFFERENCES])
        why.append(f"{rule} gives {k_new}/{n} = {_score(k_new / n)} against the recorded {k_rec}/{n}; "
                   f"{len(rep.differences)} row(s) differ (reproduction.csv): {shown}")
    rep.message = f"{head}{name} {_score(res.recorded or 0)} NOT reproduced: " + "; ".join(why)
    return rep


# -- tag compliance -------------------------------------------------------------------------------

def compliance(uids: dict[int, tuple[ResultRow, Results]], ref: Reference, graded: pd.DataFrame) -> pd.DataFrame:
    """Per label set (on its scored rows), per calculator and over all outputs: how many outputs carry an
    ``<answer>`` tag and how many give a parsable answer (the tag is not counted where the results keep
    only an extracted answer: ``tagged`` empty)."""
    per = {}
    for uid, (row, res) in uids.items():
        tagged = extract_answer(row.output) is not None if res.whole_outputs else None
        parsable = parse_model_answer(graded_answer(row.output), ref.rows[uid]["Output Type"]) is not None
        per[uid] = (tagged, parsable, ref.rows[uid]["Calculator Name"])

    def line(scope: str, name: str, members: list[int]) -> dict[str, Any]:
        tags = [per[u][0] for u in members]
        counted = None if any(t is None for t in tags) else sum(bool(t) for t in tags)
        k = sum(per[u][1] for u in members)
        n = len(members)
        return {"scope": scope, "name": name, "outputs": n, "tagged": counted,
                "tagged_share": None if counted is None or not n else counted / n, "parsable": k,
                "parsable_share": k / n if n else None}

    lines = [line("all outputs", "", sorted(per))]
    for name, g in graded.groupby("label_set", sort=False):
        lines.append(line("label set", str(name), sorted(int(u) for u in g["uid"])))
    by_calc: dict[str, list[int]] = {}
    for uid, (_, _, calc) in per.items():
        by_calc.setdefault(calc, []).append(uid)
    lines += [line("calculator", calc, sorted(m)) for calc, m in sorted(by_calc.items())]
    return pd.DataFrame(lines, columns=COMPLIANCE_COLUMNS)


# -- the report -----------------------------------------------------------------------------------

@dataclass
class RegradeReport:
    """The re-score (``evaluation``, evaluate's report), the reproductions and the compliance table."""

    evaluation: EvaluationReport
    inputs: list[dict[str, Any]]
    reproductions: list[Reproduction]
    compliance: pd.DataFrame
    reference: str
    eee: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # eee/<file> -> its instance logs

    def to_dict(self) -> dict[str, Any]:
        records = json.loads(self.compliance.to_json(orient="records"))
        eee = {f"{EEE_DIR}/{name}": {k: logs[0]["metadata"][k] for k in ("label_set", "grader", "release",
                                                                         "release_tag", "labels_sha256")}
               | {"rows": len(logs), "correct": sum(log["evaluation"]["is_correct"] for log in logs)}
               for name, logs in self.eee.items() if logs}
        return {"inputs": self.inputs, "rows_identified_against": self.reference,
                "reproduction": [r.to_dict() for r in self.reproductions],
                "compliance": records, "graders": self.evaluation.graders,
                "label_sets": self.evaluation.sources, "evaluation": "evaluation.json", "eee": eee}

    def differences(self) -> pd.DataFrame:
        cols = ["file", "where", "uid", "recorded", "regraded", "answer", "label", "lower", "upper", "output_type"]
        return pd.DataFrame([d for r in self.reproductions for d in r.differences], columns=cols)

    def write(self, out_dir: os.PathLike | str) -> None:
        out = Path(out_dir)
        self.evaluation.write(out)
        write_text_atomic(out / "regrade.json", json.dumps(self.to_dict(), indent=2) + "\n")
        write_csv_for_people(out / "reproduction.csv", self.differences())
        write_csv_for_people(out / "compliance.csv", self.compliance)
        if self.eee:
            (out / EEE_DIR).mkdir(exist_ok=True)
            for name, logs in self.eee.items():
                write_text_atomic(out / EEE_DIR / name, to_jsonl(logs))


def regrade_results(results: list[Results], sources, *, n_boot: int, seed: int,
                    graders: list[str] | None = None, steps: bool = False) -> RegradeReport:
    """Identify, reproduce and re-score ``results`` (read) under the label ``sources`` (``--against``)."""
    ref = reference_rows(sources)
    uids = identify(results, ref)
    reproductions = [reproduce(r, uids, ref) for r in results]
    graders = graders or list(dict.fromkeys(["ours", *(r.rule for r in results if r.rule)]))
    notes = [n for r in results for n in r.notes]
    preds = {uid: row.output for uid, (row, _) in sorted(uids.items())}
    report = evaluate(preds, sources, n_boot=n_boot, seed=seed, notes=notes, graders=graders, steps=steps)
    inputs = [{"path": str(r.path), "format": r.format, "harness": r.harness, "rows": len(r.rows),
               "metric": r.metric, "rule": r.rule, "recorded": r.recorded, "recorded_from": r.recorded_from}
              for r in results]
    model = next((r.model for r in results if r.model), "unknown")
    return RegradeReport(report, inputs, reproductions, compliance(uids, ref, report.graded), ref.name,
                         eee_logs(report, sources, ref, preds, model))


def eee_logs(report: EvaluationReport, sources, ref: Reference, outputs: dict[int, str],
             model: str) -> dict[str, list[dict[str, Any]]]:
    """The EEE instance logs of every label set and grader (:mod:`.eee`), by file name."""
    from medcalc_maintained.scoring.evaluate import graded_name
    from medcalc_maintained.scoring.labels import labels_sha256

    prompts = {u: (r["Patient Note"], r["Question"]) for u, r in ref.rows.items()}
    out = {}
    for src in sources:
        labels = src.labels
        lim = {int(u): (text(lo), text(hi)) for u, lo, hi in zip(labels["uid"], labels["Lower Limit"],
                                                                 labels["Upper Limit"])}
        digest = labels_sha256(labels)
        for g in report.graders:
            name = src.name if report.graders == ["ours"] else graded_name(src.name, g)
            out[eee.file_name(name)] = eee.instance_logs(report.graded, name, grader=g, version=src.version,
                                                         labels_sha256=digest, outputs=outputs, prompts=prompts,
                                                         model_id=model, limits=lim)
    return out


def write_regrade(report: RegradeReport, out: Path, *, force: bool = False) -> Path:
    """Write ``report`` into ``out`` as a whole (a scratch sibling swapped in; nothing partial is left).
    ``out`` is checked with :func:`check_out` again at the moment of the swap (the caller checked it
    before any work): a file saved into it meanwhile keeps it from being replaced."""
    return write_dir(out, report.write, check=lambda target: check_out(target, force))


def check_out(out: Path, force: bool) -> None:
    """Refuse an ``--out`` that is not empty, unless ``force`` and it holds an earlier regrade (only its files)."""
    from medcalc_maintained.core.out_dirs import check_replace

    check_replace(out, command="regrade", writes=FILES, required=ALWAYS, force=force, caches={EEE_DIR: ".jsonl"})


def default_against(project) -> list[str]:
    """``v1.0`` (upstream's labels) and the latest release of ``releases.yaml``."""
    from medcalc_maintained.release.plan import load_releases

    latest = load_releases(project.releases_file).latest.version
    return ["v1.0"] + ([latest] if latest != "1.0.0" else [])


def regrade(project, paths: list[Path], against: list[str] | None, *, out_dir: Path, graders: list[str] | None = None,
            fmt: str | None = None, force: bool = False, seed: int | None = None, n_boot: int | None = None,
            max_line_bytes: int | None = None, steps: bool = False) -> tuple[RegradeReport, Path]:
    """The ``regrade`` command: read ``paths``, reproduce, re-score under ``against`` (default
    :func:`default_against`) and ``graders`` (default ``ours`` and each harness's own rule), and write
    ``out_dir`` whole. Seed, resamples and the line limit default to ``compare.evaluate``."""
    from medcalc_maintained.harnesses.registry import read_results
    from medcalc_maintained.scoring.labels import resolve_against

    params = project.section("compare.evaluate")
    check_out(out_dir, force)  # before any work
    sources = resolve_against(project, against or default_against(project))
    limit = params["max_line_bytes"] if max_line_bytes is None else max_line_bytes
    results = [read_results(p, fmt, max_line_bytes=limit) for p in paths]
    report = regrade_results(results, sources, n_boot=params["n_boot"] if n_boot is None else n_boot,
                             seed=params["seed"] if seed is None else seed, graders=graders, steps=steps)
    return report, write_regrade(report, out_dir, force=force)
