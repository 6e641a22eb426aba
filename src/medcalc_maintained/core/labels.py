"""Label status: what a maintained label says about itself, and how labels of a row are written.

``Label Status`` of a maintained row is one of

* ``corrected``  an accepted record replaced the upstream label with another value;
* ``abstain``    the label is ``N/A``: the note cannot answer the question;
* ``confirmed``  an accepted record checked the upstream label and kept it;
* ``unverified`` no accepted record yet: the upstream label as published;
* ``disputed``   a ``disputed`` record says a reading of the note contradicts the label and nothing
  certifies it: the label is kept as it was (in ``full``, with the contradicting value and the reason
  in its ``Derivation``), and the row leaves ``default`` until a record decides it (the uncertain tier
  that HLE-Verified and MMLU-Redux publish).

A record's status follows from its values (:func:`status_of`); the ledger checks that it does.
"""

from __future__ import annotations

from typing import Any

from medcalc_maintained.core.answers import Answer, format_answer, labels_agree, parse_answer

RECORD_STATUSES = ("corrected", "abstain", "confirmed")
UNVERIFIED = "unverified"
DISPUTED = "disputed"
NOT_IN_DEFAULT = (UNVERIFIED, DISPUTED)  # the statuses a `default_rows: verified` release leaves out
DISPUTED_DECISION = "disputed"  # the ledger decision that marks a row disputed (its label unchanged)
ERROR_STATUSES = ("corrected", "abstain")  # statuses that mean the upstream label was wrong
GESTATIONAL_AGE = "gestational_age"

# the maintained columns added to v1.0's columns by `apply`
MAINTAINED_COLUMNS = ["Label Status", "Original Ground Truth Answer", "Label Source", "Correction IDs", "Error Type",
                      "Guideline Version", "Change Severity"]


def in_default(status: Any) -> bool:
    """Whether a row of ``Label Status`` ``status`` belongs to a ``default_rows: verified`` release's ``default``."""
    return str(status) not in NOT_IN_DEFAULT


def status_of(new: Answer | Any, old: Any, output_type: str) -> str:
    """``abstain`` when ``new`` is N/A, ``confirmed`` when it agrees with ``old`` (±5% band for
    decimals, exactly otherwise), else ``corrected``."""
    answer = new if isinstance(new, Answer) else parse_answer(new, output_type)
    if answer.is_abstain:
        return "abstain"
    return "confirmed" if labels_agree(answer, old, output_type) else "corrected"


def label_style(original: Any, output_type: str) -> str | None:
    """How labels of a row are written: gestational age keeps v1.0's ``('W weeks', 'D days')``
    when the row's original label is written that way; otherwise the output type's own form."""
    return GESTATIONAL_AGE if parse_answer(original, output_type).kind == GESTATIONAL_AGE else None


def row_style(row: Any) -> str | None:
    """:func:`label_style` of a maintained or upstream row (a mapping with the v1.0 columns)."""
    original = row.get("Original Ground Truth Answer", row.get("Ground Truth Answer"))
    return label_style(original, row["Output Type"])


def write_label(value: Any, output_type: str, original: Any) -> str:
    """``value`` written as a label of a row whose upstream label is ``original``."""
    return format_answer(value, output_type, label_style(original, output_type))


def fit_problem(answer: Answer, output_type: str, style: str | None = None) -> str | None:
    """Why ``answer`` does not fit a label of ``output_type`` written in ``style`` (``None`` when
    it fits): the one rule of "is this a label of this row". ``N/A`` always fits; the
    gestational-age style (:func:`label_style`) needs weeks and days; a date needs a date; an
    integer a whole number; a decimal any number but weeks and days."""
    if answer.kind == "invalid":
        if output_type != "date" and parse_answer(answer.text, "date").kind == "date":
            return f"a date is not {'an' if output_type == 'integer' else 'a'} {output_type} answer"
        return answer.reason
    if answer.is_abstain:
        return None
    if style == GESTATIONAL_AGE:
        return None if answer.kind == GESTATIONAL_AGE else "write weeks and days, as W weeks D days"
    if output_type == "date":
        return None if answer.kind == "date" else "expected MM/DD/YYYY"
    if answer.kind == GESTATIONAL_AGE:
        return "weeks and days are not a number"
    if output_type == "integer" and answer.kind != "integer":
        return "not a whole number"
    return None
