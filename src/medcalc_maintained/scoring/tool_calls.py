"""Grade agents' tool-call traces: the answer, the calculator chosen and the inputs passed.

Traces file: JSON Lines, one object per row ``{"uid": int, "calls": [{"tool": str, "arguments":
{...}}, ...], "answer": str}`` (the calls in order, then the final answer; the tools are those of
``medcalc-maintained serve-mcp``). Per traced row:

* **answer**: graded like ``evaluate`` (:func:`medcalc_maintained.grading.grade.grade_output`,
  the package's one extraction rule and MedCalc-Bench's grading of :mod:`core.answers`);
* **selection**: the *last* calculator call (``list_calculators`` and ``lookup_instance`` are
  not selections) names the row's calculator; no calculator call is a wrong selection;
* **inputs** (only when the selection is right): every input of the row's reference is compared
  with the argument of that call (:func:`medcalc_maintained.grading.steps.input_matches`: quantities in
  canonical units within ``INPUT_RTOL``, numbers the same, criteria the same boolean (an omitted
  criterion is absent), categorical values and dates the same text). The reference is the row's
  *certified* inputs where the release has them (config ``inputs``, from 2.4.0: the inputs its
  derivation uses that a quote of the note supports, :func:`~medcalc_maintained.grading.steps.
  certified_reference`), else upstream's ``Relevant Entities`` (GPT-4's extraction of v1.0); each
  row says which (``input_reference``: ``certified`` or ``upstream``; the MME's rows are graded against
  upstream's per-drug entities, which its tool's arguments are built into);
* **tool output**: the answer equals the value the tool returns for that call (recomputed here
  with the same code), at the precision the answer is written in; the summary names that
  implementation and its conformance vectors passed (``tools_implementation``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Mapping

import pandas as pd

from medcalc_maintained.calculators.inputs import InputSpec, declared_inputs
from medcalc_maintained.core.answers import graded_answer, parse_model_answer, same_value
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import read_jsonl
from medcalc_maintained.core.rows import parse_entities
from medcalc_maintained.grading.grade import grade_output
from medcalc_maintained.grading.steps import input_matches
from medcalc_maintained.grading.steps import lookup as _lookup
from medcalc_maintained.tools import calculator_tools as T

ROW_COLUMNS = ("uid", "calculator_id", "Relevant Entities", "Ground Truth Answer", "Lower Limit",
               "Upper Limit", "Output Type")


def read_traces(path: os.PathLike | str) -> list[dict[str, Any]]:
    """The traces of a JSONL file; a :class:`DataError` names file, line and rule."""
    out: list[dict[str, Any]] = []
    seen: dict[int, int] = {}
    for n, rec in read_jsonl(path, "traces", '{"uid": int, "calls": [...], "answer": str}'):
        where = f"{path}, line {n}"
        if not {"uid", "calls", "answer"} <= set(rec):
            raise DataError(where, 'each line must be {"uid": int, "calls": [...], "answer": str}')
        if isinstance(rec["uid"], bool) or not isinstance(rec["uid"], int):
            raise DataError(where, f"uid must be a JSON integer, got {rec['uid']!r}", field="uid")
        if rec["uid"] in seen:
            raise DataError(where, f"uid {rec['uid']} repeats line {seen[rec['uid']]}", field="uid")
        if not isinstance(rec["calls"], list):
            raise DataError(where, "calls must be a list", field="calls")
        for i, call in enumerate(rec["calls"]):
            if not isinstance(call, dict) or not isinstance(call.get("tool"), str) \
                    or not isinstance(call.get("arguments", {}), dict):
                raise DataError(where, f'call {i} must be {{"tool": str, "arguments": object}}', field="calls")
        seen[rec["uid"]] = n
        out.append(rec)
    if not out:
        raise DataError(path, "no traces in the file")
    return out


def _opioid_specs(entities: dict[str, Any]) -> list[InputSpec]:
    return [InputSpec(str(k), "quantity", "per_day" if str(k).lower().endswith("per day") else "drug_mass")
            for k in entities]


def grade_inputs(calculator_id: int, reference: dict[str, Any], arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per reference input of the row: input name and status."""
    given = arguments
    specs = list(declared_inputs(calculator_id))
    if calculator_id == 49:  # MME: compare the per-drug entities the tool builds from the arguments
        try:
            given = T.arguments_to_entities(49, arguments)
        except T.ToolInputError:
            given = {}
        specs = _opioid_specs(reference)
    out = []
    for spec in specs:
        has_ref, ref = _lookup(reference, spec)
        if not has_ref:
            continue
        present, got = _lookup(given, spec)
        out.append({"input": spec.name, "status": input_matches(spec, ref, got, present)})
    return out


def equals_tool_output(answer: str, tool_value: str | None, output_type: str) -> bool:
    """Whether the answer is the tool's value, at the precision the answer is written in."""
    parsed = parse_model_answer(graded_answer(answer), output_type)
    if tool_value is None or parsed is None or not parsed.is_valid:
        return False
    tool = parse_model_answer(tool_value, output_type)
    if parsed.kind in ("decimal", "integer") and tool is not None and tool.kind in ("decimal", "integer"):
        text = parsed.text.strip()
        decimals = len(text.split(".")[-1]) if "." in text else 0
        return abs(round(tool.number, decimals) - parsed.number) < 1e-9
    return same_value(parsed.text, tool_value, output_type)


def _last_selection(calls: list[dict[str, Any]]) -> tuple[int | None, dict[str, Any]]:
    for call in reversed(calls):
        cid = T.calculator_for_tool(call["tool"])
        if cid is not None:
            return cid, call.get("arguments") or {}
    return None, {}


def _tool_value(cid: int | None, arguments: dict[str, Any]) -> str | None:
    if cid is None:
        return None
    try:
        return T.call_calculator(cid, arguments)["value"]
    except T.ToolInputError:
        return None


@dataclass
class ToolCallReport:
    rows: pd.DataFrame
    inputs: pd.DataFrame

    def summary(self) -> dict[str, Any]:
        r, i = self.rows, self.inputs
        with_output = r[r["tool_value"].notna()]
        return {
            "n_traces": int(len(r)),
            "answer_accuracy": float((r["answer_status"] == "correct").mean()),
            "selection_accuracy": float(r["selection_correct"].mean()),
            "input_accuracy": float((i["status"] == "correct").mean()) if len(i) else None,
            "n_inputs_graded": int(len(i)),
            "answer_equals_tool_output": float(with_output["equals_tool_output"].mean()) if len(with_output) else None,
            "n_with_tool_output": int(len(with_output)),
            "input_reference": self.reference_text(),
            "tools_implementation": self.implementation_text(),
        }

    def implementation_text(self) -> str:
        """The implementation whose value ``equals_tool_output`` recomputes, with its conformance over
        the calculators the traces selected."""
        from medcalc_maintained.tools import calculator_tools as T

        cids = sorted({int(c) for c in self.rows.get("selected", pd.Series(dtype=object)).dropna()}) \
            if len(self.rows) else []
        if not cids:
            return "no calculator selected"
        cs = [T.conformance(c) for c in cids]
        return (f"{cs[0]['implementation']}: {sum(c['passed'] for c in cs)}/{sum(c['vectors'] for c in cs)} "
                f"conformance vectors pass over the {len(cids)} calculator(s) selected "
                f"(vectors sha256 {cs[0]['vectors_sha256'][:12]})")

    def reference_text(self) -> str:
        """Which reference the inputs were graded against, in words (rows by reference)."""
        n: dict[Any, int] = dict(self.rows["input_reference"].value_counts()) if len(self.rows) else {}
        cert, up = int(n.get("certified", 0)), int(n.get("upstream", 0))
        parts = ([f"certified inputs of the release (config `inputs`) for {cert} row(s)"] if cert else []) + \
                ([f"upstream Relevant Entities (v1.0 GPT-4 extraction) for {up} row(s) without certified inputs"]
                 if up else [])
        return "; ".join(parts) or "none"

    def per_input(self) -> pd.DataFrame:
        if self.inputs.empty:
            return pd.DataFrame(columns=["calculator_id", "input", "n", "correct", "accuracy"])
        g = self.inputs.assign(ok=self.inputs["status"] == "correct").groupby(["calculator_id", "input"])["ok"]
        out = g.agg(n="size", correct="sum").reset_index()
        return out.assign(accuracy=out["correct"] / out["n"])

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary(), "per_input": json.loads(self.per_input().to_json(orient="records")),
                "rows": json.loads(self.rows.to_json(orient="records"))}

    def summary_lines(self) -> list[str]:
        s = self.summary()
        pct = lambda v: "n/a" if v is None else f"{100 * v:.1f}%"  # noqa: E731
        return [f"traces: {s['n_traces']}",
                f"answer accuracy: {pct(s['answer_accuracy'])}",
                f"calculator selection accuracy: {pct(s['selection_accuracy'])}",
                f"input accuracy: {pct(s['input_accuracy'])} of {s['n_inputs_graded']} inputs "
                f"(reference: {s['input_reference']})",
                f"answers equal to the tool's output: {pct(s['answer_equals_tool_output'])} of {s['n_with_tool_output']}",
                f"tools: {s['tools_implementation']}"]


def grade(traces: list[dict[str, Any]], rows: pd.DataFrame,
          certified: Mapping[int, dict[str, Any]] | None = None) -> ToolCallReport:
    """Grade ``traces`` against release rows (a ``full`` config of one split); ``certified``: the rows'
    certified inputs by uid (:func:`certified_inputs`), the inputs' reference where a row has any."""
    missing = [c for c in ROW_COLUMNS if c not in rows.columns]
    if missing:
        raise DataError("label rows", f"missing column(s) {missing}")
    by_uid = {int(r["uid"]): r for r in rows.to_dict("records")}
    out_rows, out_inputs = [], []
    for t in traces:
        row = by_uid.get(t["uid"])
        if row is None:
            raise DataError("traces", f"uid {t['uid']} is not a row of the release", row=f"uid {t['uid']}")
        cid, args = _last_selection(t["calls"])
        target, otype = int(row["calculator_id"]), str(row["Output Type"])
        tool_value = _tool_value(cid, args)
        answer = str(t["answer"])
        # the MME's tool takes per-drug doses, which upstream's entities hold; its certified input is one list
        reference = None if target == 49 else (certified or {}).get(int(t["uid"])) or None
        out_rows.append({
            "uid": t["uid"], "calculator_id": target, "selected": cid, "selection_correct": cid == target,
            "answer_status": grade_output(answer, str(row["Ground Truth Answer"]), str(row["Lower Limit"]),
                                          str(row["Upper Limit"]), otype),
            "tool_value": tool_value, "equals_tool_output": equals_tool_output(answer, tool_value, otype),
            "input_reference": "certified" if reference else "upstream"})
        if cid == target:
            ref = reference if reference else parse_entities(str(row["Relevant Entities"]))
            for rec in grade_inputs(target, ref, args):
                out_inputs.append({"uid": t["uid"], "calculator_id": target, **rec})
    return ToolCallReport(pd.DataFrame(out_rows), pd.DataFrame(out_inputs, columns=["uid", "calculator_id", "input", "status"]))


def certified_inputs(inputs: pd.DataFrame | None) -> dict[int, dict[str, Any]]:
    """The certified inputs of every row of a release's config ``inputs`` (one split), by uid."""
    from medcalc_maintained.core.rows import row_dicts
    from medcalc_maintained.grading.steps import certified_by_row

    return {} if inputs is None or inputs.empty else certified_by_row(row_dicts(inputs))


def grade_file(path: os.PathLike | str, rows: pd.DataFrame, inputs: pd.DataFrame | None = None) -> ToolCallReport:
    """:func:`grade` of a traces file; ``inputs``: the release's config ``inputs`` of the same split, if it has one."""
    return grade(read_traces(path), rows, certified_inputs(inputs))
