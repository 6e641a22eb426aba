"""The stage list of ``dvc.yaml``'s header, made from the stages' own deps and outs.

Every stage, in an order ``dvc repro`` can run them (a stage after every stage whose outputs it
reads; among those that could go next, the one declared first), with what it reads: the stages
whose outputs are among its deps, then its other data deps as written. Paths are compared after
the ``${...}`` of ``vars:`` and ``params.yaml`` are filled in, as DVC fills them in.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any, Callable

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.yaml_text import safe_load

WIDTH = 110
NAME_WIDTH = 20
VAR = re.compile(r"\$\{([^}]+)\}")
INTRO = """\
# Stages, in an order `dvc repro` can run them, with what each reads: after `<-`, the stages whose
# outputs are among its deps; after `+`, its other data deps, as written in its block:
#
"""


def _resolver(root: Path, doc: dict[str, Any]) -> Callable[[object], str]:
    context: dict[str, Any] = {}
    params = root / "params.yaml"
    if params.is_file():
        context.update(safe_load(params.read_text(encoding="utf-8")) or {})
    for v in doc.get("vars") or []:
        if isinstance(v, dict):
            context.update(v)

    def lookup(match: re.Match[str]) -> str:
        value: Any = context
        for key in match.group(1).strip().split("."):
            if not isinstance(value, dict) or key not in value:
                raise DataError(root / "dvc.yaml", f"{match.group(0)} is neither in vars: nor in params.yaml")
            value = value[key]
        return str(value)

    return lambda text: VAR.sub(lookup, str(text)).rstrip("/")


def _paths(entries: list[Any] | None) -> list[str]:
    """The paths of a stage's ``outs``/``metrics``/``plots`` list (an entry is a path or ``{path: options}``)."""
    found: list[Any] = []
    for e in entries or []:
        found.extend(e.keys() if isinstance(e, dict) else [e])
    return [str(p) for p in found]


def _within(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def reads(root: Path, doc: dict[str, Any]) -> dict[str, tuple[list[str], list[str]]]:
    """Stage -> (the stages whose outputs it reads, in dvc.yaml's order; its other data deps as written)."""
    resolve = _resolver(root, doc)
    stages = doc["stages"]
    outs = {name: [resolve(p) for key in ("outs", "metrics", "plots") for p in _paths(spec.get(key))]
            for name, spec in stages.items()}
    found = {}
    for name, spec in stages.items():
        producers: set[str] = set()
        other = []
        for dep in spec.get("deps") or []:
            if str(dep).startswith("${src}"):
                continue
            by = {s for s, paths in outs.items() if s != name and any(_within(resolve(dep), o) for o in paths)}
            producers |= by
            if not by:
                other.append(str(dep))
        found[name] = ([s for s in stages if s in producers], other)
    return found


def run_order(graph: dict[str, tuple[list[str], list[str]]], path: Path) -> list[str]:
    """The stages of ``graph`` (in dvc.yaml's order) each after the stages it reads."""
    order: list[str] = []
    while len(order) < len(graph):
        ready = [s for s in graph if s not in order and all(p in order for p in graph[s][0])]
        if not ready:
            raise DataError(path, f"the stages {sorted(set(graph) - set(order))} read each other's outputs (a cycle)")
        order.append(ready[0])
    return order


def render(root: Path, doc: dict[str, Any]) -> str:
    """The header's stage list (comment lines) for the parsed ``dvc.yaml`` ``doc`` under ``root``."""
    graph = reads(root, doc)
    lines = [INTRO]
    for stage in run_order(graph, root / "dvc.yaml"):
        producers, other = graph[stage]
        # a no-break space keeps each arrow with its first item when the line is wrapped
        parts = ([f"<-\xa0{', '.join(producers)}"] if producers else []) + (
            [f"+\xa0{', '.join(other)}"] if other else [])
        first = f"#   {stage:<{NAME_WIDTH}} "
        wrapped = textwrap.wrap(" ".join(parts) or "-", width=WIDTH - len(first), break_long_words=False,
                                break_on_hyphens=False)
        lines.append(first + wrapped[0].replace("\xa0", " ") + "\n")
        lines.extend("#" + " " * (len(first) + 2) + w.replace("\xa0", " ") + "\n" for w in wrapped[1:])
    lines.append("#\n")
    return "".join(lines)
