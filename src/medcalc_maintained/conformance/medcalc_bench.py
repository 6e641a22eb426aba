"""``--impl medcalc-bench``: the PyPI package ``medcalc-bench`` 1.7.0 (module ``medcalc``), called with
the case's entity dict.

The package's functions take their own parameter names (``sys_bp`` for our ``Systolic Blood
Pressure``); ``medcalc_bench.yaml`` beside this module says, per calculator, which function and which
name each of our declared inputs has there (every spelling of one criterion maps to the same name),
and what the function needs that our inputs leave out (a flag the case omits is passed as false, as
our definitions read an unmentioned flag). The mapping was written by reading the package, and each
entry was called on real v1.0 entities. Values are passed as they are: where the package misreads a
spelling our inputs (and upstream's v1.0 entities) use, that is its erratum, not ours to repair.
Nothing is installed on the fly: without the package the
implementation refuses with the command that installs it (the ``errata`` extra).
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import io
from functools import lru_cache
from importlib import metadata, resources
from typing import Any

from medcalc_maintained.conformance.base import Implementation, NoResult
from medcalc_maintained.core.yaml_text import safe_load

PACKAGE, VERSION = "medcalc-bench", "1.7.0"
MAP_FILE = "medcalc_bench.yaml"


@lru_cache(maxsize=1)
def mapping() -> dict[int, dict[str, Any]]:
    """The calculator id -> ``{module, function, keys, defaults, notes}`` entries of the map file."""
    text = (resources.files("medcalc_maintained.conformance") / MAP_FILE).read_text(encoding="utf-8")
    return {int(k): v for k, v in (safe_load(text) or {}).get("calculators", {}).items()}


def installed_version() -> str | None:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def params_for(calculator_id: int, inputs: dict[str, Any]) -> dict[str, Any]:
    """The package's parameter dict for our ``inputs``: each input under the package's name for it
    (several spellings of one criterion merged: a flag is true when any is), values as they are (a
    value the package spells otherwise is the package's to read: an erratum when it misreads it), and
    the map's ``defaults`` for a name the package requires that the case leaves out."""
    entry = mapping().get(calculator_id)
    if entry is None or not entry.get("module"):
        raise NoResult(f"{PACKAGE} {VERSION} has no function for calculator {calculator_id}")
    keys: dict[str, str] = entry.get("keys") or {}
    folded = {k.casefold(): v for k, v in keys.items()}
    passthrough = any("<" in k for k in keys)  # MME: one '<Drug> Dose' pair per drug, as our entities have it
    params: dict[str, Any] = {}
    for name, value in inputs.items():
        key = keys.get(name) or folded.get(name.casefold()) or (name if passthrough else None)
        if key is None:
            continue  # an input the package does not read
        value = copy.deepcopy(value)
        if key in params and isinstance(params[key], bool) and isinstance(value, bool):
            value = params[key] or value
        params[key] = value
    for key, value in (entry.get("defaults") or {}).items():
        params.setdefault(key, copy.deepcopy(value))
    return params


def implementation() -> Implementation:
    """The package as an implementation; ``ValueError`` when it is missing or another version."""
    found = installed_version()
    if found is None:
        raise ValueError(f"--impl {PACKAGE}: the package is not installed; install the errata extra "
                         f"(pip install -e '.[errata]', which pins {PACKAGE}=={VERSION})")
    if found != VERSION:
        raise ValueError(f"--impl {PACKAGE}: {found} is installed, but the map is written for {VERSION}")

    def call(calculator_id: int, inputs: dict[str, Any]) -> Any:
        params = params_for(calculator_id, inputs)
        entry = mapping()[calculator_id]
        try:
            module = importlib.import_module(entry["module"])
        except ImportError as exc:  # 1.7.0's target_weight imports a name its utils do not define
            raise NoResult(f"importing {entry['module']} fails: {exc}") from None
        fn = getattr(module, entry["function"])
        with contextlib.redirect_stdout(io.StringIO()):  # some functions print their working
            out = fn(params)
        answer = out.get("Answer") if isinstance(out, dict) else out
        if answer is None:
            raise NoResult("the function returned no Answer")
        return answer

    return Implementation(PACKAGE, f"the PyPI package {PACKAGE} {VERSION} (module medcalc)", call)
