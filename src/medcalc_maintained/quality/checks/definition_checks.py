"""The ``definition`` check: where the label depends on which published definition is used.

It asks :func:`medcalc_maintained.quality.definitions.definition_findings` (the declared policy of
``calculators/definitions.yaml`` and its implemented alternatives) and reports each alternative
that would give another label, or that the label follows instead of the declared definition.
"""

from __future__ import annotations

from typing import Iterator

from medcalc_maintained.calculators.policy import load_policy
from medcalc_maintained.quality.checks.registry import Check, Finding, Instance, register
from medcalc_maintained.quality.definitions import CHECK, definition_findings


@register(CHECK, "definition", calculators=[cid for cid, e in load_policy().items() if e["alternatives"]],
          description="the label changes under a published alternative definition, or follows one")
def definition_alternative(inst: Instance, check: Check) -> Iterator[Finding]:
    rec = inst.recompute or {}
    known = {"declared": rec["recomputed"]} if "recomputed" in rec else {}
    for f in definition_findings(inst.calculator_id, inst.entities, inst.label, inst.output_type, **known):
        yield inst.finding(check, f["reason"])
