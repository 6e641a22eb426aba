"""Where the project, the pulled upstream data and ../shared are (importable by any test)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
SHARED = Path(os.environ.get("MEDCALC_SHARED", ROOT.parent / "shared")).resolve()
