"""Conformance vectors: hand-checked cases of every calculator, run against any implementation.

Each of the 55 calculators has a file ``vectors/<id>.yaml``: the definition it follows (the
``version`` of ``calculators/definitions.yaml``), the cited source, the rule in one line, and cases
(inputs in the calculator's declared input schema, the expected output, why the case is there and
the arithmetic that gives it). The expected values were worked out from the cited source, not from
this package's calculators, so the calculators are held to them like any other implementation.

>>> from medcalc_maintained.conformance import load_vectors, run_vectors, resolve
>>> report = run_vectors(load_vectors([5]), resolve("ours"))
>>> report.calculators[0].passed == report.calculators[0].cases
True

Public API: :func:`load_vectors` (:mod:`.vectors`), :func:`resolve` (:mod:`.implementations`),
:func:`run_vectors` and :class:`Report` (:mod:`.check`).
"""

from __future__ import annotations

from medcalc_maintained.conformance.check import CalculatorResult, Report, agrees, run_vectors
from medcalc_maintained.conformance.implementations import Implementation, resolve
from medcalc_maintained.conformance.vectors import Case, VectorFile, load_vectors, vectors_digest

__all__ = ["CalculatorResult", "Case", "Implementation", "Report", "VectorFile", "agrees", "load_vectors",
           "resolve", "run_vectors", "vectors_digest"]
