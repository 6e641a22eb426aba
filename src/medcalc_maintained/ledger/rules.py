"""The rules every ledger record must follow, run the same way by ``propose``, ``review import``,
``apply`` and the ledger contract of ``validate``.

* ``new_value`` is a possible label of its row (:func:`medcalc_maintained.calculators.ranges.label_problem`:
  written out, the row's type, inside the calculator's range; never rounded or coerced);
  ``old_value`` has the row's type;
* a physician record (``source: physician`` or reviewer role ``physician``) is ``blinded: true``;
* ``decided_at`` is a real ``YYYY-MM-DD`` date not after today;
* of two accepted records of one row and release, the one decided earlier (then: earlier in the
  ledger) stands and the later one is blamed, naming both (:func:`accepted_order`, :func:`duplicate_problem`).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Mapping

from medcalc_maintained.calculators.ranges import label_problem
from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.core.labels import fit_problem

PHYSICIAN = "physician"
_ISO_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def is_physician(rec: Mapping[str, Any]) -> bool:
    reviewer = rec.get("reviewer")
    role = reviewer.get("role") if isinstance(reviewer, Mapping) else rec.get("reviewer_role")
    return rec.get("source") == PHYSICIAN or str(role or "").strip().lower() == PHYSICIAN


def blinded_problem(rec: Mapping[str, Any]) -> str | None:
    if is_physician(rec) and rec.get("blinded") is not True:
        return "a physician record must be blinded (blinded: true: the reviewer recomputed the label without seeing the old one)"
    return None


def decided_at_problem(value: Any, today: dt.date | None = None) -> str | None:
    """Why ``value`` is not a real decision date (``YYYY-MM-DD``, not after today)."""
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, dt.date):
        day = value
    else:
        m = _ISO_DAY.match(str(value if value is not None else "").strip())
        if not m:
            return f"decided_at {value!r} is not a YYYY-MM-DD date"
        try:
            day = dt.date(*(int(g) for g in m.groups()))
        except ValueError as exc:
            return f"decided_at {value!r} is not a real date ({exc})"
    today = today or dt.date.today()
    if day > today:
        return f"decided_at {day.isoformat()} is in the future (today is {today.isoformat()})"
    return None


def value_problems(rec: Mapping[str, Any], *, calculator_id: Any, output_type: str, style: str | None,
                   note: Any = None) -> list[tuple[str, str]]:
    """(field, problem) for ``new_value`` (a possible label of the row) and ``old_value`` (the row's type)."""
    out: list[tuple[str, str]] = []
    new = rec.get("new_value")
    problem = label_problem(calculator_id, new, output_type, style, note)
    if problem:
        out.append(("new_value", f"{new!r} is not a valid {output_type} answer ({problem})"))
    old = rec.get("old_value")
    old_problem = label_problem(calculator_id, old, output_type, style, None) if old is None or not str(old).strip() \
        else fit_problem(parse_answer(old, output_type), output_type, style)
    if old_problem:
        out.append(("old_value", f"{old!r} is not a valid {output_type} answer ({old_problem})"))
    return out


def record_problems(rec: Mapping[str, Any], *, calculator_id: Any, output_type: str, style: str | None,
                    note: Any = None, today: dt.date | None = None) -> list[tuple[str, str]]:
    """Every rule of one record against its row: (field, problem) pairs, empty when it follows them all."""
    out = value_problems(rec, calculator_id=calculator_id, output_type=output_type, style=style, note=note)
    if (p := blinded_problem(rec)):
        out.append(("blinded", p))
    if (p := decided_at_problem(rec.get("decided_at"), today)):
        out.append(("decided_at", p))
    return out


def accepted_order(release_key: tuple, decided_at: Any, position: int) -> tuple:
    """Sort key of accepted records: release, then decision date, then ledger position. The first
    record of a row and release in this order is the one that stands."""
    return (release_key, str(decided_at or "9999-99-99"), position)


def duplicate_problem(split: str, uid: int, release: str, later: tuple[str, str, Any], first: tuple[str, str, Any]) -> str:
    """The message blaming ``later`` = (id, file, decided_at) for repeating ``first``'s row and release."""
    return (f"second accepted record for {split} uid {uid} in release {release}: {later[0]} ({later[1]}, decided "
            f"{later[2]}) repeats {first[0]} ({first[1]}, decided {first[2]}), which stands; withdraw or re-base {later[0]}")
