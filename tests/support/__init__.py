"""Pytest plugins and helpers of the suite, imported by package name (``from tests.support.paths import
ROOT``): paths, import_graph, hub_mirror (a local Hub mirror), release_support, ledger_support,
triage_support, checkout_guard and schedule (plugins of the root conftest.py), citations, forking and
forkserver_warm (warm new processes), fake_gemini, llm_helpers and llm_fixtures (the LLM-stage tests)."""
