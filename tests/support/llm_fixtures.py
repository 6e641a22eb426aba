"""Fixtures of the LLM-stage tests (tests/verifiers/, tests/e2e/verifiers/, whose conftest.py imports
them): the real v1.0 instances and a throw-away project root (MEDCALC_ROOT) with fast engine
settings; helpers live in llm_helpers.py."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.support.llm_helpers import LLMProject, stage_params


@pytest.fixture(scope="session")
def instances(real_instances) -> pd.DataFrame:
    return real_instances


@pytest.fixture
def project(tmp_path, instances, campaign_workbooks, monkeypatch) -> LLMProject:
    """A project root (MEDCALC_ROOT) with its own params.yaml and the real instances."""
    root = tmp_path / "proj"
    root.mkdir()
    inst_path = root / "instances.parquet"
    instances.to_parquet(inst_path, index=False)
    sampled, final = campaign_workbooks
    proj = LLMProject(root, inst_path, {"campaign": {"sampled": str(sampled), "final": str(final)},
                                        "audit": stage_params("audit"), "relabel": stage_params("relabel")})
    proj.write_params()
    monkeypatch.setenv("MEDCALC_ROOT", str(root))
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_ENTERPRISE", raising=False)
    return proj
