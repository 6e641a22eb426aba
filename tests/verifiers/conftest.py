"""The LLM-stage fixtures (``instances``, ``project``) of tests/support/llm_fixtures.py."""

from tests.support.llm_fixtures import instances, project  # noqa: F401
