"""Zero-LLM label checks with note evidence (issue 13).

>>> from medcalc_maintained.quality.checks import Instance, run
>>> [f.check for f in run(Instance(note="A 4-year-old boy.", calculator_id=51,
...                                 entities={"age": [4, "years"]}))]
['outside_population']

Every check lives in the registry of :mod:`.registry`; the per-calculator rules are data in
``rules.yaml``. :func:`run_checks` runs them over a whole instances table (with the recompute
output) and returns one row per finding (the ``findings.parquet`` table).
"""

from __future__ import annotations

from medcalc_maintained.quality.checks import (  # noqa: F401  (register)
    definition_checks,
    note_checks,
    population_checks,
    recompute_checks,
    value_checks,
)
from medcalc_maintained.quality.checks.registry import REGISTRY, SEVERITIES, Check, Finding, Instance, register, run
from medcalc_maintained.quality.checks.table import FINDING_COLUMNS, STRUCTURED_COLUMNS, run_checks

__all__ = ["FINDING_COLUMNS", "STRUCTURED_COLUMNS", "REGISTRY", "SEVERITIES", "Check", "Finding", "Instance", "register", "run", "run_checks"]
