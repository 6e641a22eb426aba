"""Ledger writes: one writer at a time (the directory lock), only ``*.yaml``/``*.yml`` directly in the
hand-written ledger directory, never the generated campaign ledger, comments kept on append, and
strict YAML (aliases, duplicate keys, impossible dates, size) refused naming file and line.

The end-to-end tests of this subject; the fast ones are in tests/ledger/test_ledger_writes.py."""

from __future__ import annotations

import fcntl
import os
import threading
import time

from medcalc_maintained import ledger
from medcalc_maintained.ledger.write import ledger_lock
from tests.ledger import test_ledger_writes as fast_tests
from tests.ledger.test_ledger_writes import PROPOSE, invoke

# shared with the fast tests
root = fast_tests.root


# holds the lock 3 s of wall clock
def test_a_second_writer_waits_for_the_lock(root):
    corrections = root / "data" / "corrections"
    done = {}
    with ledger_lock(corrections):
        worker = threading.Thread(target=lambda: done.update(r=invoke(root, *PROPOSE)))
        worker.start()
        time.sleep(3)
        assert worker.is_alive() and list(corrections.iterdir()) == []  # waiting, nothing written
    worker.join(120)
    assert done["r"].exit_code == 0, done["r"].output
    assert [r["uid"] for r in ledger.load([corrections])] == [41]
    # the lock is the directory's own: no lock file is left in the ledger
    assert [p.name for p in corrections.iterdir()] == ["2026-03-proposals.yaml"]
    fd = os.open(corrections, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released when the command finished
    os.close(fd)
