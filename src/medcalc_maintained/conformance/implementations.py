"""The implementations a conformance run can check, named as ``--impl`` names them.

- ``ours``: this package's reference calculators (:func:`medcalc_maintained.calculators.compute`).
- ``medcalc-bench``: the PyPI package ``medcalc-bench`` 1.7.0 (:mod:`.medcalc_bench`; the ``errata`` extra).
- ``recorded:NAME``: answers of a repository's calculators recorded once as data
  (:mod:`.recorded`; ``recorded:verified`` is MedCalc-Bench-Verified at a named commit).
- ``module:function``: any importable Python function called as ``function(calculator_id, inputs)``
  with the case's entity dict; it returns the answer (a number, a ``MM/DD/YYYY`` text or date, a
  ``(weeks, days)`` pair, or our ``('W weeks', 'D days')`` text) or raises.
- ``cmd:COMMAND``: a program started once (``shlex`` split, no shell) that reads one JSON object per
  line on stdin, ``{"id": 1, "calculator_id": 5, "inputs": {...}}``, and writes one JSON line per
  request, ``{"id": 1, "value": ...}`` or ``{"id": 1, "error": "..."}``, flushing after each line. A
  line that is not such an object (a banner, a log line) or names another id is skipped; no answer
  within :data:`ANSWER_TIMEOUT` seconds stops the program, and every later case has no answer.

A refusal (``NoResult``, an ``error`` answer) is that case's result "no result"; any other exception
is a failure of the case with its reason kept, never a crash of the run.
"""

from __future__ import annotations

import importlib
import json
import os
import queue
import shlex
import subprocess
import sys
import threading
from typing import Any

from medcalc_maintained.calculators import compute
from medcalc_maintained.conformance.base import Implementation, NoResult

ANSWER_TIMEOUT = 30.0  # seconds a cmd: program may take for one answer


def _ours(calculator_id: int, inputs: dict[str, Any]) -> Any:
    result = compute(calculator_id, inputs)
    if result.value is None:
        why = ", ".join([*(f"missing {m}" for m in result.missing), *(f"invalid {m}" for m in result.invalid)])
        raise NoResult(why or "not computable")
    return result.value


def _function(spec: str) -> Implementation:
    module_name, _, attr = spec.partition(":")
    if os.getcwd() not in sys.path:  # as `python -m` does: a module beside the caller is found
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an implementation's module may fail on import in any way
        raise ValueError(f"--impl {spec}: cannot import {module_name!r}: {type(exc).__name__}: {exc}") from exc
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(f"--impl {spec}: {module_name} has no function {attr!r}")
    return Implementation(spec, f"the Python function {spec}(calculator_id, inputs)", fn)


class _Program:
    """A ``cmd:`` program: one request line out, the answer line with the same id back (see the module)."""

    def __init__(self, spec: str, argv: list[str], timeout: float):
        self.spec, self.timeout, self.next_id, self.stopped = spec, timeout, 0, ""
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        except OSError as exc:
            raise ValueError(f"--impl {spec}: cannot start {argv[0]!r}: {exc}") from exc
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # end of output

    def _stop(self, why: str) -> None:
        self.stopped = why
        if self.proc.poll() is None:
            self.proc.kill()
        self.close()

    def call(self, calculator_id: int, inputs: dict[str, Any]) -> Any:
        if self.stopped:
            raise NoResult(self.stopped)
        self.next_id += 1
        ident = self.next_id
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"id": ident, "calculator_id": calculator_id, "inputs": inputs}) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._stop(f"the program exited (status {self.proc.poll()})")
            raise NoResult(self.stopped) from None
        while True:
            try:
                line = self.lines.get(timeout=self.timeout)
            except queue.Empty:
                self._stop(f"no answer within {self.timeout:g} s (does the program flush after each line?); "
                           "the program was stopped")
                raise NoResult(self.stopped) from None
            if line is None:
                self._stop(f"the program exited (status {self.proc.poll()}) before answering")
                raise NoResult(self.stopped)
            try:
                reply = json.loads(line)
            except json.JSONDecodeError:
                continue  # not an answer line (a banner, a log line)
            if isinstance(reply, dict) and reply.get("id") == ident:
                break
        if "error" in reply:
            raise NoResult(str(reply["error"]))
        if "value" not in reply:
            raise NoResult('the answer line has neither "value" nor "error"')
        return reply["value"]

    def close(self) -> None:
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()  # its stdout then ends, and the reading thread with it


def _command(spec: str, timeout: float = ANSWER_TIMEOUT) -> Implementation:
    argv = shlex.split(spec[len("cmd:"):])
    if not argv:
        raise ValueError("--impl cmd: names no program (e.g. --impl 'cmd:python my_calcs.py')")
    program = _Program(spec, argv, timeout)
    return Implementation(spec, f"the program {' '.join(argv)} (JSON lines)", program.call, [program.close])


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
