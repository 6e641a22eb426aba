"""Contract view ``conformance`` of a built release (releases from ``CONFORMANCE_FROM`` on): its three
conformance files, one row each, read as a user would read them.

``present``     the file is in the release
``valid``       ``vectors.json``: every calculator's vectors pass the vector rules (declared inputs, the
                policy's definition, expected values of the output type: ``conformance/vectors.py``), its
                sha256 is the one of the vectors it holds, and every calculator of ``full`` has vectors; ``errata.json``: every erratum has an adjudicated
                status and a reason, and counts that fit together (failed <= cases, differing <= rows,
                labels that follow <= differing); ``errata.md``: not empty
``consistent``  ``vectors.json``: this package's calculators pass every case, and its sha256 is the one
                ``errata.json`` was computed with; ``errata.json``: each erratum's case count is its
                calculator's in ``vectors.json``; ``errata.md``: it is ``errata.json`` rendered
                (``conformance/errata.py: markdown``)
``problem``     the first problem, naming the calculator, case or erratum
Before ``CONFORMANCE_FROM`` the view is empty (the ``files`` view refuses any such file there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.versions import rules
from medcalc_maintained.release.layout import CONFORMANCE_FILES

COLUMNS = ["path", "present", "valid", "consistent", "problem"]
STATUSES = ("fixed-in-ours", "definition-choice", "open")
VIEW = "conformance"


def _read(root: Path, rel: str) -> tuple[Any, str | None]:
    path = Path(root) / rel
    if not path.is_file():
        return None, "missing"
    text = path.read_text(encoding="utf-8")
    if rel.endswith(".md"):
        return text, None
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"not JSON: {exc}"


def _vectors(doc: Any, calculator_ids: set[int], errata_sha: str | None) -> tuple[bool, bool, str | None]:
    from medcalc_maintained.conformance import resolve, run_vectors
    from medcalc_maintained.conformance.vectors import digest_of, parse_doc

    try:
        files = [parse_doc(c, f"{CONFORMANCE_FILES[0]}, calculator "
                              f"{c.get('calculator_id') if isinstance(c, dict) else repr(c)}")
                 for c in doc["calculators"]]
    except (DataError, KeyError, TypeError, AttributeError) as exc:
        return False, False, str(exc)
    if doc.get("vectors_sha256") != digest_of(files):
        return False, False, (f"vectors_sha256 {doc.get('vectors_sha256')!r} is not the sha256 of the vectors it "
                              f"holds ({digest_of(files)})")
    missing = sorted(calculator_ids - {f.calculator_id for f in files})
    if missing:
        return False, False, f"no vectors for calculator(s) {missing} of full"
    report = run_vectors(files, resolve("ours"))
    failed = [(c.calculator_id, c.first_failure) for c in report.calculators if c.first_failure is not None]
    if failed:
        cid, r = failed[0]
        return True, False, f"calculator {cid} case {r.case.id}: ours gives {r.got!r}, expected {r.case.expected!r}"
    if doc.get("vectors_sha256") != errata_sha:
        return True, False, f"vectors_sha256 {doc.get('vectors_sha256')!r} is not errata.json's {errata_sha!r}"
    return True, True, None


def _errata(doc: Any, cases: dict[Any, int], vectors_sha: str | None) -> tuple[bool, bool, str | None]:
    try:
        for rep in doc["implementations"]:
            for e in rep["errata"]:
                where = f"{rep['implementation']} calculator {e['calculator_id']}"
                if e["status"] not in STATUSES or not str(e["reason"]).strip():
                    return False, False, f"{where}: status {e['status']!r} is not adjudicated"
                if not (0 <= e["vectors_failed"] <= e["vectors"] and 0 <= e["rows_label_follows_implementation"]
                        <= e["rows_differ"] <= e["rows"]):
                    return False, False, f"{where}: counts do not fit together"
                if cases.get(int(e["calculator_id"])) != e["vectors"]:
                    return True, False, f"{where}: {e['vectors']} cases, vectors.json has {cases.get(e['calculator_id'])}"
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return False, False, f"not the errata layout: {exc!r}"
    if doc.get("vectors_sha256") != vectors_sha:
        return True, False, f"vectors_sha256 {doc.get('vectors_sha256')!r} is not vectors.json's {vectors_sha!r}"
    return True, True, None


def conformance_view(root: Path, full: pd.DataFrame | None, version: object) -> pd.DataFrame:
    """The ``conformance`` view of release folder ``root`` (see the module)."""
    from medcalc_maintained.conformance.errata import markdown

    if not rules(version).conformance:
        return pd.DataFrame(columns=COLUMNS)
    (vectors, v_err), (errata, e_err), (text, m_err) = (_read(root, rel) for rel in CONFORMANCE_FILES)
    ids = {int(x) for x in full["Calculator ID"]} if full is not None and len(full) else set()
    rows = []
    v_sha = vectors.get("vectors_sha256") if isinstance(vectors, dict) else None
    e_sha = errata.get("vectors_sha256") if isinstance(errata, dict) else None
    cases = {c.get("calculator_id"): len(c.get("cases") or []) for c in vectors.get("calculators", [])
             if isinstance(c, dict)} if isinstance(vectors, dict) and isinstance(vectors.get("calculators"), list) else {}
    checks = [(v_err, lambda: _vectors(vectors, ids, e_sha)), (e_err, lambda: _errata(errata, cases, v_sha))]
    for rel, (err, check) in zip(CONFORMANCE_FILES[:2], checks):
        valid, consistent, problem = (False, False, err) if err else check()
        rows.append({"path": rel, "present": err != "missing", "valid": valid, "consistent": consistent,
                     "problem": problem})
    if m_err:
        rows.append({"path": CONFORMANCE_FILES[2], "present": False, "valid": False, "consistent": False,
                     "problem": m_err})
    else:
        rendered = markdown(errata["implementations"]) if rows[1]["valid"] else None
        rows.append({"path": CONFORMANCE_FILES[2], "present": True, "valid": bool(str(text).strip()),
                     "consistent": rendered == text,
                     "problem": None if rendered == text else "not errata.json rendered (conformance/errata.py)"})
    return pd.DataFrame(rows, columns=COLUMNS)
