"""Hostile inputs are bounded and refused in one line naming file and place (issue 27): JSON nested
thousands deep, `--out` targets over the hand-written ledger or data/, "None" as an answer, control
characters in the ledger, and a full disk. Refusals run through the real CLI in a new process,
measured for CPU time and peak memory (see test_review_bounded.run_cli)."""

from __future__ import annotations

import json

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.json_text import json_depth, loads_json

DEEP = "[" * 2000 + "]" * 2000  # 8 KB of nesting


# -- 2. JSON nesting depth ---------------------------------------------------------------------

def test_json_depth_counts_brackets_outside_strings():
    assert json_depth('{"a": [1, {"b": "[[[{"}], "c": "\\"]]"}') == 3
    assert json_depth("[]") == 1 and json_depth('"x"') == 0 and json_depth(DEEP, 64) == 65
    assert loads_json("[" * 64 + "]" * 64, "x") == json.loads("[" * 64 + "]" * 64)
    with pytest.raises(DataError, match=r"^f, line 3: JSON nested more than 64 levels deep"):
        loads_json("[" * 65 + "]" * 65, "f, line 3")
