"""Errata: where an implementation of the calculators departs from the declared definitions.

For one implementation, each calculator is run on its conformance vectors and on the v1.0
``Relevant Entities`` of every row of that calculator (the inputs upstream's labels were computed
from), beside this package's calculators. A calculator with a failing vector or a v1.0 row where the
two answers differ (beyond the vectors' tolerance, or one gives a result and the other none) is an
erratum: every failing case's id (the first few with inputs, expected vs got, wrong answers before
refusals), the cited source, and its consequence on v1.0: the rows that differ (of them, those where
the implementation gives no answer), and the rows whose v1.0 label is the implementation's answer
rather than the definition's. For those, ``carried_by`` counts per maintained release the rows whose
label there is still the implementation's answer, and ``fixed_in`` the release from which no later
release carries it ("not yet" where the latest does).

Each erratum's status comes from the adjudication file ``errata.yaml`` beside this module, written by
a person who checked the cases against the cited source and the implementation's code:
``fixed-in-ours`` (the implementation departs from the source; ours follows it), ``definition-choice``
(both follow a published definition; the reason says why ours is declared), or ``open``. An
adjudication also records the erratum's counts of failed cases and differing rows: an erratum whose
counts have changed since is ``unreviewed`` again (:func:`unreviewed`), and an adjudication no erratum
has any longer is reported (:func:`unused`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable, Mapping

from medcalc_maintained.calculators import compute, load_all
from medcalc_maintained.conformance.base import Implementation, NotRecorded, failure_text
from medcalc_maintained.conformance.check import Report, agrees, run_vectors
from medcalc_maintained.conformance.rows import V1Row
from medcalc_maintained.conformance.vectors import Case, VectorFile
from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.yaml_text import safe_load

STATUSES = ("fixed-in-ours", "definition-choice", "open", "unreviewed")
REGISTRY_FILE = "errata.yaml"
EXAMPLES = 3  # failing cases and differing rows kept per erratum


@dataclass
class Erratum:
    implementation: str
    calculator_id: int
    calculator: str
    follows: str
    source: str
    vectors_failed: int
    vectors_no_result: int
    vectors: int
    failing_cases: list[dict[str, Any]]
    failing_case_ids: list[str]
    rows: int
    rows_differ: int
    rows_no_result: int
    rows_label_follows_implementation: int
    fixed_in: dict[str, int]
    carried_by: dict[str, int]
    differing_row_numbers: list[int]
    differing_rows: list[dict[str, Any]]
    status: str = "unreviewed"
    reason: str = ""

    @property
    def key(self) -> tuple[str, int]:
        return self.implementation, self.calculator_id


@dataclass
class ErrataReport:
    implementation: str
    describe: str
    vectors_sha256: str
    vector_cases: int
    vector_cases_passed: int
    errata: list[Erratum] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {**{k: v for k, v in asdict(self).items() if k != "errata"},
                "errata": [asdict(e) for e in self.errata]}


@lru_cache(maxsize=1)
def registry() -> dict[tuple[str, int], dict[str, Any]]:
    """The adjudications of ``errata.yaml``: (implementation, calculator id) -> status and reason."""
    path = resources.files("medcalc_maintained.conformance") / REGISTRY_FILE
    doc = safe_load(path.read_text(encoding="utf-8")) or {}
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for i, e in enumerate(doc.get("errata") or [], 1):
        where = f"entry {i}"
        keys = {"implementation", "calculator_id", "status", "reason", "vectors_failed", "rows_differ"}
        if not isinstance(e, dict) or set(e) != keys:
            raise DataError(str(path), f"{where}: an adjudication has exactly {', '.join(sorted(keys))}")
        if e["status"] not in STATUSES[:3]:
            raise DataError(str(path), f"{where}: status {e['status']!r} is not one of {', '.join(STATUSES[:3])}",
                            field="status")
        if not str(e["reason"]).strip():
            raise DataError(str(path), f"{where}: the reason is empty", field="reason")
        key = (str(e["implementation"]), int(e["calculator_id"]))
        if key in out:
            raise DataError(str(path), f"{where}: {key} adjudicated twice", field="calculator_id")
        out[key] = {"status": str(e["status"]), "reason": str(e["reason"]).strip(),
                    "vectors_failed": int(e["vectors_failed"]), "rows_differ": int(e["rows_differ"])}
    return out


def typed(text: str | None, kind: str) -> Any:
    """An answer text (our calculator's, a label) as a case's ``expected`` of ``kind`` would carry it,
    read by :func:`~medcalc_maintained.core.answers.parse_answer` (none: N/A or unreadable)."""
    if text is None:
        return None
    answer = parse_answer(str(text), "date" if kind == "date" else "decimal")
    if answer.kind == "gestational_age" and kind == "weeks_days":
        return [answer.weeks, answer.days]
    if answer.kind == "date" and kind == "date":
        return str(text)
    if answer.kind not in ("decimal", "integer") or kind in ("weeks_days", "date"):
        return None
    x = answer.number
    return int(x) if kind == "integer" and x.is_integer() else x


def _call(impl: Implementation, cid: int, entities: dict[str, Any]) -> tuple[Any, str]:
    try:
        got = impl.call(cid, entities)
    except NotRecorded:
        raise
    except Exception as exc:  # a refusal (NoResult), or any failure of the implementation under test: no answer
        return None, failure_text(exc)
    return got, ""


def _same(a: Any, b: Any, kind: str) -> bool:
    """Whether answer ``b`` agrees with ``a`` (either may be none) under the vectors' rule."""
    if a is None or b is None:
        return a is None and b is None
    return agrees(Case("row", "", {}, a), kind, b)[0]


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, (bool, int, float, str, list)) else str(value)


def find_errata(impl: Implementation, vectors: list[VectorFile], rows: Iterable[V1Row], *,
                release_labels: Mapping[str, Mapping[int, str]] | None = None, digest: str = "") -> ErrataReport:
    """Every erratum of ``impl`` (see the module); ``release_labels`` maps each maintained release, in
    release order, to its row number -> label (for ``fixed_in``)."""
    report: Report = run_vectors(vectors, impl, digest=digest)
    by_cid: dict[int, list[V1Row]] = {}
    for r in rows:
        by_cid.setdefault(r.calculator_id, []).append(r)
    out = ErrataReport(impl.name, impl.describe, digest, sum(c.cases for c in report.calculators),
                       sum(c.passed for c in report.calculators))
    calcs = load_all()
    adjudicated = registry()
    for cr in report.calculators:
        vf, kind = cr.vectors, cr.vectors.kind
        failing = [{"case": r.case.id, "why": r.case.why, "inputs": r.case.inputs, "expected": r.case.expected,
                    "got": _plain(r.got), "reason": r.reason} for r in cr.results if not r.ok]
        failing.sort(key=lambda f: f["got"] is None)  # wrong answers first: they show the formula
        differ, no_result, follows = 0, 0, 0
        fixed: dict[str, int] = {}
        carried: dict[str, int] = {}
        examples: list[dict[str, Any]] = []
        differing: list[int] = []
        cid_rows = by_cid.get(vf.calculator_id, [])
        for row in cid_rows:
            ours = typed(compute(vf.calculator_id, row.entities).value, kind)
            got, why = _call(impl, vf.calculator_id, row.entities)
            if _same(ours, got, kind):
                continue
            differ += 1
            differing.append(row.row_number)
            no_result += got is None
            label = typed(row.label, kind)
            if got is not None and label is not None and _same(label, got, kind) and not _same(label, ours, kind):
                follows += 1
                carries = [v for v, labels in (release_labels or {}).items()
                           if _same(got, typed(labels.get(row.row_number), kind), kind)]
                for v in carries:
                    carried[v] = carried.get(v, 0) + 1
                versions = list(release_labels or {})
                last = max((versions.index(v) for v in carries), default=-1)
                since = versions[last + 1] if last + 1 < len(versions) else "not yet"
                fixed[since] = fixed.get(since, 0) + 1
            if len(examples) < EXAMPLES:
                examples.append({"row_number": row.row_number, "definition": ours, "implementation": _plain(got),
                                 "v1_label": row.label, **({"reason": why} if why else {})})
        if not failing and not differ:
            continue
        order = [*(release_labels or {}), "not yet"]
        fixed = {v: fixed[v] for v in order if v in fixed}
        e = Erratum(impl.name, vf.calculator_id, calcs[vf.calculator_id].name, vf.follows, vf.source,
                    len(failing), sum(f["got"] is None for f in failing), cr.cases, failing[:EXAMPLES],
                    [f["case"] for f in failing], len(cid_rows), differ, no_result, follows, fixed,
                    {v: carried[v] for v in order if v in carried}, differing, examples)
        verdict = adjudicated.get(e.key)
        if verdict and (verdict["vectors_failed"], verdict["rows_differ"]) == (e.vectors_failed, e.rows_differ):
            e.status, e.reason = verdict["status"], verdict["reason"]
        elif verdict:
            e.reason = (f"changed since it was adjudicated ({verdict['vectors_failed']} failed cases and "
                        f"{verdict['rows_differ']} differing rows then, {e.vectors_failed} and {e.rows_differ} now)")
        out.errata.append(e)
    return out


def unreviewed(report: ErrataReport) -> list[Erratum]:
    """The errata of ``report`` that ``errata.yaml`` does not adjudicate as they are now (none, or an
    adjudication of other counts: the erratum changed since it was read)."""
    return [e for e in report.errata if e.status == "unreviewed"]


def unused(reports: list[ErrataReport]) -> list[tuple[str, int]]:
    """Adjudications of ``errata.yaml`` for the implementations of ``reports`` that no erratum has."""
    found = {e.key for r in reports for e in r.errata}
    names = {r.implementation for r in reports}
    return sorted(k for k in registry() if k[0] in names and k not in found)


def _cell(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _count(n: int, of: int, no_answer: int) -> str:
    return f"{n}/{of}" + (f" ({no_answer} no answer)" if no_answer else "")


def markdown(implementations: list[dict[str, Any]]) -> str:
    """The errata as Markdown (``implementations``: :meth:`ErrataReport.as_dict` of each, as
    ``errata.json`` holds them): per implementation its vector score, then one row per erratum."""
    lines = ["# Calculator errata", "",
             "Generated by stage `errata` (`medcalc-maintained report errata`); do not edit. Each implementation "
             "is run on the conformance vectors (hand-checked cases from each calculator's cited source) and on the "
             "v1.0 `Relevant Entities` of every row, beside this package's calculators. *Failed* counts the "
             "cases it fails (of them, refusals: no answer); *rows* the v1.0 rows where the two differ (of them, "
             "no answer); *label* those whose v1.0 label is the implementation's answer; *fixed in*, for those, "
             "the release from which no maintained release labels them with the implementation's answer (not "
             "yet: the latest still does). Every failing case and differing row is in `errata.json`.", ""]
    for rep in implementations:
        lines += [f"## {rep['implementation']}", "", f"{rep['describe']}. Vectors: {rep['vector_cases_passed']} of "
                  f"{rep['vector_cases']} cases pass; {len(rep['errata'])} errata.", ""]
        if not rep["errata"]:
            continue
        lines += ["| id | calculator | failed | first failing case: expected vs got | rows | label | fixed in "
                  "| status | reason |", "|---|---|---|---|---|---|---|---|---|"]
        for e in rep["errata"]:
            first = e["failing_cases"][0] if e["failing_cases"] else None
            shown = (f"{first['case']}: {json.dumps(first['expected'], ensure_ascii=False)} vs "
                     f"{json.dumps(first['got'], ensure_ascii=False)}" if first else "")
            fixed = ", ".join(f"{v} ({n})" for v, n in e["fixed_in"].items())
            lines.append("| " + " | ".join(_cell(x) for x in (
                e["calculator_id"], e["calculator"], _count(e["vectors_failed"], e["vectors"], e["vectors_no_result"]),
                shown, _count(e["rows_differ"], e["rows"], e["rows_no_result"]), e["rows_label_follows_implementation"],
                fixed, e["status"], e["reason"])) + " |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
