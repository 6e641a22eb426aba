"""Dosed drugs read from a quote: the steroid of the steroid conversion (24) and the opioids of the MME (49).

The evidence verifier (:func:`evidence.verify`) hands these inputs here; each answers with a
:class:`~.verdict.Verdict` naming one rule of :data:`~.verdict.RULES`.

``input steroid`` (``[drug with route, dose, unit]``, e.g. ``["Dexamethasone PO", 7.96, "mg"]``)
    the quote names the drug (a generic or brand name of ``lexicon.yaml``'s ``drugs``; a brand sold
    for one route states that route, Solu-Medrol is IV methylprednisolone) and prints its dose with its
    unit: the dose a number of mass right before the drug (``7.96 mg of dexamethasone``, ``40 mg oral
    prednisone``) or the first right after it (``prednisone 40 mg``), never one that doses another drug;
    the same amount in another mass unit is the same dose (1 g is 1000 mg). A route the quote states
    (``PO``, ``oral``, ``IV``, ``intramuscular`` ...; the conversion's IV row is its parenteral dose)
    must be the input's; where the quote states none, the drug is read only when the conversion gives
    it the same equivalent by every route it tabulates (dexamethasone 0.75 mg IV and PO), and the
    reason says so. A negated mention (``no prednisone``) states no dose.
``target steroid`` (a drug with route)
    the steroid the quote converts *to*: the one named right after a cue of conversion
    (``equivalent dosage in mg of``, ``convert ... to``, ``in terms of``); stage ``certify`` reads it
    in the row's question, which states it (the note does not). Its route as above.
``opioids`` (``[[drug, dose, unit, doses per day], ...]``, from the ``<Opioid> Dose`` and ``<Opioid>
Dose Per Day`` entities, :func:`opioid_value`)
    the quote names every drug of the list (fentanyl by its form: a transdermal patch and a buccal
    tablet convert differently, so a bare ``fentanyl`` states neither), prints each drug's dose with its
    unit as above (a patch's ``mcg/hr`` is its strength) and how often it is taken a day (``3 times a
    day``, ``twice daily``, ``TID``, ``q6h`` = 4, ``every 8 hours`` = 3, ``daily``); and every opioid the
    quote doses is in the list. The conversion factors are the oral ones (fentanyl aside): a parenteral
    route stated for another opioid does not fit them, and no route stated is read as the factor's.

:func:`read_value` gives the value a quote states (the note's reading), which stage ``certify``
compares with the derivation's value to find a contradiction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.inputs import InputSpec
from medcalc_maintained.calculators.verdict import Verdict
from medcalc_maintained.calculators.verdict import no as _no
from medcalc_maintained.calculators.verdict import ok as _ok
from medcalc_maintained.core import units as U

ACCESSORS = ("steroid_dose", "opioid_list")
TARGET_INPUTS = frozenset({"target steroid"})  # a drug the quote converts to (the question states it)

DOSE = re.compile(r"(?<![\w.,/])(\d+(?:\.\d+)?|\.\d+)\s*(mg|mcg|µg|μg|ug|g|milligrams?|micrograms?|grams?)"
                  r"(\s*/\s*(?:hr|h|hour))?(?![\w])", re.I)
OF_GAP = re.compile(r"^\s*(?:of\s+)?(?:(?:the|an?|oral|intravenous|IV|PO|IM|sublingual|buccal|transdermal|"
                    r"extended-release|ER|immediate-release|IR)\s+)*$", re.I)
AFTER_GAP = re.compile(r"^[^.;:\d]{0,30}$")
TARGET_CUE = re.compile(r"\b(?:equivalent\b[^.?;]{0,30}?\b(?:of|to|as|in)|convert(?:ed|ing)?\b[^.?;]{0,40}?\b(?:to|into)|"
                        r"switch(?:ed|ing)?\b[^.?;]{0,30}?\bto|in terms of|expressed as)\s+$", re.I)
WORD_COUNT = {"once": 1, "one": 1, "twice": 2, "two": 2, "thrice": 3, "three": 3, "four": 4, "five": 5, "six": 6}
FREQUENCY = re.compile(
    r"\b(?P<n>\d+|one|two|three|four|five|six)\s*(?:x|times?)\s*(?:a|per|each|every|/)?\s*day\b|\b(?P<n2>\d+|one|two|"
    r"three|four|five|six)\s*times?\s+daily\b|\b(?P<w>once|twice|thrice)\s+(?:a\s+|per\s+|each\s+)?(?:day|daily)\b|"
    r"\bevery\s+(?P<h>\d+)\s*(?:hours?|hrs?|h)\b|\bq\.?\s*(?P<q>\d+)\s*h(?:rs?|ours?)?\b|"
    r"(?P<abbr>\b(?:BID|b\.i\.d\.|TID|t\.i\.d\.|QID|q\.i\.d\.|QD|q\.d\.|QHS|qhs)(?![\w])|\bdaily\b|\bevery day\b|"
    r"\bnightly\b|\bat bedtime\b)", re.I)
ABBR = {"bid": 2, "b.i.d.": 2, "tid": 3, "t.i.d.": 3, "qid": 4, "q.i.d.": 4}  # the others: once a day


@dataclass(frozen=True)
class Mention:
    """A drug named in the quote, what the quote states of it, and where."""

    drug: str                      # the conversion's key: "dexamethasone", "fentanyl patch", or a form-less "fentanyl"
    start: int
    end: int
    route: str | None = None       # po | iv, stated by the name or a route word beside it
    dose: tuple[float, str] | None = None
    per_day: float | None = None
    negated: bool = False


@lru_cache(maxsize=1)
def _names(group: str) -> tuple[tuple[str, str, str | None], ...]:
    """(name, drug key, route the name states) of every drug of ``group``, with the form-less names."""
    lex = L.drug_lexicon()
    drugs = lex.steroids if group == "steroids" else lex.opioids
    out: list[tuple[str, str, str | None]] = [(n, d.key, None) for d in drugs for n in d.names]
    out += [(n, d.key, r) for d in drugs for r, ns in d.routed for n in ns]
    if group == "opioids":
        out += [(n, key, None) for key, ns in lex.forms for n in ns]
    return tuple(out)


def _route_at(text: str, a: int, b: int) -> str | None:
    for route, words in L.drug_lexicon().routes:
        if L.term_spans(text[a:b], words):
            return route
    return None


def _unit_amount(number: float, unit: str, rate: bool) -> tuple[float, str]:
    u = U.normalise_unit(unit)
    u = {"milligram": "mg", "milligrams": "mg", "microgram": "ug", "micrograms": "ug", "gram": "g", "grams": "g"}.get(u, u)
    return number, u + ("/hr" if rate else "")


def mentions(text: str, qs: int, qe: int, group: str, masks: tuple[str, ...] = ()) -> list[Mention]:
    """Every drug of ``group`` the quote ``text[qs:qe]`` names, with the dose, doses a day and route stated for it."""
    names = _names(group)
    by_name = {n.lower(): (k, r) for n, k, r in names}
    spans = L.term_spans(text[qs:qe], tuple(n for n, _, _ in names), masks)
    found = [(qs + a, qs + b, *by_name[" ".join(text[qs + a:qs + b].lower().split())]) for a, b in spans]
    doses = [(m.start(), m.end(), float(m.group(1)), m.group(2), bool(m.group(3))) for m in DOSE.finditer(text, qs, qe)]
    owner: dict[int, int] = {}  # dose index -> mention index
    for di, (a, b, *_rest) in enumerate(doses):
        nxt = next((mi for mi, f in enumerate(found) if f[0] >= b), None)
        if nxt is not None and OF_GAP.match(text[b:found[nxt][0]]):
            owner[di] = nxt  # "7.96 mg of dexamethasone"
    for mi, (s, e, *_rest) in enumerate(found):
        if mi in owner.values():
            continue
        for di, (a, b, *_r) in enumerate(doses):
            if di in owner or a < e:
                continue
            if AFTER_GAP.match(text[e:a]) and not any(e <= f[0] < a for f in found):
                owner[di] = mi  # "prednisone 40 mg"
            break
    out = []
    for mi, (s, e, key, route) in enumerate(found):
        mine = [di for di, m in owner.items() if m == mi]
        dose = _unit_amount(*doses[mine[0]][2:]) if mine else None
        end = max([e] + [doses[di][1] for di in mine])
        later = [f[0] for f in found if f[0] >= e] + [doses[di][0] for di, m in owner.items() if m != mi and doses[di][0] >= end]
        stop = min(later + [qe])
        before = max([qs] + [f[1] for f in found if f[1] <= s] + [doses[di][1] for di in owner if doses[di][1] <= s])
        route = route or _route_at(text, max(before, s - 25), s) or _route_at(text, e, stop)
        freq = FREQUENCY.search(text, end, stop)
        out.append(Mention(key, s, e, route, dose, _per_day(freq) if freq else None, T.negated(text, s, e)))
    return out


def _per_day(m: re.Match[str]) -> float:
    n = m.group("n") or m.group("n2")
    if n:
        return float(WORD_COUNT.get(n.lower(), n))
    if m.group("w"):
        return float(WORD_COUNT[m.group("w").lower()])
    hours = m.group("h") or m.group("q")
    if hours:
        return 24.0 / float(hours) if float(hours) else 0.0
    return float(ABBR.get((m.group("abbr") or "").lower(), 1))


def _same_dose(dose: tuple[float, str], value: Any, unit: Any) -> bool:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    want = U.normalise_unit(str(unit or ""))
    if "/" in dose[1] and "/" not in want:
        dose = (dose[0], dose[1].split("/")[0])  # a patch recorded in mcg: the calculator reads it as mcg/hr
    if dose[1] == want or dose[1].replace("/hr", "/h") == want.replace("/hr", "/h"):
        return T.same_number(dose[0], number)
    try:
        kind = "patch_rate" if "/" in dose[1] else "drug_mass"
        return abs(U.to_canonical(kind, dose[0], dose[1]) - U.to_canonical(kind, number, str(unit))) <= 1e-9 * max(1.0, number)
    except (U.UnknownUnit, KeyError):
        return False


@lru_cache(maxsize=1)
def steroid_routes() -> dict[str, dict[str, float]]:
    """``{generic: {route: equivalent mg}}`` of the steroid conversion's table."""
    from medcalc_maintained.calculators.dosing_dates import _STEROID_EQUIVALENT_MG

    out: dict[str, dict[str, float]] = {}
    for key, eq in _STEROID_EQUIVALENT_MG.items():
        generic, route = key.rsplit(" ", 1)
        out.setdefault(generic, {})[route] = eq
    return out


def _steroid(value: Any) -> tuple[str, str] | None:
    """(generic, route) of a steroid as the conversion names it ("MethylPrednisoLONE IV")."""
    parts = " ".join(str(value).strip().lower().split()).rsplit(" ", 1)
    return (parts[0], parts[1]) if len(parts) == 2 and parts[0] in steroid_routes() else None


def _route_verdict(m: Mention, generic: str, route: str, quote: str) -> Verdict | None:
    """Why the mention's route does not fit the input's, or ``None`` (with the reason for no route in :func:`_no_route`)."""
    if m.route is not None and m.route != route:
        return _no("route-mismatch", f"{quote!r} states {generic} {m.route.upper()}, not {route.upper()}")
    return None


def _no_route(generic: str) -> str:
    eqs = steroid_routes()[generic]
    return (f"; the quote states no route, and the conversion gives {generic} the same equivalent ({next(iter(eqs.values())):g} "
            f"mg) by every route it tabulates ({', '.join(r.upper() for r in eqs)})")


def _route_free(generic: str) -> bool:
    return len(set(steroid_routes()[generic].values())) == 1


def _masks(name: str) -> tuple[str, ...]:
    entry = L.lexicon_entry(name)
    return entry.masks if entry else ()


def steroid_verdict(value: Any, text: str, qs: int, qe: int) -> Verdict:
    """``input steroid`` = ``[drug with route, dose, unit]`` against the quote (see the module docstring)."""
    quote = text[qs:qe]
    if not (isinstance(value, (list, tuple)) and len(value) == 3 and _steroid(value[0])):
        return _no("value-not-printed", f"{value!r} is no [steroid with route, dose, unit] the conversion tabulates")
    generic, route = _steroid(value[0])  # type: ignore[misc]
    named = [m for m in mentions(text, qs, qe, "steroids", _masks("input steroid")) if m.drug == generic]
    if not named:
        return _no("not-named", f"{quote!r} names no {generic}")
    failure: Verdict | None = None
    for m in named:
        if m.negated:
            failure = failure or _no("negated", f"{text[m.start:m.end]!r} is negated in {quote!r}")
        elif m.dose is None:
            failure = failure or _no("value-not-printed", f"{quote!r} prints no dose of {text[m.start:m.end]!r}")
        elif not _same_dose(m.dose, value[1], value[2]):
            rule = "unit-mismatch" if T.same_number(m.dose[0], value[1]) else "value-not-printed"
            failure = failure or _no(rule, f"{quote!r} doses {generic} at {m.dose[0]:g} {m.dose[1]}, not {value[1]} {value[2]}")
        elif (bad := _route_verdict(m, generic, route, quote)) is not None:
            failure = failure or bad
        elif m.route is None and not _route_free(generic):
            failure = failure or _no("route-not-stated", f"{quote!r} states no route of {generic}, whose equivalent "
                                                         "depends on it")
        else:
            return _ok(f"{quote!r} doses {text[m.start:m.end]!r} at {value[1]} {value[2]}"
                       + ("" if m.route else _no_route(generic)))
    assert failure is not None
    return failure


def target_verdict(value: Any, text: str, qs: int, qe: int) -> Verdict:
    """``target steroid`` against the quote: the steroid named right after a cue of conversion."""
    quote = text[qs:qe]
    want = _steroid(value)
    if want is None:
        return _no("value-not-printed", f"{value!r} is no steroid with route the conversion tabulates")
    targets = [m for m in mentions(text, qs, qe, "steroids", _masks("target steroid"))
               if TARGET_CUE.search(text[max(qs, m.start - 60):m.start])]
    if not targets:
        return _no("not-named", f"{quote!r} names no steroid it converts to")
    m = targets[0]
    if m.drug != want[0]:
        return _no("value-not-printed", f"{quote!r} converts to {text[m.start:m.end]!r}, not {want[0]}")
    if (bad := _route_verdict(m, want[0], want[1], quote)) is not None:
        return bad
    if m.route is None and not _route_free(want[0]):
        return _no("route-not-stated", f"{quote!r} states no route of {want[0]}, whose equivalent depends on it")
    return _ok(f"{quote!r} converts to {text[m.start:m.end]!r}" + ("" if m.route else _no_route(want[0])))


def opioid_key(name: Any) -> str:
    from medcalc_maintained.calculators.dosing_dates import _opioid_key

    return _opioid_key(str(name))


def opioid_value(entities: Mapping[str, Any]) -> list[list[Any]] | None:
    """The ``opioids`` input of an MME row: ``[drug, dose, unit, doses per day]`` per ``<Opioid> Dose`` entity
    (doses per day ``None`` where its ``... Dose Per Day`` is missing); ``None`` when the row doses none."""
    out = []
    for key, raw in entities.items():
        k = str(key).strip()
        if not k.lower().endswith(" dose") or k.lower().endswith(" dose per day"):
            continue
        per = next((v for kk, v in entities.items() if str(kk).strip().lower() == k.lower() + " per day"), None)
        dose = raw if isinstance(raw, (list, tuple)) and len(raw) == 2 else [raw, None]
        n = per[0] if isinstance(per, (list, tuple)) and per else per
        out.append([k[: -len(" dose")], dose[0], dose[1], n])
    return out or None


def _item_verdict(item: Any, ms: list[Mention], text: str, quote: str) -> Verdict | None:
    """Why one ``[drug, dose, unit, doses per day]`` of the list is not stated by the quote, or ``None``."""
    if not (isinstance(item, (list, tuple)) and len(item) == 4):
        return _no("value-not-printed", f"{item!r} is no [drug, dose, unit, doses per day]")
    key, dose, unit, per_day = opioid_key(item[0]), item[1], item[2], item[3]
    named = [m for m in ms if m.drug == key]
    if not named:
        if key.startswith("fentanyl") and any(m.drug == "fentanyl" for m in ms):
            return _no("route-not-stated", f"{quote!r} names fentanyl without its form, on which its conversion "
                                           f"depends (the input is {key})")
        return _no("not-named", f"{quote!r} names no {key}")
    failure: Verdict | None = None
    for m in named:
        shown = text[m.start:m.end]
        if m.negated:
            failure = failure or _no("negated", f"{shown!r} is negated in {quote!r}")
        elif m.dose is None:
            failure = failure or _no("value-not-printed", f"{quote!r} prints no dose of {shown!r}")
        elif not _same_dose(m.dose, dose, unit):
            rule = "unit-mismatch" if T.same_number(m.dose[0], dose) else "value-not-printed"
            failure = failure or _no(rule, f"{quote!r} doses {shown!r} at {m.dose[0]:g} {m.dose[1]}, not {dose} {unit}")
        elif m.per_day is None:
            failure = failure or _no("frequency-not-stated", f"{quote!r} does not say how often a day {shown!r} is taken")
        elif not T.same_number(m.per_day, per_day):
            failure = failure or _no("value-not-printed", f"{quote!r} gives {shown!r} {m.per_day:g} times a day, not "
                                                          f"{per_day}")
        elif m.route == "iv" and not key.startswith("fentanyl"):
            failure = failure or _no("route-mismatch", f"{quote!r} gives {shown!r} parenterally; the conversion factor "
                                                       f"of {key} is for oral doses")
        else:
            return None
    return failure


def opioid_verdict(value: Any, text: str, qs: int, qe: int) -> Verdict:
    """``opioids`` = ``[[drug, dose, unit, doses per day], ...]`` against the quote (see the module docstring)."""
    quote = text[qs:qe]
    if not isinstance(value, (list, tuple)) or not value:
        return _no("value-not-printed", f"{value!r} lists no dosed opioid")
    ms = mentions(text, qs, qe, "opioids", _masks("opioids"))
    for item in value:
        bad = _item_verdict(item, ms, text, quote)
        if bad is not None:
            return bad
    listed = {opioid_key(i[0]) for i in value}
    extra = [m for m in ms if m.dose is not None and not m.negated and m.drug not in listed]
    if extra:
        return _no("unlisted-drug", f"{quote!r} doses {text[extra[0].start:extra[0].end]!r}, which the list lacks")
    return _ok(f"{quote!r} states the dose and doses a day of each of " + ", ".join(str(i[0]) for i in value))


def dose_verdict(spec: InputSpec, value: Any, text: str, qs: int, qe: int) -> Verdict:
    """The verdict of a dosed-drug input (``spec.accessor`` in :data:`ACCESSORS`, or a :data:`TARGET_INPUTS` name)."""
    if spec.name.lower() in TARGET_INPUTS:
        return target_verdict(value, text, qs, qe)
    if spec.accessor == "steroid_dose":
        return steroid_verdict(value, text, qs, qe)
    return opioid_verdict(value, text, qs, qe)


def read_value(spec: InputSpec, text: str, qs: int, qe: int) -> Any:
    """The value of a dosed-drug input the quote states (the note's reading), or ``None`` when it states none whole."""
    if spec.accessor == "steroid_dose":
        for m in mentions(text, qs, qe, "steroids", _masks("input steroid")):
            if m.dose is None or m.negated or m.drug not in steroid_routes():
                continue
            routes = steroid_routes()[m.drug]
            route = m.route if m.route in routes else (next(iter(routes)) if _route_free(m.drug) and m.route is None else None)
            if route is not None:
                return [f"{m.drug} {route}".title().replace(" Iv", " IV").replace(" Po", " PO"), m.dose[0], m.dose[1]]
        return None
    if spec.accessor == "opioid_list":
        ms = [m for m in mentions(text, qs, qe, "opioids", _masks("opioids")) if m.dose is not None and not m.negated]
        if not ms or any(m.per_day is None or m.drug == "fentanyl" for m in ms):
            return None
        return [[m.drug, *m.dose, m.per_day] for m in ms if m.dose is not None]
    return None
