"""Fixtures of the LLM-stage tests: the real v1.0 instances and a throw-away project root
(MEDCALC_ROOT) with fast engine settings; helpers live in llm_helpers.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from llm_helpers import Project, stage_params  # noqa: E402


@pytest.fixture(scope="session")
def instances(v1_test_csv) -> pd.DataFrame:
    from medcalc_maintained.stages.ingest import ingest

    return ingest([("test", v1_test_csv)]).instances


@pytest.fixture
def project(tmp_path, instances, campaign_dir, monkeypatch) -> Project:
    """A project root (MEDCALC_ROOT) with its own params.yaml and the real instances."""
    root = tmp_path / "proj"
    root.mkdir()
    inst_path = root / "instances.parquet"
    instances.to_parquet(inst_path, index=False)
    campaign = {"sampled": str(campaign_dir / "phase3" / "y_new_and_sampled_MD_evals.xlsx"),
                "final": str(campaign_dir / "phase3" / "y_final_MD_evals_incorporated.xlsx")}
    proj = Project(root, inst_path, {"campaign": campaign, "audit": stage_params("audit"),
                                     "relabel": stage_params("relabel")})
    proj.write_params()
    monkeypatch.setenv("MEDCALC_ROOT", str(root))
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_ENTERPRISE", raising=False)
    return proj
