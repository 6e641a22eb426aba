"""tests/support/worker_exit.py: an xdist worker skips the interpreter's teardown once its results are
sent, and loses nothing a run reports: failures and the exit status, the test output pytest shows, and
the exit handlers registered while the tests ran.

Each run is pytest with two xdist workers in a new process, over a small suite written to the test's
folder, with the plugin loaded by name (``-p tests.support.worker_exit``) or not at all (the control run).
A module-level object whose ``__del__`` writes a file stands for the teardown: the interpreter's clean-up
calls it, a process ended by ``os._exit`` does not."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.pytest_run import XDIST, run_pytest, write_suite

SUITE = '''
import atexit, os, sys
from pathlib import Path

MARKS = Path(os.environ["MARKS"])
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")


class TornDown:
    def __init__(self):
        self.path = str(MARKS / f"torn-down-{WORKER}")  # (the module's globals may be gone when __del__ runs)

    def __del__(self, open=open):
        with open(self.path, "w") as f:
            f.write("1")


KEEP = TornDown()


def test_{n}_registers_an_exit_handler():
    atexit.register(lambda: (MARKS / f"handler-{WORKER}-{n}").write_text("1"))


def test_{n}_prints():
    print("visible-{n}")
    sys.stdout.flush()
    assert False, "fails on purpose"
'''


def run(tmp: Path, plugin: bool) -> tuple[subprocess.CompletedProcess, set[str]]:
    suite = write_suite(tmp / ("with" if plugin else "without"), SUITE)
    marks = suite / "marks"
    marks.mkdir()
    proc = run_pytest(suite, [*XDIST, "-rA", *(["-p", "tests.support.worker_exit"] if plugin else [])],
                      {"MARKS": str(marks)})
    return proc, {p.name for p in marks.iterdir()}


# pytest in a new process
def test_a_worker_ends_without_teardown_and_reports_everything(tmp_path):
    control, control_marks = run(tmp_path, plugin=False)
    proc, marks = run(tmp_path, plugin=True)
    for p in (control, proc):
        assert p.returncode == 1, p.stdout + p.stderr  # the failures decide the exit status
        assert "2 failed, 2 passed" in p.stdout, p.stdout
        assert "visible-1" in p.stdout and "visible-2" in p.stdout  # the failing tests' output is shown
        assert "fails on purpose" in p.stdout
    handlers = {"handler-gw0-1", "handler-gw0-2", "handler-gw1-1", "handler-gw1-2"}
    assert len(control_marks & handlers) == 2 and len(marks & handlers) == 2, (control_marks, marks)
    # the control run's workers tore their interpreters down; the plugin's did not
    assert {"torn-down-gw0", "torn-down-gw1"} <= control_marks, control_marks
    assert not {m for m in marks if m.startswith("torn-down-gw")}, marks
