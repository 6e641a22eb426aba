"""The evidence verifier's reading of a number: is the recorded value printed in the quote, attributed to the
input (not another quantity, a reference bound, a denominator, a date, a change or a bound; which quantity a number
belongs to is :mod:`.evidence_owner`'s), in a unit that fits it (or converts to the recorded one: :mod:`.evidence_units`),
at the time the definition asks for (see :mod:`medcalc_maintained.calculators.evidence` for the whole verifier)."""

from __future__ import annotations

import re
from typing import Any, Mapping

from medcalc_maintained.calculators import evidence_owner as OW
from medcalc_maintained.calculators import evidence_precision as EP
from medcalc_maintained.calculators import evidence_units as EU
from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_attribution as NA
from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.inputs import InputSpec
from medcalc_maintained.calculators.verdict import Verdict, no, ok, timepoint_stated
from medcalc_maintained.core import units as U


def number_verdict(spec: InputSpec, keys: set[str], inp: Mapping[str, Any], text: str, qs: int, qe: int,
                   aimed: bool = False) -> Verdict:
    """``text[qs:qe]`` is the quote; ``text`` is the note (or the quote alone), read around it. ``aimed``: the calculator
    asks for a value aimed at (the target weight's target BMI), so a target is the input, not another quantity."""
    value, unit = inp.get("value"), inp.get("unit")
    quote = text[qs:qe]
    hits = [(qs + s, qs + e, False) for s, e, v in T.numbers(quote) if T.same_number(v, value)]
    hits += [(qs + s, qs + e, False) for s, e in T.spelled_numbers(quote, value)]
    if spec.kind == "count_per_ul":  # "127.000/µL", "167 000": a thousands separator in a count, not a decimal point
        hits += [(qs + s, qs + e, False) for s, e, _ in T.numbers(quote)
                 if T.THOUSANDS_DOT.match(quote[s:e]) and T.same_number(float(quote[s:e].replace(".", "")), value)]
        hits += [(qs + m.start(), qs + m.end(), False) for m in T.SPACED_THOUSANDS.finditer(quote)  # "platelets of 167 000"
                 if not T.FLAT_EXPONENT_GROUP.search(m.group(0)) and T.same_number(float(m.group(0).replace(" ", "")), value)
                 and (qs + m.start(), qs + m.end(), False) not in hits]
    hits += [(qs + s, qs + e, True) for s, e, v in T.numbers(quote)
             if not T.same_number(v, value) and (EU.converts_to(spec, v, T.unit_after(quote, e)[1], value, unit)
                                                 or EU.urea_states_bun(spec, v, T.unit_after(quote, e)[1], value, unit))]
    if not hits:
        return _none_stated(spec, value, text, qs, qe) or no("value-not-printed", f"{value!r} is not printed in {quote!r}")
    sa, _ = T.sentence(text, qs)
    _, sb = T.sentence(text, max(qs, qe - 1))
    mentions = L.mentions(text, sa, sb)
    first_failure: Verdict | None = None
    for s, e, converted in hits:
        v = _one_number(spec, keys, inp, text, qs, qe, s, e, mentions, value, unit, converted, aimed)
        if v.supports and not timepoint_stated(inp) and not (spec.name.lower() == "age" and AGE_WORDS.match(text[e:e + 12])):
            earlier = _earlier_value(spec, keys, text, qs, value, unit)
            if earlier is not None:
                return no("timepoint", f"the note states {spec.name} {text[earlier[0]:earlier[1]]!r} before this value "
                                        f"({text[slice(*T.sentence(text, earlier[0]))].strip()[:120]!r}): the first value "
                                        "is the presentation's, and the record does not say why this later one")
        if v.supports:
            return v
        first_failure = first_failure or v
    assert first_failure is not None
    return first_failure


# what makes a denial say less than "none": of an excess ("denies heavy alcohol use", "no alcohol abuse", "does not drink
# regularly"), of a consequence ("no alcohol-related admissions", "no alcohol withdrawal") or of a test ("no alcohol was
# detected in his blood")
NOT_NONE = re.compile(r"\b(?:abuse|misuse|disorder|dependen\w*|alcoholism|alcoholic|binge|heav(?:y|ily)|excess\w*|significant\w*|"
                      r"regular\w*|daily|much|frequent\w*|habitual\w*|chronic\w*|problem\w*|more than|over|beyond|withdrawal|"
                      r"intoxicat\w*|related|induced|hepatitis|liver|cirrhosis|pancreatitis|poisoning|level|levels|blood|serum|"
                      r"screen\w*|tests?|detected|found)\b|^-", re.I)


# what may stand between a negation and the name it negates in a denial of use ("denies any tobacco or alcohol
# consumption", "no history of alcohol use", "does not use alcohol"): no other noun or clause ("no complaints and ...")
NONE_BETWEEN = re.compile(r"(?:\s|,|\b(?:any|the|his|her|their|current(?:ly)?|history|of|or|and|nor|tobacco|smoking|cigarettes?|"
                          r"drugs?|illicit|recreational|illegal|substances?|use[sd]?|using|consumes?|consum(?:ed|ing)|takes?|"
                          r"taking|have|has|had|to)\b)*", re.I)


def _none_stated(spec: InputSpec, value: Any, text: str, qs: int, qe: int) -> Verdict | None:
    """A count of none (``value`` 0) of an input whose absence the lexicon knows how to state (its ``negating`` terms:
    "denies alcohol") where the quote states none: a negating term, or a name of the input that is no verb ("drinks") negated in
    its clause by a denial of use (:data:`NONE_BETWEEN`: "he denies any tobacco or alcohol consumption"); never a denial of an excess, a consequence or a test (:data:`NOT_NONE`:
    "denies heavy alcohol use" leaves some drinking) nor a relative's ("his father does not drink"). ``None`` when the quote states no such thing."""
    entry = L.lexicon_entry(spec.name)
    if spec.accessor != "number" or isinstance(value, bool) or value != 0 or entry is None or not entry.negating:
        return None
    quote = text[qs:qe]
    said = [(qs + a, qs + b, qs + a) for a, b in L.term_spans(quote, entry.negating)]
    for a, b in L.term_spans(quote, entry.names, entry.masks, entry.patterns):
        ca, _ = T.clause(text, qs + a)
        cues = list(T.NEGATION_BEFORE.finditer(text, ca, qs + a))
        if cues and T.negated(text, qs + a, qs + b) and not re.match(r"drink", quote[a:b], re.I) \
                and NONE_BETWEEN.fullmatch(text, cues[-1].end(), qs + a):
            said.append((qs + a, qs + b, cues[-1].start()))
    for a, b, lead in said:
        _, cb = T.clause(text, a)
        after = text[b:min(cb, b + 30)]
        if not NOT_NONE.search(text[lead:b]) and not NOT_NONE.search(after) and not T.family(text, lead):
            return ok(f"{text[lead:b]!r} states no {spec.name}: {value}")
    return None


AGE_WORDS = re.compile(r"^\s*-?\s*(?:years?|yrs?|y)[\s-]*old\b|^-?\s*(?:yo|y/o|y\.o\.)\b", re.I)


def _one_number(spec: InputSpec, keys: set[str], inp: Mapping[str, Any], quote: str, qs: int, qe: int, s: int, e: int,
                mentions: list[tuple[int, int, str]], value: Any, unit: Any, converted: bool = False,
                aimed: bool = False) -> Verdict:
    printed = quote[s:e]
    age_of_patient = spec.name.lower() == "age" and AGE_WORDS.match(quote[e:e + 12]) is not None
    for m in T.DATE.finditer(quote):
        if m.start() <= s and e <= m.end():
            return no("date-part", f"{printed} is part of the date {m.group(0)!r}")
    dbp = spec.kind == "pressure" and "diastolic" in spec.name.lower()
    before = quote[max(0, s - 3):s]
    paired = NA.slash_pair(quote, s, mentions)
    if paired is not None:
        key = next((m[2] for m in paired if m[2] in keys), None)
        if key is None:
            return no("wrong-quantity", f"{printed} pairs with {quote[paired[0][0]:paired[0][1]]!r} in the slash list of "
                                         f"{quote[slice(*T.sentence(quote, s))].strip()[:160]!r}, not {spec.name}")
        return _after_owner(spec, inp, quote, qs, qe, s, e, printed, paired[0][0], unit, converted, age_of_patient)
    if (placed := _placement_problem(quote, s, e, printed, before, dbp)) is not None:
        return placed
    owner, at = OW.number_owner(spec, quote, s, e, mentions, keys)
    shown, norm = T.unit_after(quote, e)
    owner, at = OW.reread_owner(spec, quote, s, e, mentions, keys, owner, at, norm, value)
    number = next((v for _, _, v in T.numbers(printed)), None)
    urea_mass = converted and number is not None and not EU.converts_to(spec, number, shown, value, unit) \
        and EU.urea_states_bun(spec, number, shown, value, unit)
    if owner in EU.UREA_KEYS and "urea nitrogen" in spec.name.lower() and (norm in EU.MOLAR or urea_mass):
        owner = next(iter(keys))  # urea 11.4 mmol/L is BUN 11.4 mmol/L (one nitrogen pair per molecule); urea 18 mg/dL is BUN 8.4
    elif urea_mass:
        return no("wrong-quantity", f"{printed} {shown} converts to {spec.name} {value} only as a urea, and the quote names "
                                    "it otherwise")
    if spec.name.lower() == "age" and (T.family(quote, s) or EP.other_person(quote, s) or _relative_after_age(quote, e)):
        return no("family-history", f"{printed} is a relative's age in {quote[slice(*T.clause(quote, s))].strip()[:160]!r}")
    lead = quote[max(T.clause(quote, s)[0], s - 40):s]
    if spec.name.lower() == "age" and age_of_patient and T.AGE_AT.search(lead) \
            and not T.PRESENTED.search(quote, *T.clause(quote, s)):
        age_of_patient = False  # "when she was 38 years old", "at 55 years old": the age at an event
    if spec.name.lower() == "age" and not age_of_patient and (T.AGE_AT_EVENT.search(lead) or (
            T.AGE_AT.search(lead) and re.match(r"\s*(?:years?|yrs?)\b", quote[e:e + 8], re.I)
            and not T.PRESENTED.search(quote, *T.clause(quote, s)))) and not timepoint_stated(inp):
        return no("timepoint", f"{printed} is the age at an event ({lead.strip()!r} {printed}), not the patient's age now")
    if (bounded := _bound_problem(spec, quote, s, e, printed, lead, aimed)) is not None:
        return bounded
    birth = T.BIRTH_CUE.search(quote, *T.clause(quote, s)) if spec.kind == "mass" else None
    if birth is not None and not timepoint_stated(inp):
        return no("timepoint", f"{printed} is a weight at birth ({birth.group(0)!r})")
    other = _another_reading(spec, quote, s, e, printed, lead)
    if other is not None:
        return other
    if (why := EP.other_quantity(spec.kind, quote, s, e, at)) is not None:
        return no("wrong-quantity", why)
    load = next((m for m in T.LOAD_CUE.finditer(quote, *T.clause(quote, s)) if not _leads_a_later_glucose(quote, m, e)),
                None) if "glucose" in spec.name.lower() else None
    if load is not None:
        return no("wrong-quantity", f"{printed} is a glucose after a load or a meal ({load.group(0)!r}), not {spec.name}")
    if owner == NA.RESPECTIVELY_UNPAIRED:
        return no("wrong-quantity", f"{printed} is in a 'respectively' list whose names and numbers do not pair "
                                     f"one to one: {quote[slice(*T.sentence(quote, s))].strip()[:160]!r}")
    if owner is None:
        return no("bare-number", f"{printed} in {quote!r} is attributed to no named quantity")
    if owner not in keys:
        term = repr(next((quote[a:b] for a, b, k in mentions if a == at), owner))
        if not any(a == at and k == owner for a, _, k in mentions):
            term += " of a list of urine results"  # a name re-read as the urine's (evidence_owner.number_owner)
        return no("wrong-quantity", f"{printed} is the {term} of {quote[slice(*T.sentence(quote, s))].strip()[:160]!r}, "
                                     f"not {spec.name}")
    if at is not None and at < s and (rank := T.PERCENTILE_BETWEEN.search(quote, at, s)) is not None:
        return no("wrong-quantity", f"{printed} is a {rank.group(0)!r} of {spec.name}, not its value")
    if at is None or not (qs <= at < qe):
        return no("bare-number", f"{printed} is the {spec.name} of the note, but the quote "
                                  f"{quote[qs:qe]!r} does not name it")
    if dbp and re.search(r"\d\s*/\s*$", before) is None and re.search(r"^\s*/\s*\d", quote[e:e + 3]):
        return no("wrong-quantity", f"{printed} is the systolic pressure of {quote[s:e + 6].strip()!r}, not {spec.name}")
    verdict = _after_owner(spec, inp, quote, qs, qe, s, e, printed, at, unit, converted, age_of_patient)
    if urea_mass and verdict.supports:  # say the reading, not "BUN 18 is printed" for a BUN of 8.4
        return ok(f"{spec.name} {value} {unit} is the urea {printed} {shown} x 28.01/60.06 (its nitrogen) in {quote[qs:qe]!r}")
    return verdict


def _placement_problem(quote: str, s: int, e: int, printed: str, before: str, dbp: bool) -> Verdict | None:
    """Why the number at ``quote[s:e]`` is no value by its place: a denominator (``8/15``, unless the input is a
    diastolic pressure, the denominator of a blood pressure; ``out of 15``), in a reference range or an endpoint of a
    range; ``None`` when none."""
    if re.search(r"\d\s*/\s*$", before) and not dbp:
        return no("denominator", f"{printed} is the denominator of {quote[max(0, s - 8):e].strip()!r}")
    if re.search(r"\bout of\s*$", quote[max(0, s - 8):s], re.I):
        return no("denominator", f"{printed} is the denominator of {quote[max(0, s - 12):e].strip()!r}")
    for m in re.finditer(r"[(\[][^()\[\]]*[)\]]", quote):
        if m.start() < s and e <= m.end():
            lead = quote[m.start():s]
            in_range = any(r.start() <= s and e <= r.end() for r in T.RANGE.finditer(quote, m.start(), m.end()))
            if in_range or T.REFERENCE_CUE.search(lead):
                return no("reference-bound", f"{printed} lies in the reference range {m.group(0)!r}")
    for m in T.RANGE.finditer(quote):
        if m.start() <= s and e <= m.end():
            if T.REFERENCE_CUE.search(quote[max(0, m.start() - 25):m.start()]):
                return no("reference-bound", f"{printed} bounds the reference range {m.group(0)!r}")
            return no("range-endpoint", f"{printed} is an endpoint of the range {m.group(0)!r}, not one value")
    return None


def _bound_problem(spec: InputSpec, quote: str, s: int, e: int, printed: str, lead: str, aimed: bool) -> Verdict | None:
    """Why the number at ``quote[s:e]`` (``lead``: its clause's words before it) is no measured value: a bound before
    or after it, a percentile or a z-score, a value aimed at, a signed change; ``None`` when none."""
    if T.BOUND_CUE.search(lead[-14:]):
        return no("reference-bound", f"{printed} is a bound ({lead.strip()[-14:]!r} {printed}), not a measured value")
    shown_here, norm_here = T.unit_after(quote, e)
    after_unit = quote[e:][quote[e:].find(shown_here) + len(shown_here):] if norm_here and shown_here \
        and shown_here in quote[e:e + 40] else quote[e:]
    if T.BOUND_AFTER.match(after_unit[:40]):
        return no("reference-bound", f"{printed} is a bound ({quote[s:e + 40].strip()!r}), not a measured value")
    if T.PERCENTILE_AFTER.match(quote[e:e + 30]) or T.PERCENTILE_AFTER.match(after_unit[:30]):
        return no("wrong-quantity", f"{printed} ranks {spec.name} ({quote[s:e + 20].strip()!r}), not its value")
    if T.TARGET_CUE.search(lead) and not aimed:
        return no("wrong-quantity", f"{printed} is a value aimed at ({lead.strip()!r} {printed}), not a measured one")
    if T.SIGNED.search(quote[max(0, s - 3):s]) and not re.search(r"\d\s*$", quote[max(0, s - 6):s - 1]) \
            and not T.DASH_SEPARATOR.search(quote[max(0, s - 6):s]):
        return no("wrong-quantity", f"{printed} is signed ({quote[max(0, s - 3):e].strip()!r}): a change, not a level")
    return None


def _relative_after_age(quote: str, e: int) -> bool:
    """Whether the age ending at ``e`` is a relative's named right after it ("her 45-year-old sister")."""
    m = AGE_WORDS.match(quote[e:e + 12])
    return m is not None and re.match(r"\s*(?:[\w-]+\s+)?", quote[e + m.end():]) is not None and bool(
        T.FAMILY.match(quote[e + m.end():].lstrip()) or re.match(r"\s*[\w-]+\s+(?=\w)", quote[e + m.end():])
        and T.FAMILY.match(re.sub(r"^\s*[\w-]+\s+", "", quote[e + m.end():])))


def _another_reading(spec: InputSpec, quote: str, s: int, e: int, printed: str, lead: str) -> Verdict | None:
    """A number of the input's kind that measures something else: a mass lost or gained ("a 30 lb. weight loss", "lost
    30 lb"), an object's mass ("lift a 2.3 kg weight"), a saturation on oxygen, a count per another period than the
    input's ("one beer a day" is no count per week), a change of a level ("an increase of 2", "sodium rose 8 mEq/L");
    ``None`` when it is none of these."""
    ca, cb = T.clause(quote, s)
    shown, _ = T.unit_after(quote, e)
    after = quote[e:e + 40]
    rest = after[after.find(shown) + len(shown):] if shown and shown in after else after
    if spec.kind == "mass" and (T.MASS_CHANGE.search(quote, max(ca, s - 30), min(cb, e + 30)) or T.MASS_CHANGE_AFTER.match(rest)):
        return no("wrong-quantity", f"{printed} is a loss or a gain of weight, not the weight")
    if spec.kind == "mass" and (T.OBJECT_MASS.match(rest) and re.search(r"\b(?:an?|the)\s+$", lead)
                                or T.LIFTING.search(quote, max(ca, s - 40), s)):
        return no("wrong-quantity", f"{printed} is the mass of an object ({quote[max(ca, s - 30):e + 12].strip()!r}), "
                                    "not the patient's weight")
    if "saturation" in spec.name.lower() and T.ON_OXYGEN.search(quote[e:cb]):
        return no("wrong-quantity", f"{printed} is a saturation on supplemental oxygen, not on room air")
    per = re.search(r"\bper (day|week|month|year)$", spec.name, re.I)
    period = T.PER_PERIOD.search(quote, e, min(cb, e + 50)) if per else None
    if per and period and T.PERIODS[next(g for g in period.groups() if g).lower()] != per.group(1).lower():
        return no("wrong-quantity", f"{printed} is a count {period.group(0).strip()!r}, not {per.group(0)!r} "
                                    f"({quote[max(ca, s - 20):period.end()].strip()!r})")
    if T.CHANGE_CUE.search(lead) or T.CHANGE_AFTER.match(rest):
        return no("wrong-quantity", f"{printed} is a change ({quote[max(ca, s - 30):e + 20].strip()!r}), not the level of "
                                    f"{spec.name}")
    return None


# a load cue that names the glucose value after it ("2 hour glucose 378mg/dL", "2-h plasma glucose of 378")
LOAD_NAMES_NEXT = re.compile(r"\s*(?:post-?load\s+)?(?:plasma\s+|blood\s+|serum\s+)?(?:glucose|sugar|PG|BG)\b\s*(?:level\s+)?"
                             r"(?:of|was|:|=)?\s*\d", re.I)


def _leads_a_later_glucose(quote: str, load: re.Match[str], e: int) -> bool:
    """Whether a load cue after the number ending at ``e`` leads another glucose value of its list ("FG 210mg/dL, and
    2 hour glucose 378mg/dL": the 2 hours are the 378's, not the 210's); a cue after the number that names no later
    value ("glucose 210 mg/dL 2 hours after a meal") dates the number."""
    return load.start() >= e and LOAD_NAMES_NEXT.match(quote, load.end()) is not None


def _after_owner(spec: InputSpec, inp: Mapping[str, Any], quote: str, qs: int, qe: int, s: int, e: int, printed: str,
                 at: int, unit: Any, converted: bool, age_of_patient: bool) -> Verdict:
    """The checks of a number once it is attributed to the input (named at ``at``): its unit and its time."""
    shown, norm = T.unit_after(quote, e)
    if norm == "mg" and spec.kind and EU.per_deciliter_shared(quote, e):
        shown, norm = f"{shown} (per deciliter, as the list's last value)", U.normalise_unit("mg/dL")
    if norm is None and shown and T.POWER_OF_TEN.match(shown) and not EU.unit_reading_declared(inp, U.normalise_unit(shown)):
        return no("unit-mismatch", f"{printed} {shown}: a power of ten no unit table knows; the record does not say how "
                                   "it reads it")
    if norm is not None and (converted or EU.unit_reading_declared(inp, norm)):
        norm = None  # the record says how it reads this printed unit ("5.3 g/l" read as g/dL) and why
    if norm is not None:
        if spec.accessor == "quantity" and spec.kind and norm not in U.known_units(spec.kind) and spec.kind != "rate":
            return no("unit-mismatch", f"{printed} {shown} is not a unit of {spec.kind} ({', '.join(spec.units)})")
        if unit is not None and str(unit).strip() and spec.kind and U.normalise_unit(str(unit)) in U.known_units(spec.kind) \
                and not U.same_unit(spec.kind, str(unit), norm) and spec.kind != "rate":
            return no("unit-mismatch", f"the quote prints {printed} {shown}, the record says {unit}")
    cue = _time_cue(quote, s, e, at)
    if cue is not None and not timepoint_stated(inp) and not age_of_patient:
        return no("timepoint", f"{printed} is dated {cue.group(0)!r}; the record does not say which time the "
                                "definition asks for and why this one")
    return ok(f"{spec.name} {printed}{(' ' + str(shown)) if norm else ''} is named and printed in {quote[qs:qe]!r}")


def _time_cue(quote: str, s: int, e: int, at: int) -> re.Match[str] | None:
    """The cue that dates the number at ``quote[s:e]`` (named at ``at``): in its sentence (a word of time near it, a
    strong or later cue anywhere), "initially ... but", the sentences before it, a transfer, a date near it; never a
    cue of another item of its list (:func:`_of_another_item`)."""
    a = max(0, min(at, s) - 30)
    sa, sb = T.sentence(quote, s)
    lo, hi = max(a, sa), min(sb, e + 40)

    def first(matches: Any) -> re.Match[str] | None:
        return next((m for m in matches if not _of_another_item(quote, m, s, e, at, sa, sb)), None)

    but = re.compile(r"\bbut\b", re.I).search(quote, e, sb)
    initially = T.INITIALLY_BUT.search(quote, sa, s) if but else None
    return first(m for m in T.TIME_CUE.finditer(quote, lo, hi) if not (m.start() > e and T.COMPARED.search(quote, e, m.start()))) \
        or first(T.STRONG_TIME_CUE.finditer(quote, sa, sb)) or first(T.LATER_CUE.finditer(quote, sa, sb)) or initially \
        or first(c for c in (T.context_cue(quote, sa, s),) if c is not None) or T.transfer_cue(quote, s) \
        or first(m for m in T.DATE.finditer(quote, lo, hi) if not (m.start() <= s < m.end())) \
        or first(EP.OTHER_ENCOUNTER.finditer(quote, sa, sb))


def _of_another_item(quote: str, m: re.Match[str], s: int, e: int, at: int, sa: int, sb: int) -> bool:
    """Whether a time cue dates another item of the number's list, not the number: it stands in parentheses that do
    not hold the number ("creatinine 2.3 (baseline 1.1), albumin 1.5"); it comes after the number and introduces another
    value ("glucose 17 mg/dL, baseline insulin 0.40"); or it comes after another item's value and another value follows
    it before the number's name ("bilirubin 2.4 - later 5.1 mg/dl, albumin 3.8"). A cue that leads the list dates all."""
    for p in T.PARENTHESES.finditer(quote, sa, sb):
        if p.start() <= m.start() < p.end() and not p.start() <= s < p.end():
            own = p.start() >= e and re.fullmatch(r"\s*(?:\S+\s*)?", quote[e:p.start()]) is not None
            dates = [(d.start(), d.end()) for d in T.DATE.finditer(quote, p.start(), p.end())]
            other_value = any(not any(x <= a < y for x, y in dates) for a, _, _ in T.numbers(quote, p.start(), p.end()))
            return not own or other_value  # "175 μmol/L (June 11)": the value's own aside dates it
    if any(p.start() <= m.start() < p.end() and p.start() <= s < p.end() for p in T.PARENTHESES.finditer(quote, sa, sb)):
        return False
    if m.start() >= e:
        return any(True for _ in T.numbers(quote, m.end(), min(len(quote), m.end() + 30)))
    name = min(at, s)
    led = not any(True for _ in T.numbers(quote, sa, m.start()))
    return m.end() <= name and not led and any(True for _ in T.numbers(quote, m.end(), name))


def _earlier_value(spec: InputSpec, keys: set[str], note: str, before: int, value: Any, unit: Any) -> tuple[int, int] | None:
    """Where the note states another value of the quantity before ``before`` (a number the verifier attributes to the
    input, neither the value nor the value in another unit), or ``None``: earlier in the paragraph of ``before``, or in
    an earlier paragraph when a later time lies between the two ("The following day ...", "tests were repeated",
    "transferred to our hospital"). Serial values of one paragraph are one encounter, whose first is the
    presentation's; a later paragraph may be another encounter, which the question may be about unless the note
    says it is a later one than a value already given (the scoring time is the first presentation)."""
    names = _terms(spec)
    start = note.rfind("\n", 0, before) + 1
    for s, e in L.term_spans(note[:before], *names):
        sa, sb = T.sentence(note, s)
        if sb > before or (s < start and not any(rx.search(note, sb, before) for rx in (T.LATER_CUE, T.DAY_CUE, T.TRANSFER))):
            continue
        mentions = L.mentions(note, sa, sb)
        for a, b, v in T.numbers(note[sa:sb]):
            a, b = sa + a, sa + b
            if T.same_number(v, value) or EU.converts_to(spec, v, T.unit_after(note, b)[1], value, unit):
                continue
            stub = {"name": spec.name, "value": v, "unit": None}
            if _one_number(spec, keys, stub, note, sa, sb, a, b, mentions, v, None).supports:
                return a, b
    return None


def _terms(spec: InputSpec) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(names, masks, patterns) of the input's lexicon entry."""
    entry = L.lexicon_entry(spec.name) or next((L.lexicon_entry(a) for a in spec.aliases if L.lexicon_entry(a)), None)
    return (entry.names, entry.masks, entry.patterns) if entry else ((), (), ())


def stated_value(spec: InputSpec, note: str) -> tuple[int, int] | None:
    """Where the note prints a value of a quantity (a number attributed to the input, or a range of it:
    "creatinine 10–15"), or ``None``."""
    keys = L.keys_of(spec.name) | {a.lower() for a in spec.aliases}
    by_sentence: dict[tuple[int, int], list[tuple[int, int, str]]] = {}  # the mentions of each sentence, once
    for s, e, v in T.numbers(note):
        span = T.sentence(note, s)
        if span not in by_sentence:
            by_sentence[span] = L.mentions(note, *span)
        mentions = by_sentence[span]
        stub = {"name": spec.name, "value": v, "unit": None}
        verdict = _one_number(spec, keys, stub, note, 0, len(note), s, e, mentions, v, None)
        if verdict.supports or (verdict.rule == "range-endpoint" and _stated_range(spec, keys, note, s, e, mentions)):
            return s, e
    return None


def _stated_range(spec: InputSpec, keys: set[str], note: str, s: int, e: int, mentions: list[tuple[int, int, str]]) -> bool:
    """Whether the number at ``s`` opens a range the note prints as the quantity's value ("creatinine 10–15"): the
    range attributed to the input, in no unit of another kind. A value printed as a range is stated, not absent."""
    rng = next((m for m in T.RANGE.finditer(note, T.sentence(note, s)[0]) if m.start() == s), None)
    if rng is None or OW.number_owner(spec, note, s, e, mentions, keys)[0] not in keys:
        return False
    _, norm = T.unit_after(note, rng.end())
    return norm is None or not spec.kind or norm in U.known_units(spec.kind)
