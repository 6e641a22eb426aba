"""A urea printed in mg/dL states the blood urea nitrogen only through the molecule's nitrogen share (issue 45): urea
18 mg/dL is BUN 8.4 mg/dL (x 28.01/60.06), never BUN 18; a BUN printed in mg/dL is never converted that way."""

from __future__ import annotations

import pytest

from tests.support.evidence_support import judge

BUN = "Blood Urea Nitrogen (BUN)"


@pytest.mark.parametrize("sentence,value,unit,ok", [
    ("Laboratory tests showed sodium 138 mmol/L, glucose 110 mg/dL and blood urea 18 mg/dL (15-45).", 8.4, "mg/dL", True),
    ("Laboratory tests showed sodium 138 mmol/L, glucose 110 mg/dL and blood urea 18 mg/dL (15-45).", 18, "mg/dL", False),
    ("His serum urea was 84 mg/dL.", 39.2, "mg/dL", True),
    ("His serum urea was 84 mg/dL.", 39, "mg/dL", True),     # to the precision the record gives
    ("His serum urea was 84 mg/dL.", 42, "mg/dL", False),    # not another number near it
    ("His serum urea was 84 mg/dL.", 84, "mg/dL", False),
    # a urea in mmol/L is the BUN in mmol/L (one pair of nitrogen atoms per molecule), as before
    ("His serum urea was 11.4 mmol/L.", 11.4, "mmol/L", True),
    # a BUN printed in mg/dL is the BUN: never read as a urea to be converted
    ("Blood urea nitrogen was 18 mg/dL.", 8.4, "mg/dL", False),
    ("Blood urea nitrogen was 18 mg/dL.", 18, "mg/dL", True),
    # the urine's urea is no blood value at all
    ("Urine urea was 18 mg/dL.", 8.4, "mg/dL", False),
])
def test_a_urea_in_mg_per_dl_states_the_bun_through_its_nitrogen_share(sentence, value, unit, ok):
    note = f"A 60-year-old man was admitted with vomiting. {sentence} He was treated with fluids."
    v = judge(30, note, sentence, BUN, value, unit)
    assert v.supports is ok, v.reason
