"""Issue 27: the stochastic stage's outputs are the same bytes on every machine, whatever the number
of worker processes, the BLAS thread count or the BLAS CPU kernel (OpenBLAS picks one per CPU; the
kernel forced with OPENBLAS_CORETYPE stands in for another machine).

The end-to-end tests of this subject; the fast ones are in tests/stages/test_reproducible.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SIMULATE_PARAMS: dict = {}  # the defaults: every seed, 100 reviews (about 5 s a run)


@pytest.fixture(scope="module")
def simulate_project(pipeline_project, real_instances, real_recompute, campaign_table, tmp_path_factory) -> Path:
    """A copy of the real pipeline project with the check findings, the triage queue and the release
    tables built: the replay's inputs as `dvc repro` makes them."""
    import shutil

    import yaml

    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import triage as triage_stage
    from tests.support.triage_support import write_relabel_and_flags

    root = tmp_path_factory.mktemp("reproducible") / "project"
    shutil.copytree(pipeline_project, root)
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["triage_simulate"].update(SIMULATE_PARAMS)
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    p = Project.load(root)
    write_relabel_and_flags(p, real_instances, real_recompute, campaign_table)
    from medcalc_maintained.stages import recompute as recompute_stage
    from medcalc_maintained.stages import release_tables

    recompute_stage.run(p)  # the check findings: the check_* signals of the error model
    triage_stage.run(p)
    release_tables.run(p)
    return root


def _simulate(root: Path, out: Path, workers: int, threads: int, kernel: str | None) -> dict[str, bytes]:
    env = {**os.environ, "MEDCALC_ROOT": str(root), "OMP_NUM_THREADS": str(threads),
           "OPENBLAS_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), "MPLBACKEND": "Agg"}
    env.pop("OPENBLAS_CORETYPE", None)
    if kernel:
        env["OPENBLAS_CORETYPE"] = kernel
    cmd = [sys.executable, "-m", "medcalc_maintained.cli", "triage", "simulate", "--out", str(out),
           "--workers", str(workers)]
    r = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return {f.name: f.read_bytes() for f in sorted(out.iterdir())}


def _kernels() -> list[str]:
    """OpenBLAS kernels this CPU can run besides its own (Prescott: SSE3 only; Haswell: AVX2)."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return []
    return ["Prescott"] + (["Haswell"] if {"avx2", "fma"} <= flags else [])


def test_triage_simulate_outputs_are_the_same_bytes_for_any_workers_threads_and_blas_kernel(simulate_project, tmp_path):
    runs = {}
    settings = [(1, 1, None), (2, 1, None), (1, 2, None), (2, 2, None)]
    settings += [(1 + i % 2, 2 - i % 2, k) for i, k in enumerate(_kernels())]
    for workers, threads, kernel in settings:
        runs[workers, threads, kernel] = _simulate(simulate_project, tmp_path / f"w{workers}-t{threads}-{kernel}",
                                                   workers, threads, kernel)
    first = runs[1, 1, None]
    assert {"errors_found.csv", "estimation_error.csv", "rows.csv", "metrics.json", "summary.json", "errors_found.png",
            "estimation_error.png", "calculator_rates.csv", "unverified_estimate.json"} <= set(first)
    for setting, files in runs.items():
        assert files.keys() == first.keys()
        differ = [name for name in files if files[name] != first[name]]
        assert differ == [], f"{setting}: {differ} differ from workers 1, 1 thread"
