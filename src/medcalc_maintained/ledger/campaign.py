"""The published physician-in-the-loop audit of v1.0 as ledger records (stage ``import-campaign``).

Inputs (upstream, read-only, pulled by DVC): the two phase-3 workbooks of
``validate-medcalc-labels``. ``y_new_and_sampled_MD_evals.xlsx`` has, per audited test row, the
original label ``y_orig``, the supermajority recomputation ``y_new`` and, for 50 rows, a blinded
physician's label ``y*``; ``y_final_MD_evals_incorporated.xlsx`` has ``y_final``, the label after
physician adjudication. Each of the 887 rows becomes one accepted record:

* ``abstain``   when ``y_final`` is N/A;
* ``corrected`` when ``y_final`` differs from the v1.0 label (beyond the ±5% band for decimals,
  exactly otherwise);
* ``confirmed`` when they agree.

``source`` is ``physician`` for rows with a physician label, ``pipeline`` otherwise; physician
notes become the rationale. The error type of a change is typed from the evidence by
:mod:`medcalc_maintained.ledger.error_types` (definition alternatives, the reference calculator on
the upstream entities, an input shown wrong); the evidence lines say what decided it. Every record
carries the ``guideline_version`` of its calculator from the definition policy.

Every record also says how its decided label derives (:mod:`medcalc_maintained.ledger.reconstruct`,
field ``reconstruction``): reproduced by the declared definition from the upstream entities;
``inputs-reconstructed`` (the smallest patch of inputs a search of the note found, written as
``inputs`` marked ``reconstructed``: a candidate, as releases 2.0.0 and 2.1.0 shipped it; from
release 2.2.0 on a derivation counts only the inputs the evidence verifier accepts, and the
``verifier`` column of ``reconstruction.csv`` says which it rejects); ``definition-contradiction`` (the label follows the alternative written as
``definition``, or an N/A that the declared definition's own convention decides);
``na-justified`` (``justification``: a check finding or the physician's stated reason); or
``unexplained``. The decided labels themselves are never changed here.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from pathlib import Path
from typing import Any, cast

import pandas as pd

from medcalc_maintained.calculators.policy import guideline_version
from medcalc_maintained.core.answers import NA, format_answer, limits, parse_answer
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.labels import label_style, status_of
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.ledger import reconstruct as R
from medcalc_maintained.ledger.derivation import input_text
from medcalc_maintained.ledger.error_types import TIMEPOINT, classify_error, explain, gather, input_findings
from medcalc_maintained.ledger.records import state_change_severity

PHYSICIAN_COL = "y* (Physician label)"
NOTE_COL = "Physician Note (Optional)"
UPSTREAM_REPO = "https://github.com/junzeye/validate-medcalc-labels"


def _read_sheet(path: Path, needed: list[str]) -> pd.DataFrame:
    if not Path(path).is_file():
        raise DataError(path, "file not found")
    try:
        df = pd.read_excel(path, keep_default_na=False)
    except Exception as exc:  # openpyxl raises many types for a broken workbook
        raise DataError(path, f"not a readable workbook: {exc}") from None
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise DataError(path, f"missing column(s): {', '.join(missing)}")
    if df["uid"].duplicated().any():
        raise DataError(path, "duplicate uid", field="uid")
    return df


def read_workbooks(sampled: Path, final: Path) -> pd.DataFrame:
    """The campaign as one table keyed by ``uid`` (cells as the spreadsheet gives them)."""
    a = _read_sheet(sampled, ["uid", "y_orig", "y_new", PHYSICIAN_COL, NOTE_COL, "Relative Error (min)"])
    b = _read_sheet(final, ["uid", "y_new", "y_final", PHYSICIAN_COL, NOTE_COL])
    if set(a["uid"]) != set(b["uid"]):
        diff = sorted(set(a["uid"]) ^ set(b["uid"]))[:10]
        raise DataError(final, f"uids differ from {Path(sampled).name}: {diff}", field="uid")
    a = a.set_index("uid")
    b = b.set_index("uid")
    out = pd.DataFrame({
        "uid": b.index.astype(int),
        "y_orig": a.loc[b.index, "y_orig"].to_numpy(dtype=object),
        "y_new": b["y_new"].to_numpy(dtype=object),
        "y_final": b["y_final"].to_numpy(dtype=object),
        "physician": b[PHYSICIAN_COL].to_numpy(dtype=object),
        "physician_sampled": a.loc[b.index, PHYSICIAN_COL].to_numpy(dtype=object),
        "note": b[NOTE_COL].astype(str).to_numpy(dtype=object),
        "rel_err_min": a.loc[b.index, "Relative Error (min)"].to_numpy(dtype=object),
    })
    return out.reset_index(drop=True)


def workbook_date(path: Path) -> str | None:
    """The last-modified date recorded inside an .xlsx (docProps/core.xml), ISO ``YYYY-MM-DD``."""
    try:
        with zipfile.ZipFile(path) as z:
            xml = z.read("docProps/core.xml").decode("utf-8")
    except (KeyError, zipfile.BadZipFile, OSError):
        return None
    m = re.search(r"<dcterms:modified[^>]*>(\d{4}-\d{2}-\d{2})", xml)
    return m.group(1) if m else None


def _has_physician_label(cell: Any) -> bool:
    return not (cell is None or (isinstance(cell, str) and cell.strip() == ""))


def _cell_text(cell: Any) -> str:
    if isinstance(cell, (dt.datetime, dt.date)):
        return cell.strftime("%m/%d/%Y")
    return str(cell).strip()


def _rationale(status: str, note: str, physician: str | None, y_new: str, original: str) -> str:
    """The record's rationale: the physician's note (or label) when a physician labelled the row,
    else what the independent recomputation found."""
    if physician is not None:
        return note or f"Blinded physician recomputation gave {physician}."
    if status == "confirmed":
        return f"Independent recomputation ({y_new}) agrees with the v1.0 label."
    if status == "abstain":
        return ("Independent recomputation abstained in at least 4 of 5 runs: the note does not "
                "contain what the calculator needs.")
    return f"Independent recomputation gave {y_new} (4 of 5 runs), outside the tolerance of the v1.0 label {original}."


def _test_findings_by_uid(checks: pd.DataFrame | None) -> dict[int, list[dict[Any, Any]]]:
    """The check findings of each test row (the reconstruction reads its N/A justifications there,
    and the inputs a finding says the note never mentions from its ``unmentioned`` column)."""
    if checks is None or not len(checks):
        return {}
    if "unmentioned" not in checks.columns:
        raise ValueError("the check findings have no 'unmentioned' column: pass the check registry's table made "
                         "with structured=True (the stored findings.parquet does not carry it)")
    test_checks = checks[checks["split"] == "test"]
    return {int(cast(int, u)): g.to_dict("records") for u, g in test_checks.groupby("uid", sort=True)}


def build_records(campaign: pd.DataFrame, instances: pd.DataFrame, recompute: pd.DataFrame | None,
                  *, decided_at: str, release: str, id_prefix: str, workbook_names: tuple[str, str],
                  checks: pd.DataFrame | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Ledger records for every campaign row, and the cells that could not be read (reported).
    ``checks`` (the findings table of the offline checks with their structured fields: the check
    registry's ``run_checks(..., structured=True)``) adds the inputs they show wrong to the evidence
    of the error type and justifies (or, by a definition convention, contradicts) an N/A."""
    shown_wrong = input_findings(checks)
    row_findings = _test_findings_by_uid(checks)
    inst = instances[instances["split"] == "test"].set_index("uid")
    findings = recompute[recompute["split"] == "test"].set_index("uid") if recompute is not None else None
    records, unreadable = [], []
    for row in campaign.to_dict("records"):
        uid = int(row["uid"])
        if uid not in inst.index:
            unreadable.append({"uid": uid, "column": "uid", "value": uid, "reason": "not a v1.0 test row"})
            continue
        r = cast(pd.Series, inst.loc[uid])  # one row: the test uids are unique
        otype = str(r["Output Type"])
        original = str(r["Ground Truth Answer"])
        style = label_style(original, otype)
        final = parse_answer(row["y_final"], otype)
        if final.kind == "invalid":
            unreadable.append({"uid": uid, "column": "y_final", "value": _cell_text(row["y_final"]), "reason": final.reason})
            continue
        new_value = format_answer(final, otype, style)
        status = status_of(final, original, otype)
        has_md = _has_physician_label(row["physician"])
        note = (row.get("note") or "").strip()
        finding = cast("str | None", findings.loc[uid, "finding"]) if findings is not None and uid in findings.index else None
        cid = int(r["calculator_id"])
        ents = entities_or_empty(r.get("entities"))
        ev = gather(cid, ents, original, new_value, otype, rationale=note if has_md else "",
                    finding=finding, error_findings=shown_wrong.get(("test", uid))) if status == "corrected" else None
        etype = classify_error(status, note, finding, ev)
        y_new_text = _cell_text(row["y_new"])
        evidence = [
            f"{UPSTREAM_REPO} phase3/{workbook_names[1]}, uid {uid}: y_final = {_cell_text(row['y_final'])}",
            f"independent recomputation (4-of-5 supermajority): y_new = {y_new_text}",
        ]
        if has_md:
            evidence.append(f"blinded physician label y* = {_cell_text(row['physician'])} ({workbook_names[0]})")
        if finding is not None:
            evidence.append(f"recompute audit finding: {finding}")
        if ev is not None:
            evidence.extend(explain(ev))
        rationale = _rationale(status, note, _cell_text(row["physician"]) if has_md else None, y_new_text, original)
        rec = {
            "id": f"{id_prefix}-{uid:05d}",
            "uid": uid,
            "split": "test",
            "release": release,
            "old_value": original,
            "new_value": new_value,
            "decision": "accepted",
            "label_status": status,
            "error_type": etype,
            "rationale": rationale,
            "evidence": evidence,
            "source": "physician" if has_md else "pipeline",
            "reviewer": ({"id": "campaign-2025-physician", "role": "physician",
                          "specialty": "pediatrics, anesthesiology or oncology (matched to the calculator)"}
                         if has_md else
                         {"id": "relabel-gemini-2.5-pro-x5", "role": "pipeline", "specialty": None}),
            "blinded": True,
            "decided_at": decided_at,
            "guideline_version": guideline_version(cid),
        }
        add_reconstruction(rec, R.reconstruct(
            cid, ents, str(r.get("Patient Note") or ""), new_value,
            *limits(new_value, otype, style), otype, findings=row_findings.get(uid, ()),
            reviewer_reason=note if has_md else None))
        records.append(state_change_severity(rec, cid, otype, ents))
    return records, unreadable


def add_reconstruction(rec: dict[str, Any], found: "R.Reconstruction") -> dict[str, Any]:
    """Write what :func:`~medcalc_maintained.ledger.reconstruct.reconstruct` found into a record:
    its class, the reconstructed inputs, the alternative definition the label follows, or the
    justification of an N/A, and one evidence line."""
    rec["reconstruction"] = found.klass
    if found.inputs:
        rec["inputs"] = found.inputs
    if found.alternative:
        rec["definition"] = found.alternative
    if found.justification:
        rec["justification"] = found.justification
    rec["evidence"].append(f"{DERIVATION_LINE}{found.klass}): {found.reason}")
    return rec


DERIVATION_LINE = "derivation ("  # the evidence line add_reconstruction writes: "derivation (<class>): <reason>"


RECONSTRUCTION_COLUMNS = ["uid", "label_status", "reconstruction", "old_value", "new_value", "definition", "inputs",
                          "verifier", "reason"]


def _verifier_text(rec: dict[str, Any], calculator_id: int | None, note: str | None) -> str:
    """What the evidence verifier says of a record's search-found inputs: ``accepted`` or each rejected
    input with its rule (a search proposes; only the verifier certifies, from release 2.2.0 on)."""
    from medcalc_maintained.calculators.evidence import rejected

    if not rec.get("inputs") or calculator_id is None:
        return ""
    bad = rejected(calculator_id, rec["inputs"], note)
    return "accepted" if not bad else "rejected: " + "; ".join(f"{i.get('name')}: {v.rule}" for i, v in bad)


def reconstruction_table(records: list[dict[str, Any]], instances: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per campaign record: its reconstruction class, what it rests on and, for search-found
    inputs, the evidence verifier's verdict (``instances`` give the notes; without them it is empty)."""
    rows_by_uid: dict[int, tuple[int, str]] = {}
    if instances is not None:
        test = instances[instances["split"] == "test"]
        rows_by_uid = {int(u): (int(c), str(n)) for u, c, n in zip(test["uid"], test["calculator_id"], test["Patient Note"])}
    rows = []
    for rec in records:
        cid, note = rows_by_uid.get(int(rec["uid"]), (None, None))
        reason = next((e.split(": ", 1)[1] for e in rec.get("evidence", []) if e.startswith(DERIVATION_LINE)), "")
        inputs = "; ".join(f"{input_text(i)} [{i['evidence']['start']}:{i['evidence']['end']}] {i['evidence']['text']!r}"
                           for i in rec.get("inputs") or [])
        rows.append({"uid": rec["uid"], "label_status": rec["label_status"], "reconstruction": rec.get("reconstruction"),
                     "old_value": rec["old_value"], "new_value": rec["new_value"],
                     "definition": rec.get("definition") or "", "inputs": inputs,
                     "verifier": _verifier_text(rec, cid, note), "reason": reason})
    return pd.DataFrame(rows, columns=RECONSTRUCTION_COLUMNS)


def reconstruction_summary(table: pd.DataFrame, examples: int = 10) -> dict[str, Any]:
    """Counts per class and label status, and the first ``examples`` rows of each class (by uid)."""
    counts: dict[str, dict[str, int]] = {}
    for klass in R.CLASSES:
        part = table[table["reconstruction"] == klass]
        counts[klass] = {str(k): int(v) for k, v in sorted(part["label_status"].value_counts().items())}
    shown = {klass: table[table["reconstruction"] == klass].sort_values("uid").head(examples)
             [["uid", "label_status", "old_value", "new_value", "definition", "inputs", "verifier", "reason"]]
             .to_dict("records")
             for klass in R.CLASSES if klass != R.REPRODUCED}
    found = table[table["reconstruction"] == R.INPUTS]
    verifier = {"search_found": int(len(found)), "accepted": int((found["verifier"] == "accepted").sum()),
                "rejected": int(found["verifier"].astype(str).str.startswith("rejected").sum())}
    return {"rows": int(len(table)), "counts": counts, "search_inputs_verifier": verifier, "examples": shown}


__all__ = ["read_workbooks", "build_records", "workbook_date", "classify_error", "TIMEPOINT", "NA"]
