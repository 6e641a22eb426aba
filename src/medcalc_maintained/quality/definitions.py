"""The definition policy at work: definition findings and policy contradictions.

The policy (``calculators/definitions.yaml``, read by :mod:`medcalc_maintained.calculators.policy`,
which also gives the ``guideline_version`` a record carries) declares, per calculator, the
definition and version the maintained labels follow and the published alternatives (implemented in
``calculators/alternatives.py``). Two uses:

* :func:`definition_findings` - for one row, which alternatives would change its label and by how
  much (``definition``-severity findings of the check registry, check ``definition_alternative``);
* :func:`policy_contradictions` - maintained rows whose label the declared definition does not
  reproduce (on the upstream entities) while an alternative does; written by
  :func:`write_contradictions` and sent back to the top of the triage queue by
  :mod:`medcalc_maintained.planning.requeue`. They are never changed here: a physician decides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.calculators import compute, load_all
from medcalc_maintained.calculators.alternatives import compute_alternative
from medcalc_maintained.calculators.policy import load_policy, reproducing_alternatives
from medcalc_maintained.core.answers import Answer, labels_agree, parse_answer
from medcalc_maintained.core.csv_for_people import write_csv_for_people
from medcalc_maintained.core.rows import entities_or_empty

CHECK = "definition_alternative"
CONTRADICTION_COLUMNS = ["split", "uid", "calculator_id", "calculator", "label", "label_status", "correction_ids",
                         "declared_version", "declared_value", "alternative", "alternative_value", "reason"]


def _change(a: Answer, b: Answer) -> str:
    """How far the alternative's value ``a`` is from the label ``b``: signed percent for numbers, days for dates."""
    if a.kind == "date" and b.kind == "date":
        days = (a.date - b.date).days
        return f"{days:+d} days"
    x, y = a.number, b.number
    if y == 0:
        return f"{x - y:+g}"
    return f"{(x - y) / abs(y) * 100:+.0f}%".replace("-", "\u2212")


def _finding(reason: str) -> dict[str, Any]:
    return {"check": CHECK, "severity": "definition", "reason": reason,
            "evidence_text": "", "evidence_start": None, "evidence_end": None}


_UNKNOWN = object()


def definition_findings(calculator_id: int, entities: dict[str, Any], label: Any, output_type: str,
                        declared: Any = _UNKNOWN) -> list[dict[str, Any]]:
    """``definition`` findings for one row: each published alternative that gives a label other than
    the declared definition's, and whether the row's ``label`` follows it. ``declared``: the declared
    definition's value on these entities when the caller already has it (the recompute's), else it
    is computed here.

    >>> definition_findings(63, {"Sodium": [140, "mmol/L"], "Chloride": [100, "mmol/L"],
    ...                          "Bicarbonate": [14, "mmol/L"]}, "14", "decimal")[0]["reason"].split(") the ")[1]
    'label would be 4 instead of 14 (−71%)'
    """
    entry = load_policy().get(int(calculator_id))
    lab = parse_answer(label, output_type)
    if not entry or not entry["alternatives"] or not lab.is_valid or lab.is_abstain:
        return []
    label = str(label)
    default = compute(int(calculator_id), entities).value if declared is _UNKNOWN else declared
    default_answer = parse_answer(default, output_type) if default is not None else None
    out = []
    for name, alt in entry["alternatives"].items():
        value = compute_alternative(int(calculator_id), name, entities).value
        if value is None:
            continue
        answer = parse_answer(value, output_type)  # each value parsed once, then compared
        if default_answer is not None and labels_agree(answer, default_answer, output_type):
            continue
        what = f"{name} ({alt['definition']})"
        if labels_agree(answer, lab, output_type):
            declared = f"the declared {entry['version']} gives {default}" if default is not None else \
                f"the declared {entry['version']} is not computable"
            out.append(_finding(f"the label {label} follows {what}, not the declared definition: {declared}"))
        else:
            out.append(_finding(f"under {what} the label would be {value} instead of {label} "
                                f"({_change(answer, lab)})"))
    return out


def policy_contradictions(maintained: pd.DataFrame, instances: pd.DataFrame) -> pd.DataFrame:
    """Maintained rows whose label contradicts the declared policy: recomputed on the upstream
    entities (``instances``), the declared definition disagrees with the label and an alternative
    reproduces it. One row per contradicting row (the first reproducing alternative named)."""
    load_all()
    policy = load_policy()
    with_alts = {cid for cid, e in policy.items() if e["alternatives"]}
    ents = {(str(s), int(u)): e for s, u, e in zip(instances["split"], instances["uid"], instances["entities"])}
    rows = []
    m = maintained[maintained["calculator_id"].astype(int).isin(with_alts)]
    for r in m.to_dict("records"):
        cid, otype, label = int(r["calculator_id"]), str(r["Output Type"]), str(r["Ground Truth Answer"])
        key = (str(r["split"]), int(r["uid"]))
        entities = entities_or_empty(ents.get(key))
        alts = reproducing_alternatives(cid, entities, label, otype)
        if not alts:
            continue
        declared = compute(cid, entities).value
        name = alts[0]
        rows.append({
            "split": key[0], "uid": key[1], "calculator_id": cid, "calculator": policy[cid]["name"], "label": label,
            "label_status": str(r.get("Label Status", "")), "correction_ids": str(r.get("Correction IDs", "") or ""),
            "declared_version": policy[cid]["version"], "declared_value": declared if declared is not None else "",
            "alternative": ";".join(alts),
            "alternative_value": compute_alternative(cid, name, entities).value,
            "reason": (f"label {label} follows {name} ({policy[cid]['alternatives'][name]['definition']}); the declared "
                       f"{policy[cid]['version']} gives {declared if declared is not None else 'no value'}"),
        })
    return pd.DataFrame(rows, columns=CONTRADICTION_COLUMNS)


def write_contradictions(df: pd.DataFrame, path: Path) -> Path:
    """The contradictions report (CSV for people, written atomically)."""
    write_csv_for_people(Path(path), df[CONTRADICTION_COLUMNS])
    return Path(path)


__all__ = ["CHECK", "CONTRADICTION_COLUMNS", "definition_findings", "policy_contradictions", "write_contradictions"]
