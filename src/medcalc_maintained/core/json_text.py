"""JSON text given by a user: how deeply it nests, and objects that name a key twice (``core/io.py``
re-exports these names; :func:`medcalc_maintained.core.io.loads_json` reads JSON with them)."""

from __future__ import annotations

import re
from typing import Any

# The deepest nesting of arrays and objects a JSON text given by a user may have (predictions, traces,
# export records, reward ground truths are 1-3 deep). A hostile-input bound, not a tuning knob: 2,000
# nested ``[`` (8 KB) would otherwise end in a RecursionError of the json module.
MAX_JSON_DEPTH = 64
# possessive (``*+``): no backtracking state is kept per character (a 1 MB string cost 115 MB before)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*+"?')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of arrays and objects in the JSON ``text`` (brackets inside strings do not
    count), counted up to one past ``limit``."""
    depth = deepest = 0
    for m in _JSON_BRACKET.finditer(_JSON_STRING.sub("", text)):
        depth += 1 if m.group() in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
    return deepest


class DuplicateKey(ValueError):
    """A JSON object that names one key twice."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        raise DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return out
