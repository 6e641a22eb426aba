"""End-to-end tests: every test collected under tests/e2e/ is marked ``slow`` here, once, so that
``make test-fast`` (``-m "not slow"``, and ``--ignore=tests/e2e`` so that it does not even import them)
leaves them out and ``make test`` runs them. They run the DVC pipeline, local Hub and Gemini servers,
publishing, GRPO training, GX over whole releases, the harness adapters through their harness packages
(Inspect, verifiers, lm-eval, HELM) and the command line in new processes; a test of that kind belongs
here, in ``tests/e2e/<package>/``."""

from __future__ import annotations

import pytest

from tests.support.smollm2 import Conversion, converted


def pytest_itemcollected(item: pytest.Item) -> None:
    """Called for the items under this folder only (pytest calls a conftest's hook for its own tree)."""
    item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory) -> Conversion:
    """SmolLM2-135M-Instruct converted by `medcalc-maintained model smollm2`, once per run (tests/support/smollm2.py)."""
    return converted(tmp_path_factory)
