"""Root pytest configuration.

- The doctest collection of the package (``--doctest-modules`` over ``src/medcalc_maintained``) leaves
  out the harness adapters whose optional extra is not installed, since importing them needs the
  harness package, and imports only the modules that hold a doctest (``>>>``): importing the others
  (torch, trl, inspect_ai, ...) only to find none cost each xdist worker about 7 s of CPU. The same
  holds for the tests' helper modules (``tests/support/*.py`` and the ``__init__.py`` files).
- ``make test-fast`` (``-m "not slow"``) does not collect ``tests/e2e/``, whose every test is ``slow``.
- Test files run longest first (`tests/support/schedule.py`, with `make test`'s `--no-loadscope-reorder`).
- Every test and doctest runs under the checkout guard of ``tests/support/checkout_guard.py`` (a test that
  changes a file of the checkout fails).
- ``CliRunner().invoke(app, ...)`` builds the command line's click command once per app
  (``tests/support/cli_command.py``), and an xdist worker ends without freeing its objects one by one once
  its results are sent (``tests/support/worker_exit.py``).
- Under xdist, each worker and the processes it starts size their thread pools (OpenMP, OpenBLAS, MKL, Arrow)
  to their share of the cores (``tests/support/threads.py``)."""

import importlib.util
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent / "src" / "medcalc_maintained"
TESTS = Path(__file__).resolve().parent / "tests"

pytest_plugins = ["tests.support.checkout_guard", "tests.support.schedule", "tests.support.cli_command",
                  "tests.support.worker_exit", "tests.support.threads"]

# (adapter, the harness package it imports); the HELM adapter imports crfm-helm lazily
OPTIONAL = (("src/medcalc_maintained/harnesses/inspect_task.py", "inspect_ai"),
            ("src/medcalc_maintained/harnesses/verifiers_env.py", "verifiers"))
collect_ignore = [path for path, package in OPTIONAL if importlib.util.find_spec(package) is None]


E2E = TESTS / "e2e"


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    """A module of the package, or a helper module of the tests (not ``test_*.py``), without ``>>>``
    has no doctest: not imported at collection (``tests/support/forkserver_warm.py`` alone, imported to find
    none, cost each worker 1.2 s). With ``-m "not slow"`` (``make test-fast``) nothing under ``tests/e2e/`` is
    collected: every test there is ``slow`` (``tests/e2e/conftest.py``), so all of it would be deselected."""
    if collection_path == E2E and " ".join(str(config.getoption("markexpr", "") or "").split()) == "not slow":
        return True
    if collection_path.suffix != ".py" or ">>>" in collection_path.read_text(encoding="utf-8"):
        return None
    if PACKAGE in collection_path.parents:
        return True
    if TESTS in collection_path.parents and not collection_path.name.startswith(("test_", "conftest")):
        return True
    return None
