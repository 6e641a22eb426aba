"""Reference implementations of the 55 MedCalc-Bench v1.0 calculators, keyed by ``Calculator ID``.

>>> from medcalc_maintained.calculators import compute
>>> compute(5, {"Systolic Blood Pressure": [120, "mm Hg"], "Diastolic Blood Pressure": [60, "mm Hg"]}).value
'80'

Each calculator module registers its functions with :func:`register`; :func:`load_all` imports the
modules once. Units are converted by :mod:`medcalc_maintained.core.units`; physiological ranges live in
``plausibility.yaml`` beside this file.
"""

from __future__ import annotations

import importlib
from typing import Any

from medcalc_maintained.calculators.base import (
    REGISTRY,
    Calculator,
    CannotCompute,
    Inputs,
    Result,
    register,
    run,
)

MODULES = ("lab", "physical", "scores_cardio", "scores_critical", "scores_misc", "dosing_dates")

_loaded = False


def load_all() -> dict[int, Calculator]:
    """Import every calculator module (idempotent) and return the registry."""
    global _loaded
    if not _loaded:
        for name in MODULES:
            try:
                importlib.import_module(f"medcalc_maintained.calculators.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"medcalc_maintained.calculators.{name}":
                    raise
        _loaded = True
    return REGISTRY


def compute(calculator_id: int, entities: dict[str, Any]) -> Result:
    """Compute calculator ``calculator_id`` from a parsed ``Relevant Entities`` dict."""
    load_all()
    calc = REGISTRY.get(int(calculator_id))
    if calc is None:
        raise KeyError(f"unknown calculator id {calculator_id}")
    return run(calc.fn, calc.output_type, entities)


__all__ = ["REGISTRY", "Calculator", "CannotCompute", "Inputs", "Result", "compute", "load_all", "register"]
