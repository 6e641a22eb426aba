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
import json
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
from medcalc_maintained.core.yaml_text import safe_load

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


def canonical(files: Iterable[VectorFile]) -> list[dict[str, Any]]:
    """The vectors as plain data, in calculator id order: what ``vectors.json`` holds and the digest hashes."""
    return [{"calculator_id": f.calculator_id, "name": f.name, "follows": f.follows, "source": f.source,
             "formula": f.formula, "output_type": f.output_type,
             "cases": [{"id": c.id, "why": c.why, "inputs": c.inputs, "expected": c.expected,
                        **({"work": c.work} if c.work else {}),
                        **({"tolerance": c.tolerance} if c.tolerance is not None else {})} for c in f.cases]}
            for f in sorted(files, key=lambda f: f.calculator_id)]


def document(files: Iterable[VectorFile]) -> dict[str, Any]:
    """Every calculator's vectors as one JSON document with their sha256 (a release's ``conformance/vectors.json``)."""
    files = list(files)
    return {"vectors_sha256": digest_of(files), "calculators": canonical(files)}


def digest_of(files: Iterable[VectorFile]) -> str:
    """sha256 of the vectors' canonical JSON (sorted keys, no spaces): the version a report or a release
    names, which anyone holding a release's ``vectors.json`` can recompute from it."""
    text = json.dumps(canonical(files), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def vectors_digest(directory: Path | None = None) -> str:
    """:func:`digest_of` the vectors of ``directory`` (default: the packaged ones)."""
    return digest_of(load_vectors(directory=directory))


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
        doc = safe_load(path.read_text(encoding="utf-8"))
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
    extra = sorted(set(doc) - set(FILE_KEYS) - {"output_type"})
    if extra:
        raise DataError(path, f"unknown key(s) {', '.join(map(repr, extra))} (a vector file has "
                              f"{', '.join(FILE_KEYS)})", field=extra[0])
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
        where = f"case {c['id']}" if isinstance(c, dict) and isinstance(c.get("id"), str) else f"case #{i}"
        if not isinstance(c, dict):
            raise DataError(path, f"{where}: a case is a mapping", field="cases")
        unknown_keys = sorted(set(c) - set(CASE_KEYS) - {"work", "tolerance"})
        if unknown_keys:
            raise DataError(path, f"{where}: unknown key(s) {', '.join(map(repr, unknown_keys))} (a case has "
                                  f"{', '.join(CASE_KEYS)}, work, tolerance)", field=unknown_keys[0])
        if not isinstance(c.get("id"), str):
            raise DataError(path, f"{where}: id is a text (quote a numeric id)", field="id")
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
    lists = [c.id for c in cases if isinstance(c.expected, list)]
    if lists and len(lists) < sum(c.expected is not None for c in cases):
        other = next(c.id for c in cases if c.expected is not None and not isinstance(c.expected, list))
        raise DataError(path, f"case {other}: every case's expected has one form, and case {lists[0]} gives "
                              "[weeks, days]", field="expected")
    return VectorFile(cid, str(doc["name"]), str(doc["follows"]), str(doc["source"]), str(doc["formula"]),
                      output_type, tuple(cases), path)


def _stamp(source: Path) -> tuple[tuple[str, int, int], ...]:
    """What a cached reading of ``source`` rests on: each file's name, size and modification time."""
    paths = [source] if source.is_file() else vector_paths(source) if source.is_dir() else []
    return tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in paths)


@lru_cache(maxsize=8)
def _load(source: str, stamp: tuple[tuple[str, int, int], ...]) -> tuple[VectorFile, ...]:
    path = Path(source)
    if path.is_file() and path.suffix == ".json":  # a release's conformance/vectors.json
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            entries = doc["calculators"]
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(path, f"not a vectors.json (an object whose 'calculators' lists each calculator's "
                                  f"vectors): {exc}") from None
        files = tuple(parse_doc(c, f"{path}, calculator {c.get('calculator_id') if isinstance(c, dict) else c!r}")
                      for c in entries)
        if isinstance(doc.get("vectors_sha256"), str) and doc["vectors_sha256"] != digest_of(files):
            raise DataError(path, f"vectors_sha256 {doc['vectors_sha256'][:12]}... is not the sha256 of the vectors "
                                  f"it holds ({digest_of(files)[:12]}...): the file was changed", field="vectors_sha256")
        return files
    if not path.is_dir():
        raise DataError(path, "no such folder of vector files (<id>.yaml) or vectors.json")
    paths = vector_paths(path)
    if not paths:
        raise DataError(path, "holds no vector file (<id>.yaml)")
    return tuple(parse_file(p) for p in paths)


def load_vectors(calculators: Iterable[int] | None = None, directory: Path | None = None) -> list[VectorFile]:
    """The vectors (of ``calculators`` only, when given), in calculator id order: the packaged ones, a
    folder of ``<id>.yaml`` files, or a release's ``conformance/vectors.json`` (its sha256 checked)."""
    source = Path(directory or vectors_dir())
    files = _load(str(source), _stamp(source))
    ids = [f.calculator_id for f in files]
    if len(ids) != len(set(ids)):
        raise DataError(directory or vectors_dir(), f"calculator {next(i for i in ids if ids.count(i) > 1)} has "
                                                    "vectors twice")
    wanted = None if calculators is None else {int(c) for c in calculators}
    if wanted is not None:
        unknown = wanted - {f.calculator_id for f in files}
        if unknown:
            raise DataError(directory or vectors_dir(), f"no vectors for calculator(s) {sorted(unknown)}")
    return [f for f in files if wanted is None or f.calculator_id in wanted]
