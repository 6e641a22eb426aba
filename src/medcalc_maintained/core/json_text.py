"""JSON text given by a user, read within bounds: how deeply it nests, objects that name a key twice,
and :func:`loads_json`, which every reader of user JSON calls."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from medcalc_maintained.core.errors import DataError, shown

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


def loads_json(text: str | bytes, where: os.PathLike | str, *, max_depth: int = MAX_JSON_DEPTH):
    """``json.loads(text)`` for JSON from a user: text nested deeper than ``max_depth`` is refused
    before it is parsed, and invalid JSON and an object naming a key twice, with a
    :class:`DataError` naming ``where`` (file and line)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if json_depth(text, max_depth) > max_depth:
        raise DataError(where, f"JSON nested more than {max_depth} levels deep (arrays/objects); refused unread")
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except DuplicateKey as exc:
        raise DataError(where, f"duplicate key {shown(exc.args[0])} in one JSON object; each key may appear "
                               "once (the last one would silently win)") from None
    except json.JSONDecodeError as exc:
        raise DataError(where, f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:  # not reached within the bound; kept so no traceback can escape
        raise DataError(where, "JSON nested too deeply; refused") from None
