"""Root pytest configuration: the doctest collection of the package (``--doctest-modules`` over
``src/medcalc_maintained``) leaves out the harness adapters whose optional extra is not installed,
since importing them needs the harness package."""

import importlib.util

collect_ignore = [path for path, package in (("src/medcalc_maintained/harnesses/inspect_task.py", "inspect_ai"),)
                  if importlib.util.find_spec(package) is None]
