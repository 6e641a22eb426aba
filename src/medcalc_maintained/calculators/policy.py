"""The definition policy: which published definition and version each calculator's maintained
labels follow, and the published alternatives (``definitions.yaml`` beside this module; the
alternatives are implemented in :mod:`.alternatives`), and which alternatives reproduce a label
the declared definition does not."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from medcalc_maintained.calculators import compute
from medcalc_maintained.calculators.alternatives import ALTERNATIVES, compute_alternative
from medcalc_maintained.core.answers import labels_agree, parse_answer
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.yaml_text import safe_load

POLICY_FILE = "definitions.yaml"
REQUIRED = ("name", "version", "definition", "citation", "alternatives")


@lru_cache(maxsize=1)
def load_policy() -> dict[int, dict[str, Any]]:
    """The policy by calculator id; refuses an entry without a required field or an alternative
    without an implementation (the file, the calculator and the field are named)."""
    res = resources.files("medcalc_maintained.calculators").joinpath(POLICY_FILE)
    path = Path(str(res))
    try:
        data = safe_load(res.read_text("utf-8")) or {}
    except yaml.YAMLError as exc:
        raise DataError(path, f"not valid YAML: {exc}") from None
    out: dict[int, dict[str, Any]] = {}
    for cid, entry in (data.get("calculators") or {}).items():
        if not isinstance(entry, dict):
            raise DataError(path, "entry is not a mapping", row=f"calculator {cid}")
        for fld in REQUIRED:
            if entry.get(fld) in (None, "") and fld != "alternatives":
                raise DataError(path, "required field is empty", row=f"calculator {cid}", field=fld)
        alts = entry.get("alternatives") or {}
        for name in alts:
            if (int(cid), name) not in ALTERNATIVES:
                raise DataError(path, f"alternative {name!r} is not implemented in calculators/alternatives.py",
                                row=f"calculator {cid}", field="alternatives")
        out[int(cid)] = dict(entry, alternatives=dict(alts))
    return out


def guideline_version(calculator_id: int) -> str | None:
    """The declared definition version of a calculator (``None`` when the policy has no entry)."""
    entry = load_policy().get(int(calculator_id))
    return entry["version"] if entry else None


def known_version(calculator_id: int, version: Any) -> bool:
    """Whether ``version`` names the calculator's declared definition or one of its alternatives."""
    entry = load_policy().get(int(calculator_id))
    if entry is None or version is None or not str(version).strip():
        return False
    return str(version) == entry["version"] or str(version) in entry["alternatives"]


def reproducing_alternatives(calculator_id: int, entities: dict[str, Any], label: Any, output_type: str) -> list[str]:
    """Alternatives of the policy whose value agrees with ``label`` while the declared definition's
    does not (or is not computable); empty for an abstention or an invalid label."""
    entry = load_policy().get(int(calculator_id))
    lab = parse_answer(label, output_type)
    if not entry or not entry["alternatives"] or not lab.is_valid or lab.is_abstain:
        return []
    default = compute(int(calculator_id), entities).value
    if default is not None and labels_agree(default, label, output_type):
        return []
    return [name for name in entry["alternatives"]
            if (v := compute_alternative(int(calculator_id), name, entities).value) is not None
            and labels_agree(v, label, output_type)]
