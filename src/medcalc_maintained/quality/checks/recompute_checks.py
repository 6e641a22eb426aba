"""The recompute audit's findings as checks, so the combined detector includes the recompute."""

from __future__ import annotations

from typing import Iterator

from medcalc_maintained.quality.checks.registry import Check, Finding, Instance, register


def _finding(inst: Instance) -> str | None:
    return (inst.recompute or {}).get("finding")


def own_features(inst: Instance, finding: Finding) -> list:
    """The patch of an aggregation mismatch: none; the reference calculator on the row's own features."""
    return []


@register("recompute_aggregation_mismatch", "error", patch=own_features)
def recompute_aggregation_mismatch(inst: Instance, check: Check) -> Iterator[Finding]:
    """The reference calculator disagrees with the label on the label's own (plausible) features."""
    if _finding(inst) == "aggregation_mismatch":
        yield inst.finding(check, "the reference calculator, given the row's own features, disagrees with the label")


@register("recompute_implausible_input", "error")
def recompute_implausible_input(inst: Instance, check: Check) -> Iterator[Finding]:
    """An extracted input is outside its physiological range."""
    if _finding(inst) == "implausible_input":
        names = (inst.recompute or {}).get("implausible_inputs") or ""
        yield inst.finding(check, f"input(s) outside the physiological range: {names}")


@register("recompute_not_computable", "error")
def recompute_not_computable(inst: Instance, check: Check) -> Iterator[Finding]:
    """The label cannot be recomputed from the row's features (an input is missing or unreadable)."""
    if _finding(inst) == "not_computable":
        names = (inst.recompute or {}).get("missing_inputs") or "unspecified"
        yield inst.finding(check, f"not computable from the row's features; missing or invalid: {names}")
