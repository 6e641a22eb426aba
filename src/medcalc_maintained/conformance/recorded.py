"""Implementations we may not run at test or run time, recorded once as data.

MedCalc-Bench-Verified's calculators live in a Git repository, not a package: they are fetched once,
run by :func:`record` on every conformance vector and every v1.0 row's ``Relevant Entities``, and
their answers kept in ``recorded/<name>.json`` with the repository and commit they came from. The
file stores no input: each answer is keyed by :func:`query_key` (sha256 of the calculator id and the
canonical JSON of the inputs), so ``--impl recorded:<name>`` answers exactly the queries that were
recorded (what one raised is replayed as :class:`RecordedError`, a failure) and stops the run with
:class:`~.base.NotRecorded` on any other (a vector added since: record again).

Recording (``python -m medcalc_maintained.conformance.recorded --help``) imports the repository's own
modules from a temporary copy of ``calculator_implementations/`` at the commit and renames our input
names to the function's parameter names with the repository's own ``name_to_python.json``; an input
it does not map is passed under our name. Nothing of the repository is copied into this project.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from medcalc_maintained.conformance.base import Implementation, NotRecorded, failure_text

SUBDIR = "calculator_implementations"
NOT_KEYS = {"file path", "explanation function", "calculator name", "type", "question"}
# Our input names that the repository's name file spells differently beyond case and subscripts
# (folded as :func:`fold` folds them): the names it may have for the same input, tried in order.
ALIASES = {"partial pressure of oxygen (pao2) for apache ii": ("pao2", "partial pressure of oxygen"),
           "symptom onset ≤3 days": ("symptom onset <=3 days",)}


def fold(name: str) -> str:
    """A name compared without case and with subscript digits as digits (``FiO₂`` = ``fio2``)."""
    return name.translate(str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")).casefold().strip()


class RecordedError(RuntimeError):
    """What the recorded implementation raised on this query when it was recorded."""


def query_key(calculator_id: int, inputs: dict[str, Any]) -> str:
    text = json.dumps([int(calculator_id), inputs], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def recorded_path(name: str) -> Path:
    return Path(str(resources.files("medcalc_maintained.conformance") / "recorded" / f"{name}.json"))


def load(name: str) -> dict[str, Any]:
    path = recorded_path(name)
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.json"))
        raise ValueError(f"--impl recorded:{name}: no recorded implementation of that name (known: {', '.join(known)})")
    return json.loads(path.read_text(encoding="utf-8"))


def implementation(name: str) -> Implementation:
    doc = load(name)
    answers: dict[str, Any] = doc["answers"]

    def call(calculator_id: int, inputs: dict[str, Any]) -> Any:
        key = query_key(calculator_id, inputs)
        if key not in answers:
            raise NotRecorded(f"--impl recorded:{name}: calculator {calculator_id} has a query the recording of "
                              f"{doc['commit'][:12]} does not hold (a vector added since): record it again "
                              "(python -m medcalc_maintained.conformance.recorded --help)")
        got = answers[key]
        if isinstance(got, dict) and "error" in got:  # what it raised when it was recorded: a failure
            raise RecordedError(str(got["error"]))
        return got

    describe = f"{doc['repository']} at {doc['commit'][:12]}, recorded answers ({len(answers)} queries)"
    return Implementation(f"recorded:{name}", describe, call)


# ---- recording (a maintainer's one-off, with a checkout of the repository) -------------------------

def _extract(git_dir: Path, commit: str, into: Path) -> Path:
    """``calculator_implementations/`` of ``commit`` in ``git_dir`` (a clone or bare mirror), under ``into``."""
    data = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, SUBDIR],
                          check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / SUBDIR


def _functions(folder: Path) -> dict[int, tuple[Any, dict[str, str]]]:
    """Per calculator id: the repository's function and a map from each of our declared input names
    to its parameter name (by folded name, else through another spelling of the same criterion in
    our ``spelling_groups``, else through :data:`ALIASES`)."""
    from medcalc_maintained.calculators.inputs import declared_inputs, spelling_groups

    names = json.loads((folder / "name_to_python.json").read_text(encoding="utf-8"))
    sys.path.insert(0, str(folder))
    out = {}
    for cid, entry in names.items():
        module = importlib.import_module(Path(entry["file path"]).stem)
        theirs = {fold(k): v for k, v in entry.items() if k.lower() not in NOT_KEYS and isinstance(v, str)}
        keys: dict[str, str] = {}
        for spec in declared_inputs(int(cid)):
            group = next((g for g in spelling_groups(int(cid)) if spec.name in g), (spec.name,))
            tries = [fold(n) for n in (spec.name, *group)] + list(ALIASES.get(fold(spec.name), ()))
            found = next((theirs[t] for t in tries if t in theirs), None)
            if found is not None:
                keys[spec.name] = found
        out[int(cid)] = (getattr(module, entry["explanation function"]), keys)
    return out


def _answer(fn: Any, keys: dict[str, str], inputs: dict[str, Any]) -> Any:
    params: dict[str, Any] = {}
    for name, value in inputs.items():  # spellings of one criterion under one name: a flag is true when any is
        key = keys.get(name, name)
        params[key] = (params[key] or value) if isinstance(params.get(key), bool) and isinstance(value, bool) \
            else value
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            out = fn(params)
    except Exception as exc:  # the recorded implementation's own failure is its answer
        return {"error": failure_text(exc)}
    answer = out.get("Answer") if isinstance(out, dict) else out
    if answer is None:
        return {"error": "returned no Answer"}
    if isinstance(answer, (tuple, list)):
        return [a if isinstance(a, (int, float, str)) else str(a) for a in answer]
    return answer if isinstance(answer, (int, float, str)) else str(answer)


def record(git_dir: Path, commit: str, repository: str, queries: Iterable[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = _extract(git_dir, commit, Path(tmp))
        functions = _functions(folder)
        answers: dict[str, Any] = {}
        for cid, inputs in queries:
            key = query_key(cid, inputs)
            if key not in answers:
                fn, keys = functions[cid]
                answers[key] = _answer(fn, keys, inputs)
    return {"repository": repository, "commit": commit, "path": SUBDIR,
            "how": "python -m medcalc_maintained.conformance.recorded (the repository's own name_to_python.json "
                   "maps our input names to its parameters)",
            "answers": dict(sorted(answers.items()))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m medcalc_maintained.conformance.recorded",
        description="Record a repository's calculator answers on every conformance vector and v1.0 row.")
    parser.add_argument("--git-dir", type=Path, required=True, help="the repository's git directory (clone or mirror)")
    parser.add_argument("--commit", required=True, help="the commit to run (40 hex digits)")
    parser.add_argument("--repository", required=True, help="owner/name, as the record names it")
    parser.add_argument("--name", required=True, help="the record's name: --impl recorded:NAME")
    parser.add_argument("--instances", type=Path, default=None,
                        help="the ingest stage's v1.0 rows (default: the project's, as stage errata reads them)")
    args = parser.parse_args(argv)
    import pandas as pd

    from medcalc_maintained.conformance.rows import v1_rows
    from medcalc_maintained.conformance.vectors import load_vectors

    queries = [(v.calculator_id, c.inputs) for v in load_vectors() for c in v.cases]
    if args.instances is None:
        from medcalc_maintained.project import Project

        args.instances = Project.load().instances
    queries += [(r.calculator_id, r.entities) for r in v1_rows(pd.read_parquet(args.instances))]
    doc = record(args.git_dir, args.commit, args.repository, queries)
    out = recorded_path(args.name)
    out.write_text(json.dumps(doc, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(doc['answers'])} answers of {args.repository}@{args.commit[:12]} -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
