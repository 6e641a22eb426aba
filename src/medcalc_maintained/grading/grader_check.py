"""How often each grader is wrong: every grader of :data:`~medcalc_maintained.grading.graders.GRADERS`
against the grades two readers gave real model outputs by reading them (stage ``grader-check``).

Inputs, committed (``report.grader_check`` of the parameters):

* ``outputs`` (JSON lines, :mod:`medcalc_maintained.scoring.grader_outputs` made them): one real
  model output per line with the label, limits, output type, calculator, category and answer type
  of its row in the release it was read against.
* ``readings/reader_a.csv`` and ``readings/reader_b.csv``: each reader's ``id, form, answer_read,
  grade, note`` for every output, made blind (no grader's verdict, not the other reader's file),
  following ``readings/PROTOCOL.md``: which final answer the output commits to (``form``:
  ``tagged``, ``stated`` or ``none``) and whether it is correct under the benchmark's declared
  definition (``grade``: ``correct`` / ``incorrect``).
* ``readings/adjudication.csv``: ``id, form, grade, reason`` for exactly the outputs on which the
  readers' grade or form differ; the reference is the readers' common reading, else this one.

A **false positive** is an output the reference calls incorrect and the grader calls correct; a
**false negative** the reverse. Rates are over the reference's incorrect (FP) and correct (FN)
outputs of a stratum, with Wilson 95% intervals: all outputs, each answer type of the label
(:func:`answer_type`), the outputs that commit to no answer (``malformed``: reference form
``none``), and each model. Every grader also grades the gold answer (:func:`gold_answer`) of every
row of the release: the share it calls correct is reported beside its rates.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from medcalc_maintained.core.errors import DataError

ANSWER_TYPES = ("n_a", "date", "gestational_age", "integer", "decimal")
GESTATIONAL_CALCULATORS = (69,)
FORMS = ("tagged", "stated", "none")
GRADES = ("correct", "incorrect")
READERS = ("reader_a", "reader_b")
OUTPUT_FIELDS = ("id", "model", "release", "uid", "calculator_id", "calculator", "category", "answer_type",
                 "output_type", "question", "label", "lower", "upper", "output")
INT_FIELDS = ("uid", "calculator_id")
READING_FIELDS = ("id", "form", "answer_read", "grade", "note")
ADJUDICATION_FIELDS = ("id", "form", "grade", "reason")
Z95 = 1.959963984540054


def answer_type(row: Mapping[Any, Any]) -> str:
    """The answer type a grader must handle for a labelled row: ``n_a`` (the label is ``N/A``),
    ``gestational_age`` (calculator 69), ``date``, ``integer`` or ``decimal`` (its ``Output Type``)."""
    if str(row["Ground Truth Answer"]).strip() == "N/A":
        return "n_a"
    if int(float(str(row["Calculator ID"]))) in GESTATIONAL_CALCULATORS:
        return "gestational_age"
    kind = str(row["Output Type"]).strip()
    if kind not in ("date", "integer", "decimal"):
        raise ValueError(f"row uid {row.get('uid')}: Output Type {kind!r} is none of date, integer, decimal")
    return kind


def grader_row(out: Mapping[str, Any]) -> dict[str, Any]:
    """The labelled row a grader reads, from one line of the outputs file."""
    return {"Ground Truth Answer": out["label"], "Lower Limit": out["lower"], "Upper Limit": out["upper"],
            "Output Type": out["output_type"], "Calculator ID": out["calculator_id"], "Category": out["category"],
            "uid": out["uid"]}


def wilson(k: int, n: int) -> tuple[float, float] | None:
    """Wilson score 95% interval of ``k`` successes in ``n`` trials (``None`` when ``n`` is 0)."""
    if n == 0:
        return None
    p, z2 = k / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


# ---- reading the inputs ------------------------------------------------------------------------

def read_outputs(path: Path) -> list[dict[str, Any]]:
    """The outputs file, every line checked: its fields, a unique id, a known answer type that
    agrees with its label and calculator."""
    if not path.is_file():
        raise DataError(path, "missing: the grader check's model outputs (report.grader_check.outputs)")
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise DataError(path, f"line {n}: not JSON ({exc})") from None
        if not isinstance(rec, dict):
            raise DataError(path, f"line {n}: not a JSON object")
        missing = [f for f in OUTPUT_FIELDS if f not in rec]
        if missing:
            raise DataError(path, f"line {n}: missing field(s) {', '.join(missing)}")
        for field in OUTPUT_FIELDS:
            want = int if field in INT_FIELDS else str
            if not isinstance(rec[field], want) or isinstance(rec[field], bool):
                raise DataError(path, f"line {n} ({rec['id']}): field {field} must be "
                                      f"{'an integer' if want is int else 'text'}, not {rec[field]!r}")
        if rec["id"] in seen:
            raise DataError(path, f"line {n}: id {rec['id']!r} appears twice")
        seen.add(rec["id"])
        try:
            kind = answer_type(grader_row(rec) | {"Ground Truth Answer": rec["label"]})
        except ValueError as exc:
            raise DataError(path, f"line {n} ({rec['id']}): {exc}") from None
        if kind != rec["answer_type"]:
            raise DataError(path, f"line {n} ({rec['id']}): field answer_type {rec['answer_type']!r} is not its "
                                  f"label's type {kind!r}")
        rows.append(rec)
    if not rows:
        raise DataError(path, "no outputs")
    return rows


def read_table(path: Path, fields: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows of a CSV whose header starts with ``fields`` (a :class:`DataError` naming the file
    otherwise), each with ``_line``: the file's line on which the row ends (a quoted cell may span lines)."""
    if not path.is_file():
        raise DataError(path, "missing")
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        header = tuple(reader.fieldnames or ())
        if header[:len(fields)] != fields:
            raise DataError(path, f"header {','.join(header)}: expected {','.join(fields)}")
        rows = []
        for r in reader:
            if any(r.get(f) is None for f in fields):
                raise DataError(path, f"line {reader.line_num}: fewer fields than the header's {len(fields)}")
            rows.append({**r, "_line": str(reader.line_num)})
        return rows


def read_reading(path: Path, ids: list[str]) -> dict[str, dict[str, str]]:
    """One reader's file: every output id exactly once, in any order; ``form`` and ``grade`` from
    their lists; ``answer_read`` empty exactly when the form is ``none``."""
    out: dict[str, dict[str, str]] = {}
    known = set(ids)
    for r in read_table(path, READING_FIELDS):
        where = f"line {r['_line']} ({r['id']})"
        if r["id"] not in known:
            raise DataError(path, f"{where}: id is not an output of the outputs file")
        if r["id"] in out:
            raise DataError(path, f"{where}: id read twice")
        if r["form"] not in FORMS:
            raise DataError(path, f"{where}: field form {r['form']!r} is none of {', '.join(FORMS)}")
        if r["grade"] not in GRADES:
            raise DataError(path, f"{where}: field grade {r['grade']!r} is none of {', '.join(GRADES)}")
        if (r["form"] == "none") != (not (r["answer_read"] or "").strip()):
            raise DataError(path, f"{where}: field answer_read must be empty exactly when form is none")
        if r["form"] == "none" and r["grade"] == "correct":
            raise DataError(path, f"{where}: an output that commits to no answer (form none) cannot be correct")
        out[r["id"]] = r
    unread = [i for i in ids if i not in out]
    if unread:
        raise DataError(path, f"{len(unread)} output(s) not read, first {unread[0]!r}")
    return out


@dataclass(frozen=True)
class Reference:
    """The reference grade of one output and how it was reached."""

    id: str
    grade: str
    form: str
    agreed: bool  # the readers agreed on grade and form (else: adjudicated)
    grades_agreed: bool  # the readers agreed on the grade


def reference(ids: list[str], a: Mapping[str, Mapping[str, str]], b: Mapping[str, Mapping[str, str]],
              adjudication: list[dict[str, str]], where: Path) -> list[Reference]:
    """The readers' common reading, else the adjudication's; an adjudication of an output the readers
    agree on, or a disagreement left unadjudicated, is an error."""
    adj: dict[str, dict[str, str]] = {}
    for r in adjudication:
        n = r.get("_line", "?")
        if r["id"] in adj:
            raise DataError(where, f"line {n} ({r['id']}): id adjudicated twice")
        if r["grade"] not in GRADES or r["form"] not in FORMS:
            raise DataError(where, f"line {n} ({r['id']}): grade must be one of {', '.join(GRADES)} and form one of "
                                   f"{', '.join(FORMS)}")
        if not (r.get("reason") or "").strip():
            raise DataError(where, f"line {n} ({r['id']}): field reason is empty")
        if r["form"] == "none" and r["grade"] == "correct":
            raise DataError(where, f"line {n} ({r['id']}): an output that commits to no answer cannot be correct")
        adj[r["id"]] = r
    refs: list[Reference] = []
    for i in ids:
        same = a[i]["grade"] == b[i]["grade"] and a[i]["form"] == b[i]["form"]
        if same and i in adj:
            raise DataError(where, f"id {i!r}: adjudicated, but the readers agree ({a[i]['grade']}, {a[i]['form']})")
        if not same and i not in adj:
            raise DataError(where, f"id {i!r}: the readers differ (reader_a {a[i]['grade']}/{a[i]['form']}, "
                                   f"reader_b {b[i]['grade']}/{b[i]['form']}) and no adjudication decides it")
        src = a[i] if same else adj[i]
        refs.append(Reference(i, src["grade"], src["form"], same, a[i]["grade"] == b[i]["grade"]))
    unknown = sorted(set(adj) - set(ids))
    if unknown:
        raise DataError(where, f"id {unknown[0]!r}: adjudicated but not an output")
    return refs


# ---- the measurement ---------------------------------------------------------------------------

def strata(out: Mapping[str, Any], ref: Reference) -> list[str]:
    """The strata an output counts in: ``all``, its answer type, ``malformed`` (no committed
    answer), ``model:NAME``."""
    s = ["all", str(out["answer_type"])]
    if ref.form == "none":
        s.append("malformed")
    return s + [f"model:{out['model']}"]


def verdicts(outputs: list[dict[str, Any]], graders: Mapping[str, Any]) -> dict[str, list[bool]]:
    """Each grader's verdict (correct: ``True``) on every output, in order."""
    return {name: [bool(g(grader_row(o), o["output"])) for o in outputs] for name, g in graders.items()}


def error_rates(outputs: list[dict[str, Any]], refs: list[Reference],
                graded: Mapping[str, list[bool]]) -> list[dict[str, Any]]:
    """One row per grader and stratum: reference positives and negatives, false positives and
    negatives, their rates with Wilson 95% intervals (empty where the stratum has none)."""
    order = ["all", *ANSWER_TYPES, "malformed"]
    of = [set(strata(o, r)) for o, r in zip(outputs, refs)]  # each output's strata, once
    seen = set().union(*of)
    names = [s for s in order if s in seen] + sorted(s for s in seen if s not in order)
    rows: list[dict[str, Any]] = []
    for grader, marks in graded.items():
        for s in names:
            pos = neg = fp = fn = 0
            for own, r, m in zip(of, refs, marks):
                if s not in own:
                    continue
                if r.grade == "correct":
                    pos += 1
                    fn += not m
                else:
                    neg += 1
                    fp += m
            row: dict[str, Any] = {"grader": grader, "stratum": s, "outputs": pos + neg, "reference_correct": pos,
                                   "reference_incorrect": neg, "false_positives": fp, "false_negatives": fn}
            for key, k, n in (("fp", fp, neg), ("fn", fn, pos)):
                ci = wilson(k, n)  # full precision: rounded only where shown
                row[f"{key}_rate"] = k / n if n else None
                row[f"{key}_low"], row[f"{key}_high"] = ci if ci else (None, None)
            rows.append(row)
    return rows


def kappa(a: list[str], b: list[str]) -> float | None:
    """Cohen's kappa of two readers' grades (``None`` when chance agreement is total)."""
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    pe = sum((a.count(g) / n) * (b.count(g) / n) for g in GRADES)
    return None if pe == 1 else round((po - pe) / (1 - pe), 4)


def gold_answer(grader: str, label: str) -> str:
    """A row's gold answer in the form the grader's harness asks for: ``{"answer": LABEL}`` for
    ``opencompass`` (its extraction reads that JSON), else ``<answer>LABEL</answer>``."""
    return json.dumps({"answer": label}) if grader == "opencompass" else f"<answer>{label}</answer>"


def gold_shares(rows: Iterable[Mapping[Any, Any]], graders: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Per grader: of the gold answers (:func:`gold_answer`) of ``rows``, how many it calls correct."""
    rows = list(rows)
    return {name: {"rows": len(rows),
                   "correct": sum(bool(g(r, gold_answer(name, str(r["Ground Truth Answer"])))) for r in rows)}
            for name, g in graders.items()}
