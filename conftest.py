"""Root pytest configuration: the doctest collection of the package (``--doctest-modules`` over
``src/medcalc_maintained``) leaves out the harness adapters whose optional extra is not installed,
since importing them needs the harness package; and every test and doctest runs under the checkout
guard of ``tests/checkout_guard.py`` (a test that changes a file of the checkout fails)."""

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))

pytest_plugins = ["checkout_guard"]

collect_ignore = [path for path, package in (("src/medcalc_maintained/harnesses/inspect_task.py", "inspect_ai"),)
                  if importlib.util.find_spec(package) is None]
