"""tests/support/threads.py: under xdist, each worker and the processes it starts get their share of the
cores as the OpenMP, OpenBLAS and MKL thread counts; a count the caller set is kept; a run without
xdist sets none.

Each run is pytest in a new process over a small suite written to the test's folder, with the plugin
loaded by name (``-p tests.support.threads``) or not at all (the control run). Each test writes what its
worker's environment says to a file named after the worker, and in the first two runs what a child process
it starts reads through numpy's BLAS (and torch's) thread pools."""

from __future__ import annotations

import json
from pathlib import Path

from medcalc_maintained.core.parallel import cores
from tests.support.pytest_run import XDIST, run_pytest, write_suite
from tests.support.threads import VARIABLES, threads_per_worker

SUITE = '''
import json, os, subprocess, sys
from pathlib import Path

CHILD = """
import json, sys
from threadpoolctl import threadpool_info
import numpy  # its BLAS
out = {"blas": sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})}
if sys.argv[1] == "torch":
    import torch
    out["torch"] = torch.get_num_threads()
print(json.dumps(out))
"""


def test_{n}_reports_its_threads():
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    seen = {name: os.environ.get(name) for name in {names}}
    child = {}
    if os.environ.get("CHILD"):  # what a child process's BLAS (and torch) read: "blas" or "torch"
        proc = subprocess.run([sys.executable, "-c", CHILD, os.environ["CHILD"]], capture_output=True, text=True, check=True)
        child = json.loads(proc.stdout)
    Path(os.environ["MARKS"], f"{worker}-{n}.json").write_text(json.dumps({"env": seen, "child": child}))
'''


def run(tmp: Path, name: str, args: list[str], plugin: bool = True, **preset: str) -> dict[str, dict]:
    suite = write_suite(tmp / name, SUITE.replace("{names}", repr(VARIABLES)))
    marks = suite / "marks"
    marks.mkdir()
    proc = run_pytest(suite, [*args, *(["-p", "tests.support.threads"] if plugin else [])],
                      {"MARKS": str(marks), **preset}, drop=VARIABLES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in marks.iterdir()}


def test_threads_per_worker_is_the_share_of_the_cores_and_at_least_one():
    assert [threads_per_worker(w, 8) for w in (1, 2, 3, 8, 16)] == [8, 4, 2, 1, 1]
    assert threads_per_worker(2, 2) == threads_per_worker(2, 1) == 1


# pytest in new processes
def test_each_worker_and_its_children_get_their_share_of_the_cores(tmp_path):
    share = threads_per_worker(2, cores())
    got = run(tmp_path, "with", XDIST, CHILD="torch")
    assert {w.split("-")[0] for w in got} == {"gw0", "gw1"}, got  # both workers ran a file
    for worker, seen in got.items():
        assert seen["env"] == {name: str(share) for name in VARIABLES}, worker
        # numpy's BLAS and torch in the child sized their pools by them
        assert seen["child"] == {"blas": [share], "torch": share}, (worker, seen)
    # the control run: nothing set, and a child's BLAS takes every core
    control = run(tmp_path, "without", XDIST, plugin=False, CHILD="blas")
    for worker, seen in control.items():
        assert seen["env"] == {name: None for name in VARIABLES}, worker
        assert seen["child"] == {"blas": [cores()]}, (worker, seen)


def test_a_count_the_caller_set_is_kept_and_a_run_without_xdist_sets_none(tmp_path):
    kept = run(tmp_path, "preset", XDIST, OMP_NUM_THREADS="3")
    assert kept and all(seen["env"]["OMP_NUM_THREADS"] == "3" for seen in kept.values()), kept
    assert all(seen["env"]["OPENBLAS_NUM_THREADS"] == str(threads_per_worker(2, cores())) for seen in kept.values())
    for name, args in (("serial", ["-p", "no:xdist"]), ("n0", ["-n", "0"])):
        got = run(tmp_path, name, args)
        assert set(got) == {"main-1", "main-2"}, got
        assert all(seen["env"] == {n: None for n in VARIABLES} for seen in got.values()), (name, got)
