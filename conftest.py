"""Root pytest configuration: the doctest collection of the package (``--doctest-modules`` over
``src/medcalc_maintained``) leaves out the harness adapters whose optional extra is not installed,
since importing them needs the harness package."""

import importlib.util

# (adapter, the harness package it imports); the HELM adapter imports crfm-helm lazily
OPTIONAL = (("src/medcalc_maintained/harnesses/inspect_task.py", "inspect_ai"),
            ("src/medcalc_maintained/harnesses/verifiers_env.py", "verifiers"))
collect_ignore = [path for path, package in OPTIONAL if importlib.util.find_spec(package) is None]
