"""How pytest names the suite's modules, shown by a real pytest in a new process (the fast tests of the
suite's layout are in tests/architecture/test_tests_layout.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.paths import ROOT


def test_pytest_names_a_test_module_by_its_path_without_importing_a_package_of_the_same_name():
    """tests/verifiers/ shares its name with the harness package ``verifiers``: pytest names its modules
    ``tests.verifiers.*`` and collects them without importing the harness (which costs seconds)."""
    out = subprocess.run([sys.executable, "-c", COLLECT], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    found = dict(line.split("=", 1) for line in out.stdout.splitlines() if line.startswith(("NAMES=", "IMPORTED=")))
    assert found == {"NAMES": "tests.verifiers.test_llm_prompts", "IMPORTED": "False"}


COLLECT = """
import sys, pytest
class Names:
    def pytest_collection_finish(self, session):
        print("\\nNAMES=" + " ".join(sorted({i.module.__name__ for i in session.items})))
pytest.main(["--collect-only", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "tests/verifiers/test_llm_prompts.py"],
            plugins=[Names()])
print("IMPORTED=" + str("verifiers" in sys.modules))
"""
