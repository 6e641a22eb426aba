"""Shared fixtures: where the project, the pulled upstream data and ../shared are."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paths import ROOT, SHARED  # noqa: E402


def upstream_file(rel: str) -> Path:
    """An upstream file: the DVC-pulled copy under data/upstream, else ../shared/data."""
    for base in (ROOT / "data" / "upstream", SHARED / "data"):
        p = base / rel
        if p.is_file():
            return p
    pytest.skip(f"upstream file {rel} not available (run `make data`)")


@pytest.fixture(scope="session")
def v1_test_csv() -> Path:
    return upstream_file("medcalc-bench/v1.0/test_data.csv")


@pytest.fixture(scope="session")
def old_test_csv() -> Path:
    return upstream_file("medcalc-bench/2024-06/test_data.csv")


@pytest.fixture(scope="session")
def campaign_dir() -> Path:
    return upstream_file("validate-medcalc-labels/medcalc_v1_corrected.csv").parent
