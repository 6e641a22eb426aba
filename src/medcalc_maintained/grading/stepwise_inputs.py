"""The inputs the stepwise prompt names per calculator (``grading/stepwise_inputs.json``), from the
declared inputs of ``calculators/inputs.py``: ``python -m medcalc_maintained.grading.stepwise_inputs``
rewrites the file, and a test fails while it differs from the declarations."""

from __future__ import annotations

import json
import sys

from medcalc_maintained.calculators import load_all
from medcalc_maintained.calculators.inputs import InputSpec, declared_inputs, spelling_groups
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


def lines(calculator_id: int) -> list[str]:
    """One line per input of a calculator, in declaration order: the names its code reads as one criterion
    (``calculators/inputs.py: spelling_groups``; any of them is graded as that criterion) and the form of
    its value."""
    groups = {n: g for g in spelling_groups(calculator_id) for n in g}
    out: list[str] = []
    done: set[str] = set()
    for spec in declared_inputs(calculator_id):
        if spec.name in done:
            continue
        names = groups.get(spec.name, (spec.name,))
        done.update(names)
        out.append(" / ".join(names) + f": {form(spec)}")
    return out


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
