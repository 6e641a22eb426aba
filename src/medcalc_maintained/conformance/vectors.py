"""Reading and checking the conformance vector files (``vectors/<id>.yaml`` beside this module).

A file is refused, naming the file, case and field, when: its ``calculator_id`` is not a registered
calculator or not the file's name; ``follows`` is not the definition the policy declares; a case has
no ``id``, ``why``, ``inputs`` or ``expected``, or repeats an ``id``; an input is not a declared input
of the calculator; or ``expected`` does not have the calculator's output type (a number for decimals,
an integer for integers, ``MM/DD/YYYY`` for dates, ``[weeks, days]`` for a gestational age, or
``null``: the definition gives no result for these inputs, and an implementation must not give one).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

import yaml

from medcalc_maintained.calculators import load_all
from medcalc_maintained.calculators.inputs import declared_inputs
from medcalc_maintained.calculators.policy import guideline_version
from medcalc_maintained.core.errors import DataError

FILE_KEYS = ("calculator_id", "name", "follows", "source", "formula", "cases")
CASE_KEYS = ("id", "why", "inputs", "expected")


@dataclass(frozen=True)
class Case:
    """One vector: ``inputs`` (an entity dict), the ``expected`` output, ``why`` it is there, ``work``."""

    id: str
    why: str
    inputs: dict[str, Any]
    expected: Any
    work: str = ""
    tolerance: float | None = None


@dataclass(frozen=True)
class VectorFile:
    """The vectors of one calculator, with the definition they follow and its source."""

    calculator_id: int
    name: str
    follows: str
    source: str
    formula: str
    output_type: str
    cases: tuple[Case, ...]
    path: str

    @property
    def kind(self) -> str:
        """``decimal``, ``integer``, ``date`` or ``weeks_days`` (a gestational age)."""
        if any(isinstance(c.expected, list) for c in self.cases):
            return "weeks_days"
        return self.output_type


def vectors_dir() -> Path:
    return Path(str(resources.files("medcalc_maintained.conformance") / "vectors"))


def vector_paths(directory: Path | None = None) -> list[Path]:
    return sorted((directory or vectors_dir()).glob("*.yaml"), key=lambda p: (len(p.stem), p.stem))


def vectors_digest(directory: Path | None = None) -> str:
    """sha256 over every vector file (name and bytes, in id order): the version a report names."""
    h = hashlib.sha256()
    for path in vector_paths(directory):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _expected_ok(value: Any, output_type: str) -> str | None:
    if output_type == "date":
        if not isinstance(value, str):
            return "a date is written as the text MM/DD/YYYY"
        try:
            dt.datetime.strptime(value, "%m/%d/%Y")
        except ValueError:
            return f"{value!r} is not a date MM/DD/YYYY"
        return None
    if isinstance(value, list):
        if len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in value) \
                and 0 <= value[1] <= 6:
            return None
        return "a gestational age is [weeks, days] with 0 <= days <= 6"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{value!r} is not a number"
    if output_type == "integer" and not isinstance(value, int):
        return f"{value!r} is not an integer (the calculator's output type is integer)"
    return None


def _drug_key(key: str) -> str:
    """The opioid an MME entity key names (``<Opioid> Dose`` / ``<Opioid> Dose Per Day``), lower-cased."""
    k = key.lower().strip()
    for suffix in (" dose per day", " dose"):
        if k.endswith(suffix):
            return k[: -len(suffix)].strip()
    return ""


def parse_file(path: Path) -> VectorFile:
    """Read and check one vector file (every problem raises :class:`DataError` naming its place)."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DataError(path, f"not YAML: {exc}") from exc
    vf = parse_doc(doc, str(path))
    if path.stem != str(vf.calculator_id):
        raise DataError(path, f"the file of calculator {vf.calculator_id} is named {vf.calculator_id}.yaml",
                        field="calculator_id")
    return vf


def parse_doc(doc: Any, path: str) -> VectorFile:
    """Check one calculator's vectors (a vector file's mapping, or one entry of a release's
    ``conformance/vectors.json``); ``path`` names where it came from in every problem."""
    if not isinstance(doc, dict):
        raise DataError(path, "a vector file is a mapping with " + ", ".join(FILE_KEYS))
    missing = [k for k in FILE_KEYS if k not in doc]
    if missing:
        raise DataError(path, f"missing {', '.join(missing)}", field=missing[0])
    calcs = load_all()
    cid = doc["calculator_id"]
    if not isinstance(cid, int) or cid not in calcs:
        raise DataError(path, f"{cid!r} is not a registered calculator id", field="calculator_id")
    declared = guideline_version(cid)
    if doc["follows"] != declared:
        raise DataError(path, f"follows {doc['follows']!r}, but the policy declares {declared!r} "
                        "(calculators/definitions.yaml)", field="follows")
    specs = declared_inputs(cid)
    names = {s.name for s in specs}
    drugs = {o.lower() for s in specs if s.accessor == "opioid_list" for o in s.options}
    output_type = calcs[cid].output_type
    cases, seen = [], set()
    if not isinstance(doc["cases"], list) or not doc["cases"]:
        raise DataError(path, "cases is a non-empty list", field="cases")
    for i, c in enumerate(doc["cases"], 1):
        where = f"case {c.get('id', i) if isinstance(c, dict) else i}"
        if not isinstance(c, dict):
            raise DataError(path, f"{where}: a case is a mapping", field="cases")
        for k in CASE_KEYS:
            if k not in c or (k != "expected" and (c[k] is None or c[k] == "")):
                raise DataError(path, f"{where}: missing {k}", field=k)
        if c["id"] in seen:
            raise DataError(path, f"{where}: id repeated", field="id")
        seen.add(c["id"])
        if not isinstance(c["inputs"], dict):
            raise DataError(path, f"{where}: inputs is an entity mapping", field="inputs")
        unknown = sorted(k for k in c["inputs"] if k not in names and _drug_key(k) not in drugs)
        if unknown:
            raise DataError(path, f"{where}: {', '.join(map(repr, unknown))} is not a declared input of calculator "
                            f"{cid} (calculators/inputs.py declared_inputs)", field="inputs")
        problem = None if c["expected"] is None else _expected_ok(c["expected"], output_type)
        if problem:
            raise DataError(path, f"{where}: {problem}", field="expected")
        tol = c.get("tolerance")
        if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float)) or tol < 0):
            raise DataError(path, f"{where}: tolerance is a number >= 0", field="tolerance")
        cases.append(Case(str(c["id"]), str(c["why"]), dict(c["inputs"]), c["expected"], str(c.get("work") or ""),
                          None if tol is None else float(tol)))
    if doc.get("output_type") not in (None, output_type):
        raise DataError(path, f"output_type {doc['output_type']!r} is not calculator {cid}'s {output_type!r}",
                        field="output_type")
    kinds = {isinstance(c.expected, list) for c in cases if c.expected is not None}
    if len(kinds) > 1:
        raise DataError(path, "every case's expected has one form ([weeks, days] or a number)", field="expected")
    return VectorFile(cid, str(doc["name"]), str(doc["follows"]), str(doc["source"]), str(doc["formula"]),
                      output_type, tuple(cases), path)


@lru_cache(maxsize=4)
def _load(directory: str) -> tuple[VectorFile, ...]:
    return tuple(parse_file(p) for p in vector_paths(Path(directory)))


def load_vectors(calculators: Iterable[int] | None = None, directory: Path | None = None) -> list[VectorFile]:
    """The vector files (of ``calculators`` only, when given), in calculator id order."""
    files = _load(str(directory or vectors_dir()))
    wanted = None if calculators is None else {int(c) for c in calculators}
    if wanted is not None:
        unknown = wanted - {f.calculator_id for f in files}
        if unknown:
            raise DataError(directory or vectors_dir(), f"no vectors for calculator(s) {sorted(unknown)}")
    return [f for f in files if wanted is None or f.calculator_id in wanted]
