"""``core/out_dirs.py: new_run_dir``: the default ``--out`` of ``evaluate`` and ``regrade``."""

from __future__ import annotations

import datetime as dt
import re

from medcalc_maintained.core.out_dirs import new_run_dir


def test_a_new_run_dir_is_named_by_the_utc_time_and_never_one_that_exists(tmp_path):
    now = dt.datetime.now(dt.timezone.utc)
    # the names of the next ten seconds are taken, and so are their first -2 siblings
    stamps = {(now + dt.timedelta(seconds=k)).strftime("%Y%m%d-%H%M%S") for k in range(10)}
    for stamp in stamps:
        (tmp_path / stamp).mkdir()
        (tmp_path / f"{stamp}-2").mkdir()
    out = new_run_dir(tmp_path)
    assert out.parent == tmp_path and not out.exists()
    assert re.fullmatch(r"\d{8}-\d{6}-3", out.name) and out.name[:-2] in stamps, out.name
    assert not new_run_dir(tmp_path / "missing").exists()  # a parent that does not exist yet is fine
