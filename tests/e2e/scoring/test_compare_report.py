"""`compare report`: held-out accuracy of each arm per checkpoint under both label versions, with the
noise diagnostics, on a synthetic pair of label versions (hand-computed) and on the smoke outputs.

The end-to-end tests of this subject; the fast ones are in tests/scoring/test_compare_report.py."""

from __future__ import annotations

import pytest

from tests.support.paths import ROOT


# imports torch; the script in a new process
def test_gpu_check_skips_without_cuda():
    import subprocess
    import sys

    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: gpu-check would train")
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_check.py")], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0 and "gpu-check: skipped: no CUDA device" in res.stdout
    assert "Traceback" not in res.stderr
