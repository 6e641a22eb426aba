"""Decision thresholds of the calculators, read from ``thresholds.yaml`` beside this file.

>>> from medcalc_maintained.calculators.thresholds import thresholds
>>> t = thresholds()[45]                       # CURB-65
>>> t.type, [b.name for b in t.bands_for(None)[0][1]][:2]
('score', ['low (0-1)', 'moderate (2)'])
>>> t.band_for(2, None).action
'short_stay'

Every Calculator ID of the registry has exactly one entry: bands with the action each band leads
to (``score``, ``cutoff``, ``sex_dependent``, ``age_dependent``), a dose tolerance
(``relative_dose``, optionally with bands), a dating tolerance (``date_shift``), or ``bands: none``
with the reason (``none``). The file's header documents the format. :func:`thresholds` checks the
file when it loads it and raises :class:`~medcalc_maintained.core.errors.DataError` naming the
calculator and the field of any problem.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, cast

from medcalc_maintained.core import units as U
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.yaml_text import safe_load

FILE = "thresholds.yaml"
TYPES = ("score", "cutoff", "sex_dependent", "age_dependent", "relative_dose", "date_shift", "none")
SEXES = ("male", "female")


@dataclass(frozen=True)
class Band:
    """One decision band: values from ``lower`` (inclusive unless ``strict``) to the next band."""

    name: str
    lower: float | None
    strict: bool
    action: str
    decision: str

    def admits(self, value: float) -> bool:
        if self.lower is None:
            return True
        return value > self.lower if self.strict else value >= self.lower


@dataclass(frozen=True)
class Variant:
    """Bands that apply when ``when`` holds (``{"sex": "male"}``, ``{"age_min": 65}``...)."""

    when: dict
    bands: tuple[Band, ...]

    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.when.items())


@dataclass(frozen=True)
class Threshold:
    """The entry of one calculator (see the header of ``thresholds.yaml``)."""

    calculator_id: int
    name: str
    type: str
    citation: str = ""
    reason: str = ""
    unit: str = ""
    bands: tuple[Band, ...] = ()
    variants: tuple[Variant, ...] = ()
    depends_on: str | None = None
    tolerance: float | None = None
    tolerance_basis: str = ""
    days: int | None = None

    @property
    def has_bands(self) -> bool:
        return bool(self.bands or self.variants)

    def band_sets(self) -> list[tuple[str, tuple[Band, ...]]]:
        if self.variants:
            return [(v.label(), v.bands) for v in self.variants]
        return [("", self.bands)] if self.bands else []

    def bands_for(self, entities: Any) -> list[tuple[str, tuple[Band, ...]]]:
        """The band sets that may apply to a row: one when the row decides the variant (or there
        are no variants), every variant when the sex or age it depends on is missing."""
        if not self.variants:
            return self.band_sets()
        chosen = [v for v in self.variants if _holds(v.when, self._row_value(entities))]
        return [(v.label(), v.bands) for v in (chosen or self.variants)]

    def band_for(self, value: float, entities: Any) -> Band | None:
        """The band of ``value`` when the row decides one band set, else ``None``."""
        sets = self.bands_for(entities)
        return band_of(sets[0][1], value) if len(sets) == 1 else None

    def _row_value(self, entities: Any) -> Any:
        ent = as_entities(entities)
        if self.type == "sex_dependent":
            return row_sex(ent, self.depends_on)
        if self.type == "age_dependent":
            return row_age_years(ent, self.depends_on)
        return None

    @property
    def max_level(self) -> str:
        """The worst level a change can reach for this calculator (``L3`` when a band changes the
        action or a dose tolerance applies, ``L2`` for diagnostic bands or a dating tolerance)."""
        if self.type == "relative_dose" and self.tolerance is not None:
            return "L3"
        if any(len({b.action for b in bands}) > 1 for _, bands in self.band_sets()):
            return "L3"
        if self.type == "date_shift" or any(len(bands) > 1 for _, bands in self.band_sets()):
            return "L2"
        return "L1"


def band_of(bands: tuple[Band, ...], value: float) -> Band:
    """The band of ``value``: the last band whose lower bound admits it (bands are ordered)."""
    found = bands[0]
    for b in bands[1:]:
        if b.admits(value):
            found = b
    return found


def action_edges(bands: tuple[Band, ...]) -> list[tuple[str, str]]:
    """The band edges that change treatment or disposition: ``(band below, band above)`` pairs."""
    return [(lo.name, hi.name) for lo, hi in zip(bands, bands[1:]) if lo.action != hi.action]


def as_entities(entities: Any) -> dict:
    """A row's entities as a dict: ``None``, a dict, or the JSON text of the ``entities`` column."""
    if entities is None or (isinstance(entities, float) and math.isnan(entities)):
        return {}
    if isinstance(entities, str):
        entities = json.loads(entities) if entities.strip() else {}
    if not isinstance(entities, dict):
        raise ValueError(f"entities must be a dict or JSON object text, got {type(entities).__name__}")
    return entities


def row_sex(entities: dict, key: str | None) -> str | None:
    """``male`` / ``female`` from the row's sex entity (``Male``, ``F``...), else ``None``."""
    v = entities.get(key or "sex")
    text = str(v).strip().lower() if v is not None else ""
    if text in ("male", "m", "man"):
        return "male"
    if text in ("female", "f", "woman"):
        return "female"
    return None


def row_age_years(entities: dict, key: str | None) -> float | None:
    """The row's age in years from ``[value, unit]`` (or a bare number of years), else ``None``."""
    v = entities.get(key or "age")
    try:
        if isinstance(v, (list, tuple)) and len(v) == 2:
            return U.to_canonical("age", float(v[0]), str(v[1]))
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    except (U.UnknownUnit, TypeError, ValueError):
        return None
    return None


def _holds(when: dict, row_value: Any) -> bool:
    if row_value is None:
        return False
    if "sex" in when:
        return row_value == when["sex"]
    if "age_min" in when and row_value < when["age_min"]:
        return False
    if "age_below" in when and row_value >= when["age_below"]:
        return False
    return True


def _parse_bands(path: str, cid: int, raw: Any, where: str) -> tuple[Band, ...]:
    if not isinstance(raw, list) or not raw:
        raise DataError(path, "bands must be a non-empty list", row=cid, field=where)
    out, last = [], -math.inf
    for i, b in enumerate(raw):
        f = f"{where}[{i}]"
        if not isinstance(b, dict) or not b.get("name") or not b.get("action"):
            raise DataError(path, "each band needs a name and an action", row=cid, field=f)
        if "min" in b and "above" in b:
            raise DataError(path, "a band starts at `min` or `above`, not both", row=cid, field=f)
        lower = b.get("min", b.get("above"))
        if i == 0 and lower is not None:
            raise DataError(path, "the first band has no lower bound", row=cid, field=f)
        if i > 0:
            if not isinstance(lower, (int, float)) or isinstance(lower, bool):
                raise DataError(path, "a band after the first needs a numeric `min` or `above`", row=cid, field=f)
            if lower <= last:
                raise DataError(path, f"bands must be in increasing order ({lower} after {last})", row=cid, field=f)
            last = lower
        out.append(Band(str(b["name"]), None if lower is None else float(lower), "above" in b,
                        str(b["action"]), str(b.get("decision", ""))))
    return tuple(out)


def _parse_variants(path: str, cid: int, raw: Any, kind: str) -> tuple[Variant, ...]:
    if not isinstance(raw, list) or len(raw) < 2:
        raise DataError(path, "a dependent entry needs at least two variants", row=cid, field="variants")
    out = []
    for i, v in enumerate(raw):
        when = v.get("when") if isinstance(v, dict) else None
        ok_sex = kind == "sex_dependent" and isinstance(when, dict) and when.get("sex") in SEXES and len(when) == 1
        ok_age = kind == "age_dependent" and isinstance(when, dict) and when and set(when) <= {"age_min", "age_below"}
        if not (ok_sex or ok_age):
            raise DataError(path, f"`when` must be {{sex: male|female}} or {{age_min|age_below: N}} for {kind}",
                            row=cid, field=f"variants[{i}].when")
        out.append(Variant(dict(cast(dict, when)), _parse_bands(path, cid, v.get("bands"), f"variants[{i}].bands")))
    return tuple(out)


def parse_entry(path: str, cid: int, e: Any) -> Threshold:
    """One checked entry of the thresholds file."""
    if not isinstance(e, dict):
        raise DataError(path, "an entry must be a mapping", row=cid)
    kind = e.get("type")
    if kind not in TYPES:
        raise DataError(path, f"type {kind!r} not one of {TYPES}", row=cid, field="type")
    common = dict(calculator_id=cid, name=str(e.get("name", "")), type=kind, unit=str(e.get("unit", "")))
    if kind == "none":
        if e.get("bands") != "none" or not str(e.get("reason", "")).strip():
            raise DataError(path, "an entry without bands says `bands: none` and gives a reason", row=cid, field="reason")
        return Threshold(**common, reason=str(e["reason"]).strip())
    if not str(e.get("citation", "")).strip():
        raise DataError(path, "every entry with thresholds cites its source", row=cid, field="citation")
    common["citation"] = str(e["citation"]).strip()
    if kind in ("sex_dependent", "age_dependent"):
        if not e.get("depends_on"):
            raise DataError(path, "name the entity key the bands depend on", row=cid, field="depends_on")
        return Threshold(**common, depends_on=str(e["depends_on"]),
                         variants=_parse_variants(path, cid, e.get("variants"), kind))
    if kind == "date_shift":
        if not isinstance(e.get("days"), int) or e["days"] < 1:
            raise DataError(path, "a date_shift entry needs `days`, a positive integer", row=cid, field="days")
        return Threshold(**common, days=int(e["days"]))
    bands = _parse_bands(path, cid, e.get("bands"), "bands") if kind != "relative_dose" or "bands" in e else ()
    if kind == "relative_dose":
        tol = e.get("tolerance")
        if not isinstance(tol, (int, float)) or not 0 < tol < 1 or not str(e.get("tolerance_basis", "")).strip():
            raise DataError(path, "a relative_dose entry needs a tolerance in (0, 1) and its basis",
                            row=cid, field="tolerance")
        return Threshold(**common, bands=bands, tolerance=float(tol), tolerance_basis=str(e["tolerance_basis"]).strip())
    return Threshold(**common, bands=bands)


def load(text: str, path: str = FILE, calculator_ids: set[int] | None = None) -> dict[int, Threshold]:
    """Parse and check a thresholds file; with ``calculator_ids``, every id must have one entry."""
    data = safe_load(text) or {}
    entries = data.get("calculators")
    if not isinstance(entries, dict):
        raise DataError(path, "the file needs a `calculators` mapping", field="calculators")
    out = {int(cid): parse_entry(path, int(cid), e) for cid, e in entries.items()}
    if calculator_ids is not None:
        missing, extra = sorted(calculator_ids - set(out)), sorted(set(out) - calculator_ids)
        if missing or extra:
            raise DataError(path, f"entries must match the calculator registry: missing {missing}, unknown {extra}",
                            field="calculators")
    return out


@lru_cache(maxsize=1)
def thresholds() -> dict[int, Threshold]:
    """The checked entries of ``thresholds.yaml`` for every calculator of the registry."""
    from medcalc_maintained.calculators import load_all

    registry = load_all()
    text = resources.files("medcalc_maintained.calculators").joinpath(FILE).read_text("utf-8")
    out = load(text, FILE, set(registry))
    for cid, t in out.items():
        if (registry[cid].output_type == "date") != (t.type == "date_shift") and t.type != "none":
            raise DataError(FILE, "date outputs (and only they) take a date_shift entry", row=cid, field="type")
    return out
