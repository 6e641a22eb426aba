"""The implementations a conformance run can check, named as ``--impl`` names them.

- ``ours``: this package's reference calculators (:func:`medcalc_maintained.calculators.compute`).
- ``medcalc-bench``: the PyPI package ``medcalc-bench`` 1.7.0 (:mod:`.medcalc_bench`; the ``errata`` extra).
- ``recorded:NAME``: answers of a repository's calculators recorded once as data
  (:mod:`.recorded`; ``recorded:verified`` is MedCalc-Bench-Verified at a named commit).
- ``module:function``: any importable Python function called as ``function(calculator_id, inputs)``
  with the case's entity dict; it returns the answer (a number, a ``MM/DD/YYYY`` text or date, a
  ``(weeks, days)`` pair, or our ``('W weeks', 'D days')`` text) or raises.
- ``cmd:COMMAND``: a program started once (``shlex`` split, no shell) that reads one JSON object per
  line on stdin, ``{"calculator_id": 5, "inputs": {...}}``, and writes one JSON line per request,
  ``{"value": ...}`` or ``{"error": "..."}``.

A call that raises, returns nothing or answers with an error is that case's result ("no result"),
never a crash of the run.
"""

from __future__ import annotations

import importlib
import json
import shlex
import subprocess
from typing import Any

from medcalc_maintained.calculators import compute
from medcalc_maintained.conformance.base import Implementation, NoResult


def _ours(calculator_id: int, inputs: dict[str, Any]) -> Any:
    result = compute(calculator_id, inputs)
    if result.value is None:
        why = ", ".join([*(f"missing {m}" for m in result.missing), *(f"invalid {m}" for m in result.invalid)])
        raise NoResult(why or "not computable")
    return result.value


def _function(spec: str) -> Implementation:
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"--impl {spec}: cannot import {module_name!r}: {exc}") from exc
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(f"--impl {spec}: {module_name} has no function {attr!r}")
    return Implementation(spec, f"the Python function {spec}(calculator_id, inputs)", fn)


def _command(spec: str) -> Implementation:
    argv = shlex.split(spec[len("cmd:"):])
    if not argv:
        raise ValueError("--impl cmd: names no program (e.g. --impl 'cmd:python my_calcs.py')")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    except OSError as exc:
        raise ValueError(f"--impl {spec}: cannot start {argv[0]!r}: {exc}") from exc

    def call(calculator_id: int, inputs: dict[str, Any]) -> Any:
        assert proc.stdin is not None and proc.stdout is not None
        if proc.poll() is not None:
            raise NoResult(f"the program exited with status {proc.returncode}")
        proc.stdin.write(json.dumps({"calculator_id": calculator_id, "inputs": inputs}) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            raise NoResult("the program wrote no answer line")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError as exc:
            raise NoResult(f"the answer line is not JSON: {line.strip()[:80]!r}") from exc
        if not isinstance(reply, dict) or ("value" not in reply and "error" not in reply):
            raise NoResult('the answer line is not {"value": ...} or {"error": ...}')
        if "error" in reply:
            raise NoResult(str(reply["error"]))
        return reply["value"]

    def close() -> None:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()

    return Implementation(spec, f"the program {' '.join(argv)} (JSON lines)", call, [close])


def resolve(spec: str) -> Implementation:
    """The implementation ``spec`` names (see the module docstring); ``ValueError`` says why not."""
    if spec == "ours":
        return Implementation("ours", "medcalc_maintained.calculators (this package's reference calculators)", _ours)
    if spec == "medcalc-bench":
        from medcalc_maintained.conformance.medcalc_bench import implementation as package

        return package()
    if spec.startswith("recorded:"):
        from medcalc_maintained.conformance.recorded import implementation as recorded

        return recorded(spec[len("recorded:"):])
    if spec.startswith("cmd:"):
        return _command(spec)
    if ":" in spec:
        return _function(spec)
    raise ValueError(f"--impl {spec!r}: give ours, medcalc-bench, recorded:NAME, a module:function, or cmd:COMMAND")
