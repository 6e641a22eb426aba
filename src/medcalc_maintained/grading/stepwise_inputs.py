"""The inputs the stepwise prompt names per calculator (``grading/stepwise_inputs.json``), from the
declared inputs of ``calculators/inputs.py``: ``python -m medcalc_maintained.grading.stepwise_inputs``
rewrites the file, and a test fails while it differs from the declarations."""

from __future__ import annotations

import json
import sys
from difflib import SequenceMatcher

from medcalc_maintained.calculators import load_all
from medcalc_maintained.calculators.inputs import InputSpec, declared_inputs
from medcalc_maintained.grading.prompts import INPUTS_FILE

SHOWN_OPTIONS = 8


def form(spec: InputSpec) -> str:
    """How the prompt asks for one input's value."""
    if spec.accessor == "quantity":
        units = [u for u in spec.units if u != spec.canonical_unit]
        return f"[value, unit] in {spec.canonical_unit}" + (f" (or {', '.join(units)})" if units else "")
    if spec.accessor == "flag":
        return "true or false"
    if spec.accessor == "date":
        return "a date MM/DD/YYYY"
    if spec.accessor == "number":
        return "a number"
    if spec.options:
        shown = " | ".join(spec.options[:SHOWN_OPTIONS]) + (" | ..." if len(spec.options) > SHOWN_OPTIONS else "")
        if spec.accessor == "choice":
            return f"one of {shown}"
        return f"the drug ({shown}) with its dose and unit, as written in the note"
    return "as written in the note"


def _same_input(a: InputSpec, b: InputSpec) -> bool:
    """Two declared spellings of one input (upstream's entity keys vary: ``Congestive Heart Faliure``,
    ``Congestive heart failure``): the same accessor, and the same name but for case or a letter or two."""
    return a.accessor == b.accessor and (a.name.lower() == b.name.lower() or
                                         SequenceMatcher(None, a.name.lower(), b.name.lower()).ratio() >= 0.9)


def lines(calculator_id: int) -> list[str]:
    """One line per input of a calculator, in declaration order: its spellings (any is graded as the
    input, case-insensitively) and the form of its value."""
    groups: list[list[InputSpec]] = []
    for spec in declared_inputs(calculator_id):
        group = next((g for g in groups if _same_input(g[0], spec)), None)
        if group is None:
            groups.append([spec])
        elif spec.name.lower() not in {s.name.lower() for s in group}:
            group.append(spec)
    return [" / ".join(s.name for s in g) + f": {form(g[0])}" for g in groups]


def table() -> dict[str, list[str]]:
    """``{calculator id: ["name: form", ...]}`` of every calculator (:func:`lines`)."""
    return {str(cid): lines(cid) for cid in sorted(load_all())}


def text() -> str:
    return json.dumps({"source": "calculators/inputs.py: declared_inputs (python -m medcalc_maintained.grading."
                                 "stepwise_inputs)", "calculators": table()}, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    INPUTS_FILE.write_text(text(), encoding="utf-8")
    print(f"wrote {INPUTS_FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
