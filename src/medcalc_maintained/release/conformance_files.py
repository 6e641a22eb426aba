"""The conformance files of a release (from ``CONFORMANCE_FROM`` on): ``vectors.json``, the packaged
conformance vectors as one document with their sha256, and stage ``errata``'s ``errata.json`` and
``errata.md`` copied unchanged, all under ``conformance/``; and what the card says of them
(:func:`card_text`). Contract ``conformance`` checks the copies
(:mod:`medcalc_maintained.contracts.release_conformance`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.versions import rules
from medcalc_maintained.release.layout import CONFORMANCE_FILES


def _source(errata_dir: Path, rel: str) -> Path:
    path = Path(errata_dir) / Path(rel).name
    if not path.is_file():
        raise DataError(path, "missing: the release ships stage errata's files (run `dvc repro errata`)")
    return path


def _vectors() -> dict[str, Any]:
    from medcalc_maintained.conformance.vectors import document, load_vectors

    return document(load_vectors())


def copy_into(errata_dir: Path, out: Path, version: str) -> list[str]:
    """Write the conformance files into release folder ``out`` when ``version`` ships them; their paths."""
    if not rules(version).conformance:
        return []
    vectors, *errata = CONFORMANCE_FILES
    (Path(out) / vectors).parent.mkdir(parents=True, exist_ok=True)
    (Path(out) / vectors).write_text(json.dumps(_vectors(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for rel in errata:
        shutil.copyfile(_source(errata_dir, rel), Path(out) / rel)
    return list(CONFORMANCE_FILES)


def _n(x: int) -> str:
    return f"{x:,}"


def card_text(errata_dir: Path, version: str) -> str:
    """The card's paragraph on the vectors and errata (empty for a release that does not ship them)."""
    if not rules(version).conformance:
        return ""
    doc: dict[str, Any] = json.loads(_source(errata_dir, CONFORMANCE_FILES[1]).read_text(encoding="utf-8"))
    vectors = _vectors()
    cases = sum(len(c["cases"]) for c in vectors["calculators"])
    parts = []
    for rep in doc["implementations"]:
        errata = rep["errata"]
        parts.append(f"{rep['describe']} passes {_n(rep['vector_cases_passed'])} of {_n(rep['vector_cases'])} cases "
                     f"({len(errata)} errata); on the v1.0 entities its answer departs from the declared definition "
                     f"on {_n(sum(e['rows_differ'] for e in errata))} rows, "
                     f"{_n(sum(e['rows_label_follows_implementation'] for e in errata))} of whose v1.0 labels are "
                     "its answer")
    return (f"`conformance/vectors.json` holds {_n(cases)} hand-checked cases of all "
            f"{len(vectors['calculators'])} calculators (inputs, expected output, the cited source and why each "
            f"case is there; vectors sha256 `{vectors['vectors_sha256'][:12]}`), and this package's calculators, "
            "which derive the labels, pass every one. Other copies of the calculator code were run on them: "
            + "; ".join(parts) + ". Each difference is an erratum with its cases, its consequence on v1.0 labels and "
            "the release that fixed them, and a reader's verdict against the cited source: "
            "[conformance/errata.md](conformance/errata.md) (every field in `conformance/errata.json`). Check any "
            "other implementation with `medcalc-maintained conformance --impl module:function`.")
