"""Step-wise grading: how a model reached its answer, read from the inputs it states.

A step-wise output (prompt variant ``stepwise``, :mod:`.prompts`) states the inputs it used in an
``<inputs>…</inputs>`` block before its ``<answer>``: a JSON object from input name to value, a quantity
as ``[value, "unit"]`` (or ``{"value": …, "unit": …}``), a criterion as ``true``/``false``, a choice or a
date as text. For one row and its certified inputs (config ``inputs`` of a release: the inputs whose
note verdict is ``supports``, :func:`certified_reference`), :func:`grade_steps` reports

* **extraction**: each certified input against the stated one (:func:`input_matches`: quantities in
  canonical units within the tolerance of their kind (:func:`tolerance`), criteria as booleans (an unstated
  criterion is absent), choices and dates as text, ``m``/``man`` read as ``Male`` and ``f``/``woman`` as
  ``Female``): ``correct``, ``wrong`` or ``missing``; a stated name that is none of the calculator's
  declared inputs is ``extra``, and a quantity whose unit its kind cannot have is ``bad_unit``. Names the
  calculator reads as one criterion (``calculators/inputs.py: spelling_groups``: ``Hypertension history`` /
  ``Hypertension``) are graded as one input, true when any is. The MME's drug list (``opioids``) is not
  compared: its certified form is a list whose order and spelling vary, and the calculator reads per-drug
  entities;
* **arithmetic**: whether the answer is right for the model's *own* stated inputs: the reference
  calculator applied to them gives a value, and the answer is graded against that value with the
  output type's rule (decimals within 5%, integers rounded, dates the same day); ``None`` when the
  stated inputs do not let the calculator compute;
* **final answer**: the status of :func:`.grade.grade` against the row's label.

Every answer that is not right gets one class (:data:`CLASSES`). The block is read, never repaired: a block
that is not a JSON object, names no declared input or gives a unit the input cannot have is counted as
such (:data:`BLOCK_PROBLEMS`) and nothing is guessed from it. The first two leave nothing to grade (the
row is ``format``); a quantity with a unit its kind cannot have (an age in mg/dL, urine output in mg/dL)
is that input misread: an extraction error, the block's other inputs graded as usual and nothing computed
from it.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Iterable, Mapping, cast

from medcalc_maintained.calculators import compute
from medcalc_maintained.calculators.base import Inputs
from medcalc_maintained.calculators.inputs import InputSpec, declared_inputs, spelling_groups
from medcalc_maintained.core import units as U
from medcalc_maintained.core.answers import Answer, is_correct, limits
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.grading.grade import grade

if TYPE_CHECKING:
    import pandas as pd

INPUT_RTOL = 0.01  # relative tolerance of a numeric input (rounding in unit conversions)
# inputs whose readings differ by less than 1% yet mean another band: an absolute tolerance (canonical unit)
ABSOLUTE_TOLERANCE = {"temperature": 0.1, "pH": 0.005}
SEX = {"m": "male", "man": "male", "male": "male", "f": "female", "woman": "female", "female": "female"}
UNGRADED = ("opioid_list",)  # accessors whose certified value is not compared (see the module)
# a block: the text between an opening tag and the next closing one, with no opening tag inside (prose that
# names "<inputs>" before the block does not swallow it)
BLOCK = re.compile(r"<inputs>((?:(?!<inputs>).)*?)</inputs>", re.S | re.I)
# what a stated block can be: read (``ok``), or why nothing can be read from it
BLOCK_PROBLEMS = ("absent", "not_json", "no_declared_input", "bad_unit")
INPUT_STATUSES = ("correct", "wrong", "missing", "extra", "bad_unit")
CLASSES = {
    "right": "the answer is right",
    "extraction": "a certified input stated wrong (or with a unit it cannot have) or not at all; the answer is "
                  "right for the stated inputs, or nothing computes from them",
    "arithmetic": "every certified input stated right; the answer is not what the calculator gives from them",
    "both": "an input stated wrong and the answer not what the calculator gives from the stated inputs",
    "format": "no answer the grader can read, or no readable inputs block to tell extraction from arithmetic",
    "abstention": "an N/A label answered with a value, or an answerable row refused",
    "unjudged": "every certified input stated right and the answer right for the stated inputs (or nothing "
                "computes from them), yet wrong: the label rests on an input the note does not certify "
                "(contradicted or not addressed: the row's evidence_status says which) or on another definition",
}


# ---- one input ------------------------------------------------------------------------------------

def lookup(d: Mapping[str, Any], spec: InputSpec) -> tuple[bool, Any]:
    """Whether ``d`` names ``spec`` (its name or an alias, case-insensitively) with a value, and the value."""
    lowered = {str(k).strip().lower(): k for k in d}
    for name in (spec.name, *spec.aliases):
        k = name if name in d else lowered.get(name.lower())
        if k is not None and d[k] is not None:
            return True, d[k]
    return False, None


def _pair(v: Any) -> Any:
    return [v["value"], v["unit"]] if isinstance(v, dict) and {"value", "unit"} <= set(v) else v


def canonical(spec: InputSpec, v: Any) -> float | None:
    """A quantity in the canonical unit of its kind, or a number (``None`` when neither)."""
    x = Inputs({"v": _pair(v)})
    if spec.accessor == "quantity":
        return x.quantity("v", cast(str, spec.kind))  # a quantity names its kind
    return x.number("v")


def tolerance(spec: InputSpec) -> tuple[str, float]:
    """``("abs", t)`` or ``("rel", t)``: how close a stated number must be to the certified one (canonical
    unit): 0.1 °C for a temperature, 0.005 for a pH (7.22 and 7.29 are other bands), else 1%."""
    key = spec.kind if spec.accessor == "quantity" and spec.kind in ABSOLUTE_TOLERANCE else spec.name
    return ("abs", ABSOLUTE_TOLERANCE[key]) if key in ABSOLUTE_TOLERANCE else ("rel", INPUT_RTOL)


def _close(a: float | None, b: float | None, tol: tuple[str, float] = ("rel", INPUT_RTOL)) -> bool:
    if a is None or b is None:
        return False
    if tol[0] == "abs":
        return abs(a - b) <= tol[1] + 1e-12
    return abs(a - b) <= tol[1] * max(abs(a), abs(b)) + 1e-12


def _text(v: Any) -> str:
    t = str(v).strip().lower()
    return SEX.get(t, t)


def input_matches(spec: InputSpec, reference: Any, given: Any, present: bool) -> str:
    """``correct``, ``wrong`` or ``missing`` for one input."""
    if spec.accessor == "flag":
        ref = Inputs({"v": reference}).flag("v")
        got = Inputs({"v": given}).flag("v") if present else False
        return "correct" if ref == got else ("missing" if not present else "wrong")
    if not present:
        return "missing"
    if spec.accessor in ("quantity", "number"):
        return "correct" if _close(canonical(spec, reference), canonical(spec, given), tolerance(spec)) else "wrong"
    if spec.accessor == "steroid_dose":
        ref_dose = reference if isinstance(reference, list) else []
        got_dose: Any = [given.get("name"), given.get("dose"), given.get("unit")] if isinstance(given, dict) else given
        try:
            same = (str(ref_dose[0]).lower() == str(got_dose[0]).lower()
                    and _close(U.to_canonical("drug_mass", float(ref_dose[1]), str(ref_dose[2])),
                               U.to_canonical("drug_mass", float(got_dose[1]), str(got_dose[2]))))
        except (TypeError, ValueError, IndexError):
            same = False
        return "correct" if same else "wrong"
    return "correct" if _text(reference) == _text(given) else "wrong"


def bad_unit(spec: InputSpec, given: Any) -> bool:
    """Whether a stated quantity gives a unit its kind cannot have (``mg/dL`` for an age)."""
    v = _pair(given)
    if spec.accessor != "quantity" or not (isinstance(v, (list, tuple)) and len(v) == 2):
        return False
    try:
        U.to_canonical(cast(str, spec.kind), 1.0, str(v[1]))
    except (U.UnknownUnit, KeyError):
        return True
    return False


# ---- the block and the reference -------------------------------------------------------------------

def stated_inputs(output: str) -> tuple[str, dict[str, Any] | None]:
    """``(state, inputs)`` of an output's last ``<inputs>`` block: ``ok`` with the JSON object, else
    ``absent`` or ``not_json`` (a block that is not a JSON object) and ``None``."""
    found = BLOCK.findall(output if isinstance(output, str) else "")
    if not found:
        return "absent", None
    try:
        doc = json.loads(found[-1].strip())
    except ValueError:
        return "not_json", None
    return ("ok", doc) if isinstance(doc, dict) else ("not_json", None)


def certified_reference(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The certified inputs of one row, as entities (``{name: value}``, a quantity ``[value, unit]``),
    from its rows of config ``inputs``: the inputs its derivation uses whose note verdict is ``supports``."""
    out: dict[str, Any] = {}
    for r in rows:
        if str(r.get("verdict")) != "supports" or r.get("used") is False:
            continue
        raw = r.get("value")
        value = json.loads(raw) if isinstance(raw, str) else None
        unit = r.get("unit") if isinstance(r.get("unit"), str) and r.get("unit") else None
        out[str(r["name"])] = [value, unit] if unit is not None and value is not None else value
    return out


def certified_by_row(rows: Iterable[Mapping[str, Any]]) -> dict[int, dict[str, Any]]:
    """:func:`certified_reference` of every row (``uid``) of config ``inputs`` of one split, by uid."""
    by: dict[int, list[Mapping[str, Any]]] = {}
    for r in rows:
        by.setdefault(int(r["uid"]), []).append(r)
    return {u: certified_reference(rs) for u, rs in sorted(by.items())}


def _criteria(cid: int, specs: list[InputSpec]) -> list[list[InputSpec]]:
    """The declared inputs grouped as the calculator reads them (``spelling_groups``), in declaration order."""
    by_name = {s.name: s for s in specs}
    groups = {n: g for g in spelling_groups(cid) for n in g}
    out: list[list[InputSpec]] = []
    done: set[str] = set()
    for s in specs:
        if s.name not in done:
            names = groups.get(s.name, (s.name,))
            done.update(names)
            out.append([by_name[n] for n in names if n in by_name])
    return out


# ---- one row ---------------------------------------------------------------------------------------

def _arithmetic(cid: int, stated: dict[str, Any], parsed: Answer, otype: str) -> tuple[bool | None, str | None]:
    """Whether the model's answer (``parsed``, as :func:`grade` read it) is right for the calculator's
    value on ``stated`` (``None``: it computes nothing)."""
    result = compute(cid, {k: _pair(v) for k, v in stated.items()})
    if not result.computable:
        return None, None
    lo, hi = limits(result.value, otype)
    return is_correct(parsed, result.value, lo, hi, otype), result.value


def grade_steps(row: Mapping[str, Any], output: str, reference: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(row record, input records)`` of one output (see the module): ``row`` is a release row
    (``Calculator ID``, ``Output Type``, label and limits), ``reference`` its certified inputs
    (:func:`certified_reference`)."""
    cid, otype = int(row["Calculator ID"]), str(row["Output Type"])
    output = output if isinstance(output, str) else ""  # no output: graded as an unreadable one, never a crash
    status, parsed = grade(output, str(row["Ground Truth Answer"]), str(row["Lower Limit"]),
                           str(row["Upper Limit"]), otype)
    state, stated = stated_inputs(output)
    specs = list(declared_inputs(cid))
    inputs: list[dict[str, Any]] = []
    known: dict[str, Any] = {}
    units_bad = False
    if stated is not None:
        for name, value in stated.items():
            spec = next((s for s in specs if str(name).strip().lower() in (s.name.lower(), *(a.lower() for a in s.aliases))),
                        None)
            if spec is None:
                inputs.append({"input": name, "status": "extra", "certified": None, "stated": value})
            elif bad_unit(spec, value):
                units_bad = True
                inputs.append({"input": spec.name, "status": "bad_unit", "certified": reference.get(spec.name),
                               "stated": value})
            else:
                known[spec.name] = value
        if not known and not units_bad:
            state = "no_declared_input"
    if state == "ok":
        bad = {i["input"] for i in inputs if i["status"] == "bad_unit"}
        for group in _criteria(cid, specs):
            spec, label = group[0], " / ".join(s.name for s in group)
            if spec.accessor in UNGRADED or any(s.name in bad for s in group):
                continue  # not compared (see the module), or stated with an impossible unit: counted above
            refs = [lookup(reference, s) for s in group]
            certified_names = [s.name for s in group if s.name in reference or lookup(reference, s)[0]]
            if not certified_names or (not any(h for h, _ in refs) and spec.accessor != "flag"):
                continue  # nothing certified of it (a flag certified absent is null: compared as false)
            gots = [lookup(known, s) for s in group]
            present = any(h for h, _ in gots)
            if spec.accessor == "flag":
                ref: Any = any(Inputs({"v": v}).flag("v") for h, v in refs if h)
                got: Any = any(Inputs({"v": v}).flag("v") for h, v in gots if h)
            else:
                ref = next(v for h, v in refs if h)
                got = next((v for h, v in gots if h), None)
            inputs.append({"input": label, "status": input_matches(spec, ref, got, present), "certified": ref,
                           "stated": got if present else None})
    extraction_ok = state == "ok" and not units_bad and all(i["status"] in ("correct", "extra") for i in inputs)
    arithmetic, calc_value = (None, None)
    if state == "ok" and not units_bad and parsed is not None and not parsed.is_abstain:
        arithmetic, calc_value = _arithmetic(cid, known, parsed, otype)
    label_na = str(row["Ground Truth Answer"]).strip().upper() == "N/A"
    if status == "correct":
        cls = "right"
    elif status in ("unparsable", "missing"):
        cls = "format"
    elif label_na or status == "abstained":
        cls = "abstention"
    elif state != "ok":
        cls = "format"
    elif not extraction_ok:
        cls = "both" if arithmetic is False else "extraction"  # None: nothing computes from the stated inputs
    elif arithmetic is False:
        cls = "arithmetic"
    else:
        cls = "unjudged"
    counts = {s: sum(i["status"] == s for i in inputs) for s in INPUT_STATUSES}
    record = {"answer_status": status, "block": state, "bad_unit": units_bad, **{f"inputs_{k}": v for k, v in counts.items()},
              "arithmetic": arithmetic, "calculator_value": calc_value, "error_class": cls,
              "right_from_wrong_inputs": status == "correct" and state == "ok" and not extraction_ok}
    return record, inputs


def block_problems(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many outputs have each :data:`BLOCK_PROBLEMS` kind."""
    recs = list(records)
    return {"absent": sum(r["block"] == "absent" for r in recs), "not_json": sum(r["block"] == "not_json" for r in recs),
            "no_declared_input": sum(r["block"] == "no_declared_input" for r in recs),
            "bad_unit": sum(bool(r["bad_unit"]) for r in recs)}


# ---- a label set ----------------------------------------------------------------------------------

def share(k: int, n: int) -> float | None:
    """``k / n``, ``None`` when there is nothing to divide by."""
    return k / n if n else None


def grade_label_set(name: str, predictions: Mapping[int, str], labels: pd.DataFrame,
                    inputs: pd.DataFrame) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The step records of one label set (``labels``: its rows with ``uid``; ``inputs``: its config ``inputs``)."""
    rows_of_inputs = row_dicts(inputs)
    references = certified_by_row(rows_of_inputs)
    evidence = {int(r["uid"]): r.get("Evidence Status") for r in rows_of_inputs}
    rows: list[dict[str, Any]] = []
    inputs_out: list[dict[str, Any]] = []
    no_reference = 0
    for r in row_dicts(labels.sort_values("uid")):
        uid = int(r["uid"])
        if uid not in predictions:
            continue
        reference = references.get(uid)
        if not reference:
            no_reference += 1
            continue
        rec, ins = grade_steps(r, predictions[uid], reference)
        rows.append({"label_set": name, "uid": uid, "calculator_id": int(r["Calculator ID"]),
                     "calculator": str(r.get("Calculator Name") or ""), "evidence_status": evidence.get(uid), **rec})
        inputs_out += [{"label_set": name, "uid": uid, "calculator_id": int(r["Calculator ID"]), **i,
                        "certified": None if i["certified"] is None else str(i["certified"]),
                        "stated": None if i["stated"] is None else str(i["stated"])} for i in ins]
    return rows, inputs_out, summarize(rows, no_reference)


def summarize(rows: list[dict[str, Any]], no_reference: int = 0) -> dict[str, Any]:
    """A label set's numbers from its step records: the classes, accuracy with and without the right answers
    reached from wrong inputs, and each kind of unreadable block (``no_reference``: rows not step-graded)."""
    n = len(rows)
    classes = {c: sum(r["error_class"] == c for r in rows) for c in CLASSES}
    right = [r for r in rows if r["answer_status"] == "correct"]
    readable_right = [r for r in right if r["block"] == "ok"]
    from_wrong = sum(bool(r["right_from_wrong_inputs"]) for r in rows)
    return {"rows": n, "rows_without_certified_inputs": no_reference, "classes": classes,
            "accuracy": share(len(right), n),
            "accuracy_from_right_inputs": share(len(readable_right) - from_wrong, n),
            "right_from_wrong_inputs": from_wrong, "right_with_readable_inputs": len(readable_right),
            "share_right_from_wrong_inputs": share(from_wrong, len(readable_right)),
            "block_problems": block_problems(rows)}


__all__ = ["BLOCK_PROBLEMS", "CLASSES", "INPUT_RTOL", "INPUT_STATUSES", "block_problems", "canonical",
           "certified_by_row", "certified_reference", "grade_label_set", "grade_steps", "input_matches", "lookup",
           "share", "stated_inputs", "summarize"]
