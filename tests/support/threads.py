"""Each xdist worker, and every process it starts, computes on its share of the cores: the controller sets
the thread-count variables of OpenMP (torch), OpenBLAS and MKL (numpy, scipy) and Arrow (which reads
``OMP_NUM_THREADS``) to ``cores // workers`` (at least 1) before it starts the workers, who inherit them.

Without them every process sized its thread pools to the whole machine, so on the project's 2-core
machines a worker's numpy, torch or harness process ran two threads beside the other worker's: an
``inspect eval`` of 4 rows of the real model (tests/e2e/harnesses/test_harness_real_model.py) took
56.3 s with one core kept busy by another process, and 35.5 s with ``OMP_NUM_THREADS=1`` (30.8 s on an
idle machine with both cores). A variable already set is kept (a caller that chose its threads), a
test that sets its own in a child's environment keeps its value (tests/e2e/stages/test_reproducible.py
runs stages with 1, 2 and 4 threads), and a run without xdist (``PYTEST_WORKERS=0``) sets none.

Loaded by the root ``conftest.py``.
"""

from __future__ import annotations

import os

from medcalc_maintained.core.parallel import cores

VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def threads_per_worker(workers: int, available: int) -> int:
    """The threads each of ``workers`` processes gets on ``available`` cores (at least 1)."""
    return max(1, available // max(1, workers))


def pytest_configure(config) -> None:
    if hasattr(config, "workerinput"):  # a worker: it inherited the controller's environment
        return
    # xdist's workers, one per entry of --tx (-n N, "auto" resolved, makes N): none without xdist or with -n 0
    workers = len(config.getoption("tx", None) or []) if config.getoption("dist", "no") != "no" else 0
    if workers < 1:
        return  # one process, which may use every core
    share = str(threads_per_worker(workers, cores()))
    for name in VARIABLES:
        os.environ.setdefault(name, share)
