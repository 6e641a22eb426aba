"""The card's documentation of every column of every config and of every value they hold,
generated from the release's tables: which configs carry a column, what it means, and its values
in this release with their counts.

Each column is one of

* **enumerated** (:data:`VALUES`): a declared value space, each value with its meaning; the card
  lists every declared value with its count (0 included), and a value the release holds that is not
  declared stops the build (:func:`check_values`), so the card never ships an undocumented value;
* **listed** (:data:`LISTED`): names and ids without a fixed set (releases, reviewers, definitions,
  files, dates); the card lists every value the release holds, with its count;
* **per calculator** (:data:`PER_CALCULATOR`): listed in the calculator table (id, name, category,
  output type, `Guideline Version`, rows per config);
* **free** (everything else): text, numbers, labels and JSON, described by their meaning.

A missing value is shown as ``(null)``, an empty text as ``(empty)``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.rows import UPSTREAM_COLUMNS
from medcalc_maintained.core.versions import rules
from medcalc_maintained.release.markdown import md_table
from medcalc_maintained.release.tables import INPUTS, Tables, is_missing

ROW_CONFIGS = ("default", "full", "original", "mini")
NULL, EMPTY = "(null)", "(empty)"

MEANINGS = {
    "Row Number": "the upstream row number; the stable id (`uid`) of the row within its split",
    "Calculator ID": "which of the 55 calculators the question asks for (the calculator table)",
    "Calculator Name": "the calculator's name (the calculator table)",
    "Category": "upstream's family of the calculator (which calculators each holds: the calculator table)",
    "Output Type": "the form of the answer; the grading rule follows it",
    "Note ID": "the note's source id (`pmc-…` for PubMed Central case reports)",
    "Note Type": "where the note comes from",
    "Patient Note": "the note the model reads",
    "Question": "the question the model answers",
    "Relevant Entities": "the upstream extracted features (a Python-literal dict), kept for reference",
    "Ground Truth Answer": "the label of this release, or `N/A` when the note cannot answer the question",
    "Lower Limit": "the lowest accepted answer: the label −5% for decimals, the label itself otherwise, `N/A` "
                   "for an `N/A` label",
    "Upper Limit": "the highest accepted answer: the label +5% for decimals, the label itself otherwise, `N/A` "
                   "for an `N/A` label",
    "Ground Truth Explanation": "how the label is derived: the upstream explanation where the label is upstream's; "
                                "for a changed row, the derivation by the project's reference calculator when it "
                                "reproduces the label, else empty; for an `N/A` row, why the note cannot answer. "
                                "`original` keeps every upstream explanation",
    "Explanation Source": "where `Ground Truth Explanation` comes from",
    "Label Status": "what the maintenance process did with the label",
    "uid": "`Row Number` as the integer key of the row within its split",
    "split": "the split of the row",
    "calculator_id": "`Calculator ID` as an integer key",
    "output_type": "`Output Type`, as the pipeline reads it",
    "instance_key": "the stable content id of the row (calculator, note and question; rows that share it get the "
                    "`Note ID` and then `#2`, `#3` appended), equal across upstream versions that renumber rows",
    "Original Ground Truth Answer": "the upstream v1.0 label",
    "Label Source": "who decided the label (the `source` of the row's last applied ledger record)",
    "Correction IDs": "the ledger record id(s) that set the label, `;`-separated (empty: none)",
    "Error Type": "why the upstream label was wrong (the error type of the row's last applied record)",
    "Guideline Version": "the definition (and version) of the calculator the label follows: the declared one of "
                         "`calculators/definitions.yaml`, or the published alternative a record names (values per "
                         "calculator in the calculator table)",
    "Change Severity": "clinical severity of the change from `Original Ground Truth Answer` to the label (bands "
                       "and citations in `calculators/thresholds.yaml`)",
    "Derivation Status": "how a verified label derives from its definition and inputs",
    "Derivation": "JSON: the definition, the inputs with their note evidence (character offsets and quoted text), "
                  "the value and why, from which the label is recomputed (verified rows). From 2.2.0 each input "
                  "also states its `source` (`search`, `hand`, `physician`, `upstream`) and the evidence verifier's "
                  "`verdict` (`supports`, `rule`, `reason`); inputs that change nothing are named under "
                  "`inert_inputs`; an `N/A` label has no `value` (what the definition computes from upstream's "
                  "entities is under `value_from_upstream_entities`)",
    "Evidence Status": "(from 2.3.0) what the note says of the inputs of a verified label: whether every input its "
                       "derivation uses is certified by a quote of the note (the label is derived from evidence), "
                       "one is contradicted, or one is not addressed (values below)",
    "Evidence": "(from 2.3.0) JSON `{status, inputs}`: for every input of a verified label (upstream's entity or the "
                "input its ledger record recorded; `source` `upstream`, `recorded`, or `default` for an input in "
                "neither) its `value` and `unit`, the `verdict` (`supports`, `contradicts`, `not_addressed`), the "
                "`quote` (`start`, `end`: character offsets into `Patient Note`, and `text`) that certifies it or "
                "states the note's other value (`note_value`), `convention: true` where the definition's convention "
                "for an unmentioned input decides it, and the evidence verifier's `rule` and `reason` "
                "(`calculators/certify.py`, `calculators/evidence.py`)",
    "Proposed Answer": "for an `unverified` row with an `error` finding of the project's checks: the value the "
                       "declared definition gives on the upstream entities patched by the inputs the findings read "
                       "from the note (empty when none can be made, and on every other row). A proposal, never "
                       "the label",
    "Proposal": "JSON on those rows: `derivation` (definition, inputs with evidence, value; `null` when none) and "
                "the `findings` behind it (check, severity, reason, evidence offsets); null on every other row",
    # corrections: one row per ledger record
    "id": "the record's stable id, never reused",
    "release": "the release that first carries the record",
    "old_value": "the label the record replaces",
    "new_value": "the decided label (`N/A` for an abstention)",
    "decision": "the review decision; only `accepted` records change a label",
    "label_status": "the row's `Label Status` after the record",
    "change_severity": "the clinical severity of `old_value` → `new_value` (as `Change Severity`)",
    "error_type": "why the replaced label was wrong (null for confirmations)",
    "source": "where the decision comes from (`Label Source` of the rows it sets)",
    "reviewer_id": "who decided", "reviewer_role": "the decider's role", "reviewer_specialty": "the decider's specialty",
    "proposed_by_id": "who proposed the record (when someone other than the reviewer did)",
    "proposed_by_role": "the proposer's role", "proposed_by_specialty": "the proposer's specialty",
    "blinded": "whether the reviewer decided without seeing the old label",
    "decided_at": "the decision date", "rationale": "why, in the reviewer's words",
    "evidence": "the note text or reference the decision rests on",
    "scoring_timepoint": "the time point the label is scored at, where the question leaves it open",
    "guideline_version": "the definition version the decided label assumes (`calculators/definitions.yaml`)",
    "second_opinion": "a disagreeing value kept for a second reviewer (deferred records)",
    "ledger_file": "the ledger file of the maintainers' repository that holds the record",
    "definition": "the definition the record's derivation assumes (null: the calculator's declared one)",
    "inputs": "JSON: the corrected inputs the label derives from, each with its note evidence",
    "override_reason": "why a physician's value stands that no derivation gives",
    "justification": "for an `N/A` label: why the note cannot answer",
    "adjudicated_value": "the adjudicated label a policy or inputs-corrected record replaces",
    "adjudicated_definition": "the definition that adjudicated value followed",
    "reconstruction": "how the derivation of the decided label was reconstructed after the decision "
                      "(`ledger/reconstruct.py`)",
}

_STATUS = {"confirmed": "an accepted record checked the upstream label and kept it",
           "corrected": "an accepted record replaced the upstream label with another value",
           "abstain": "the label is `N/A`: the note cannot answer the question"}
_SOURCE = {"pipeline": "the audit's independent LLM recomputation (five runs, kept at a four-of-five supermajority)",
           "physician": "a physician reviewer, blind to the upstream label",
           "policy": "a policy record (`ledger/harmonize.py`): decided under the declared definition, a confirmed "
                     "label restored to upstream's text, or an unevidenced harmonization reverted",
           "contributor": "a record written by a maintainer or contributor from a reading of the note "
                          "(`data/corrections/`), checked by `apply` and the evidence verifier"}
_ERROR = {"extraction": "a feature was read wrongly from the note",
          "aggregation": "the calculator logic was wrong",
          "unanswerable": "the note cannot answer the question",
          "underspecified": "the scoring time point or guideline is not fixed by the question",
          "other": "another error, stated in the record's rationale"}
_SEVERITY = {"L0": "unchanged, or within the tolerance in the same decision band",
             "L1": "another value in the same decision band",
             "L2": "crosses a decision band",
             "L3": "changes treatment or disposition (or an `N/A` replaces a value that would drive one)"}
_RECONSTRUCTION = {"reproduced": "the declared definition reproduces the label from the upstream entities",
                   "inputs-reconstructed": "inputs read from the note reproduce it",
                   "inputs-corrected": "no evidenced reading reproduced the adjudicated label, so the label is the "
                                       "declared definition's value from the note's evidenced inputs",
                   "definition-contradiction": "the label follows another definition than the declared one",
                   "na-justified": "an `N/A` with a justification",
                   "unexplained": "no reconstruction explains the label",
                   NULL: "the record states none (records written after the campaign)"}

# column -> {value: meaning}: the declared value space of each enumerated column
VALUES: dict[str, dict[str, str]] = {
    "Output Type": {"decimal": "a number, correct inside [`Lower Limit`, `Upper Limit`] (±5%)",
                    "integer": "a whole number, correct when the rounded answer equals the label (gestational age "
                               "`('W weeks', 'D days')`: the same weeks and days)",
                    "date": "a date `MM/DD/YYYY`, correct on the same day"},
    "Note Type": {"Extracted": "from a PubMed Central case report",
                  "Template": "written by the upstream authors from a template"},
    "Label Status": {**_STATUS, "unverified": "no accepted record yet: the upstream label as published (in `full` "
                                              "only, unless the release's `default` holds every row)",
                     "disputed": "a reading of the note contradicts the label and nothing certifies it: the label "
                                 "is kept as it was, in `full` only, with the contradicting value and the reason in "
                                 "its `Derivation`, until a record decides it"},
    "Explanation Source": {"upstream": "the upstream explanation (the label is upstream's)",
                           "reference-calculator": "a derivation by the project's reference calculator that "
                                                   "reproduces the changed label",
                           "ledger": "why the label is `N/A`, from its ledger record",
                           "none": "no explanation derives the changed label (empty)"},
    "Label Source": {"upstream": "no accepted record: the upstream v1.0 label", **_SOURCE},
    "Error Type": {**_ERROR, EMPTY: "the label is upstream's (`confirmed` or `unverified`)"},
    "Change Severity": _SEVERITY,
    "Derivation Status": {"reproduced": "the declared definition gives the label from the upstream entities",
                          "inputs-recorded": "it gives the label from the upstream entities patched by recorded "
                                             "inputs, each quoting the note (verifier-accepted from 2.2.0)",
                          "alternative": "a published alternative definition gives the label",
                          "na-justified": "an `N/A` label with the reason the note cannot answer",
                          "override": "a physician's value that no derivation gives, with its reason",
                          "unexplained": "no recorded derivation gives the label (kept, listed, routed by triage)",
                          "disputed": "a `disputed` row: the label and the value a reading of the note gives instead",
                          NULL: "an `unverified` row"},
    "Evidence Status": {"certified": "every input the label's derivation uses is supported by a quote of the note "
                                     "the evidence verifier certifies, or absent by the definition's convention for "
                                     "an unmentioned input: the label is derived from evidence",
                        "contradicted": "the note states another value of an input at the time the definition asks "
                                        "for (`Evidence` names it and quotes it); triage routes the row to review",
                        "not_addressed": "no input is contradicted, but the verifier certifies no quote for one of "
                                         "them (`Evidence` gives its rule)",
                        NULL: "an `unverified` row"},
    "decision": {"accepted": "applied to the label", "rejected": "reviewed and not applied",
                 "deferred": "waiting for another review; not applied",
                 "disputed": "a reading of the note gives `new_value`, which contradicts the label `old_value`: "
                             "the label stays, the row leaves `default` as `disputed`"},
    "label_status": _STATUS,
    "change_severity": _SEVERITY,
    "error_type": {**_ERROR, NULL: "a confirmation: the label stays"},
    "source": _SOURCE,
    "blinded": {"true": "decided without seeing the old label", "false": "the reviewer saw the old label"},
    "reconstruction": _RECONSTRUCTION,
}
VALUES["output_type"] = VALUES["Output Type"]
# (column, value) -> the rule (core/versions.py: ReleaseRules) from whose release on the card names the value; a
# release before it names it only where its rows hold it (so that an earlier release's card stays as it was published)
SINCE = {("Label Status", "disputed"): "disputed", ("Derivation Status", "disputed"): "disputed",
         ("decision", "disputed"): "disputed"}
LISTED = ("Category", "split", "release", "reviewer_id", "reviewer_role", "reviewer_specialty", "proposed_by_id",
          "proposed_by_role", "proposed_by_specialty", "decided_at", "guideline_version", "ledger_file",
          "definition", "adjudicated_definition")
PER_CALCULATOR = ("Calculator ID", "Calculator Name", "calculator_id", "Guideline Version")


def value_text(v: Any) -> str:
    """How the card names one cell value."""
    if is_missing(v):
        return NULL
    if isinstance(v, bool):
        return "true" if v else "false"
    return EMPTY if str(v) == "" else str(v)


def _counts(series: pd.Series) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in series.tolist():
        k = value_text(v)
        out[k] = out.get(k, 0) + 1
    return out


# config ``inputs`` (release/inputs_config.py): the input's fields; the row's are the row configs' (MEANINGS)
INPUT_MEANINGS = {
    "name": "the input, as the calculator declares it (calculators/definitions.yaml)",
    "value": "the value the label's derivation uses, as JSON text (a number, text, or true/false); null where it "
             "has none: an input neither upstream's extraction nor the record gives, or a measurement the note does "
             "not print, which the definition reads as absent (`reason` says which)",
    "unit": "the value's unit (empty for a count, a score criterion or a category)",
    "source": "where the value comes from",
    "verdict": "what the note says of the value",
    "convention": "true when the verdict rests on the definition's convention for an input the note does not "
                  "mention (no quote)",
    "used": "false for an input an `N/A` label's derivation does not use (it decides nothing)",
    "quote_in": "what the quote's offsets index",
    "quote_start": "the quote's first character in the `Patient Note` (or `Question`: `quote_in`), from 0",
    "quote_end": "one past the quote's last character: `Patient Note[quote_start:quote_end]` is `quote_text`",
    "quote_text": "the quote: for `supports`, the text that states the value; for `contradicts`, the text that "
                  "states `note_value` (none where the definition's convention decides: `convention`)",
    "note_value": "for `contradicts`, the note's other value, as JSON text",
    "rule": "the evidence verifier's rule that decided the verdict",
    "reason": "the verifier's reason, in words",
    "declared": "what a recorded input declares of its reading (`timepoint`, `unit_reading`), as JSON text",
    "Evidence Status": "the row's verdict over its inputs (as in `full`)",
}
INPUT_VALUES = {
    "source": {"upstream": "upstream's GPT-4 extraction (`Relevant Entities`)",
               "recorded": "the input the row's ledger record recorded (a reviewer's reading, with its quote)",
               "default": "not in the extraction: the definition's value for an input the note does not mention"},
    "verdict": {"supports": "a quote the evidence verifier accepts states the value (or the note's silence, by the "
                            "definition's convention: `convention`)",
                "contradicts": "the note states another value (`note_value`, with its quote), or never states a "
                               "criterion the derivation counts present (absent by the definition's convention: "
                               "`convention`, no quote)",
                "not_addressed": "no quote the verifier accepts states the value or another one"},
    "quote_in": {"note": "the `Patient Note`", "question": "the `Question` (the steroid conversion's target steroid)",
                 NULL: "no quote"},
}


def inputs_table(t: Tables) -> str:
    """Every column of config ``inputs``: its meaning and its values in this release."""
    frame = t.combined(INPUTS)
    rows = []
    for col in t.tables[INPUTS][t.splits[0]].columns:
        counts = _counts(frame[col]) if col in INPUT_VALUES or col in ("convention", "used") else {}
        if col in INPUT_VALUES:
            values = "; ".join(f"{_shown(v)} ({counts.get(v, 0):,}): {m}" for v, m in INPUT_VALUES[col].items())
        elif counts:
            values = ", ".join(f"{_shown(v)} ({n:,})" for v, n in sorted(counts.items()))
        else:
            values = ""
        rows.append([f"`{col}`", INPUT_MEANINGS.get(col) or MEANINGS.get(col, ""), values])
    return md_table(["field", "meaning", "values in this release (inputs)"], rows)


def inputs_summary(inputs: pd.DataFrame) -> str:
    """Config ``inputs`` in one clause: its inputs and rows, by verdict and by source."""
    rows = len(set(zip(inputs["split"].astype(str), inputs["uid"].astype(int))))
    verdicts = inputs["verdict"].astype(str).value_counts()
    sources = inputs["source"].astype(str).value_counts()
    quoted = int(inputs["quote_text"].notna().sum())
    return (f"{len(inputs):,} inputs of {rows:,} rows: {int(verdicts.get('supports', 0)):,} supported, "
            f"{int(verdicts.get('contradicts', 0)):,} contradicted by the note, {int(verdicts.get('not_addressed', 0)):,} "
            f"not addressed; {quoted:,} with a quote; {int(sources.get('upstream', 0)):,} values from upstream's "
            f"extraction, {int(sources.get('recorded', 0)):,} recorded by a reviewer, {int(sources.get('default', 0)):,} "
            "absent from both (the definition's value for an unmentioned input)")


def _shown(value: str) -> str:
    return value if value in (NULL, EMPTY) else f"`{value}`"


def check_values(t: Tables) -> None:
    """Refuse a release that holds a value of an enumerated column the card does not document."""
    for c in t.configs:
        frame = t.combined(c)
        for col, declared in (INPUT_VALUES if c == INPUTS else VALUES).items():
            if col in frame.columns:
                unknown = sorted(set(_counts(frame[col])) - set(declared))
                if unknown:
                    raise DataError(f"release {t.release.version}", f"config {c!r}, column {col!r} holds "
                                    f"{unknown[:5]}, which the card does not document (add each to VALUES in "
                                    "release/fields.py)", field=col)


def values_cell(col: str, frame: pd.DataFrame, version: str) -> str:
    counts = _counts(frame[col])
    if col in VALUES:
        return "; ".join(f"{_shown(v)} ({counts.get(v, 0):,}): {m}" for v, m in VALUES[col].items()
                         if counts.get(v) or (col, v) not in SINCE or getattr(rules(version), SINCE[(col, v)]))
    if col in LISTED:
        return ", ".join(f"{_shown(v)} ({n:,})" for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    if col in PER_CALCULATOR:
        return "per calculator: the calculator table"
    return ""


def fields_table(t: Tables) -> str:
    """Every column of the row configs: which configs carry it, its meaning and its values."""
    cols: dict[str, list[str]] = {}
    for c in ROW_CONFIGS:
        for col in t.tables[c][t.splits[0]].columns:
            cols.setdefault(col, []).append(c)
    full = t.combined("full")
    rows = []
    for col, configs in cols.items():
        frame = full if col in full.columns else t.combined(configs[0])
        rows.append([f"`{col}`", ", ".join(configs), MEANINGS.get(col, ""), values_cell(col, frame, t.release.version)])
    return md_table(["field", "configs", "meaning", "values in this release (rows of `full`)"], rows)


def corrections_table(t: Tables) -> str:
    records = t.tables["corrections"][t.splits[0]].columns
    frame = t.combined("corrections")
    rows = [[f"`{col}`", MEANINGS.get(col, ""), values_cell(col, frame, t.release.version)] for col in records]
    return md_table(["field", "meaning", "values in this release (records)"], rows)


def calculators_table(t: Tables) -> str:
    """One row per calculator: id, name, category, output type, its `Guideline Version` values and rows."""
    full = t.combined("full")
    by = {c: t.combined(c)["Calculator ID"].astype(int).value_counts() for c in ("default", "mini")}
    rows = []
    for cid, part in sorted(full.groupby(full["Calculator ID"].astype(int)), key=lambda kv: kv[0]):
        versions = _counts(part["Guideline Version"]) if "Guideline Version" in part.columns else {}
        rows.append([cid, part["Calculator Name"].iloc[0], part["Category"].iloc[0], part["Output Type"].iloc[0],
                     ", ".join(f"{_shown(v)} ({n})" for v, n in sorted(versions.items())),
                     len(part), int(by["default"].get(cid, 0)), int(by["mini"].get(cid, 0))])
    return md_table(["Calculator ID", "Calculator Name", "Category", "Output Type", "Guideline Version (rows)",
                     "full", "default", "mini"], rows, ["r", "l", "l", "l", "l", "r", "r", "r"])


def columns_text(t: Tables, config: str) -> str:
    """A config's columns: the upstream columns it has and the others, by name."""
    cols = list(t.tables[config][t.splits[0]].columns)
    if config == INPUTS:
        return f"{len(cols)} columns: the row and one of its inputs (below)"
    upstream = [c for c in cols if c in UPSTREAM_COLUMNS]
    extra = [c for c in cols if c not in UPSTREAM_COLUMNS]
    if len(upstream) < len(UPSTREAM_COLUMNS):
        return f"{len(cols)} columns: the record's fields (below)"
    head = f"{len(cols)} columns: the {len(upstream)} upstream columns"
    if not extra:
        return head
    if len(extra) <= 3:
        return head + " + " + ", ".join(f"`{c}`" for c in extra)
    return head + f" + {len(extra)} more (below)"


def card_fields(t: Tables) -> dict[str, str]:
    """The card's placeholders of the columns and their values (checked first: :func:`check_values`)."""
    check_values(t)
    return {"fields_table": fields_table(t), "corrections_fields_table": corrections_table(t),
            "calculators_table": calculators_table(t),
            **({"inputs_fields_table": inputs_table(t)} if INPUTS in t.configs else {}),
            **{f"{c}_columns": columns_text(t, c) for c in t.configs}}
