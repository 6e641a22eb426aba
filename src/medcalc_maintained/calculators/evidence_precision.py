"""Narrow readings that keep the evidence verifier (:mod:`.evidence`) from accepting near misses: another person named
in forms the family words of :mod:`.note_text` do not cover, negations written after a term as a heading's value or a
sign, a negation that is itself negated, and another encounter named without a possessive.

Another person
    a plural relative (``two sisters with hypertension``), a partner, a donor, a roommate or a contact as the
    experiencer (``her partner has diabetes``, ``the kidney donor had hypertension``, ``his roommate had a fever``), a
    condition that ``ran in the family``, ``in first-degree relatives`` or ``on the maternal side``, and a family heading
    ``FH:``; such a person who only brings, accompanies or lives with the patient is none (:data:`note_text.AGENT_RELATIVE`).
Negation after the term
    ``X (-)``, ``X - denies``, ``X was disproved``.
Double negation
    ``X could not be ruled out``, ``we cannot exclude X``: neither an assertion of X nor its negation.
Another encounter
    ``at a prior visit``, ``during an earlier admission`` (the possessive forms are :data:`note_text.TIME_CUE`'s).
"""

from __future__ import annotations

import re

from medcalc_maintained.calculators import note_text as T

# a person other than the patient, named in a form :data:`note_text.FAMILY` does not cover
OTHER_PERSON = re.compile(
    r"\b(?:(?:sick|household|close) contacts|brothers|sisters|aunts|uncles|cousins|grandparents|grandmothers|grandfathers|nieces|nephews|(?:his|her|their) twin|"
    r"step-?(?:mother|father|brother|sister|son|daughter)|half-(?:brother|sister)|[a-z]+-in-law|"
    r"(?<!is )(?<!was )(?:his|her|their|the patient's|the|a|a close|a sick|a household)\s+(?:[\w-]+\s+)?"
    r"(?:partner|donor|roommate|room-mate|flatmate|housemate|boyfriend|girlfriend|fianc[ée]e?|co-?worker|colleague|"
    r"classmate|family members|contacts?(?!\s+(?:dermatitis|lens|lenses|precautions|isolation|tracing|sports?))|neighbou?r)s?)\b", re.I)
# a relative named right after a condition: "heart failure ran in the family", "in first-degree relatives"
OTHER_PERSON_AFTER = re.compile(
    r"^\W{0,3}(?:[\w\-]+\W+){0,3}?(?:r[au]n(?:s|ning)? in (?:the|his|her|their) famil(?:y|ies)|in (?:(?:several|two|three|"
    r"multiple|many) )?(?:first|second)[- ]degree relatives?|on (?:the|his|her) (?:maternal|paternal|mother's|father's) "
    r"side)\b", re.I)
FAMILY_HEADING = re.compile(r"\s*(?:FH|FMH|Fam\.? Hx|family|(?:maternal |paternal )?(?:mother|father|brother|sister|sibling|parents?|"
                            r"son|daughter|grandmother|grandfather|aunt|uncle|cousin)s?)\s*(?::|[-–—]\s)", re.I)


def other_person(text: str, s: int, e: int | None = None) -> bool:
    """Whether another person than the patient (:data:`OTHER_PERSON`, :data:`OTHER_PERSON_AFTER`, a heading ``FH:``) is
    the experiencer of what is named at ``text[s:e]``; one who only brings or accompanies the patient is not."""
    ca, cb = T.clause(text, s)
    if e is not None and OTHER_PERSON_AFTER.match(text[e:cb]):
        return True
    sa = T.sentence(text, s)[0]
    if FAMILY_HEADING.match(text, sa) and text.find(":", sa, s) >= 0:
        return True
    return any(not T.AGENT_RELATIVE.search(text, max(ca, m.start() - 25), m.start())
               and not re.search(r"\b(?:with|by|to)\s+$", text[max(ca, m.start() - 8):m.start()], re.I)
               for m in OTHER_PERSON.finditer(text, ca, s))


# a negation written after the term: a sign, a heading's value after a dash, a disproof
NEGATION_AFTER = re.compile(
    r"^\s*(?:\(\s*[-−–]\s*\)|\(\s*(?:neg|negative|absent|none|nil)\s*\)|[-–—]\s*(?:denie[sd]|deny|neg|negative|absent|none|"
    r"nil)\b(?!\s+(?:for|of)\b))|^\W{0,3}(?:\w+\W+){0,5}?(?:was|were|is|are|has been|had been|been)\s+(?:\w+\s+)?(?:disproved|disproven|refuted)"
    r"\b|^\s*\?\s*(?:no|none|negative|denie[sd])\b|^\W{0,3}(?:was|were|is|are|has been|had been)\s+(?:never|not)\s+(?:reported|"
    r"described|mentioned|documented|complained of|a (?:feature|complaint|finding|symptom)|part of)\b", re.I)
# a short list whose heading value negates every item: "Fever, hemoptysis and weight loss: negative"
LIST_COLON_NEGATION = re.compile(r"^((?:\s*(?:,|\band\b|\bor\b|/)\s*[\w\- ]{1,30}?)+)\s*:\s*(?:negative|none|absent|nil|denied|no)\b",
                                 re.I)
NEGATION_BEFORE = re.compile(r"\b(?:disproved|disproven|refuted)\s+(?:the\s+)?(?:presence of\s+|diagnosis of\s+)?(?:an?\s+)?$",
                             re.I)


def negation_after(text: str, s: int, e: int) -> str | None:
    """A negation of the term at ``text[s:e]`` in a form :func:`note_text.negation_cue` does not read (``Hemoptysis
    (-)``, ``Hemoptysis - denies``, ``stroke was disproved``), or ``None``."""
    ca, cb = T.clause(text, s)
    m = NEGATION_AFTER.match(text[e:cb]) or NEGATION_AFTER.match(text[e:min(len(text), e + 12)])
    if m:
        return m.group(0).strip()
    listed = LIST_COLON_NEGATION.match(text[e:T.sentence(text, s)[1]])
    if listed and len(listed.group(1).split()) <= 12:
        return listed.group(0).strip()
    b = NEGATION_BEFORE.search(text, max(ca, s - 40), s)
    return b.group(0).strip() if b else None


# a negation that is itself negated: "could not be ruled out", "cannot exclude", "not excluded"
UNEXCLUDED = re.compile(
    r"\b(?:cannot|can['’]t|can not|could not|couldn['’]t|did not|didn['’]t|does not|doesn['’]t|was not|were not|is not|are not|has not|"
    r"have not|had not|not|unable to|impossible to|difficult to)\s+(?:be\s+|been\s+|have been\s+)?(?:\w+ly\s+)?"
    r"(?:ruled? out|ruling out|excluded?|excluding|disproved?|refuted?)\b", re.I)


def unexcluded(text: str, s: int, e: int) -> str | None:
    """The double negation in the clause of the term at ``text[s:e]`` (``a stroke could not be ruled out``, ``we could
    not exclude a stroke``): a possibility kept open, which states the term neither present nor absent; or ``None``."""
    ca, cb = T.clause(text, s)
    m = UNEXCLUDED.search(text, ca, cb)
    return m.group(0) if m else None


# another encounter, named without a possessive
OTHER_ENCOUNTER = re.compile(
    r"\b(?:at|on|during|in)\s+(?:an?|another|one|that|the|her|his|their)\s+(?:earlier|previous|prior|preceding|former|"
    r"last|subsequent|later|next)\s+(?:\w+\s+)?(?:visit|admission|hospitali[sz]ation|encounter|appointment|presentation|"
    r"evaluation|check-?up|stay)\b|\bafter (?:\w+\s+){0,2}(?:months?|years?) of (?:treatment|therapy|follow-?up)\b", re.I)


# a finding screened for: "a mammogram to screen for breast cancer" (:data:`note_text.WATCHED_FOR` reads the term right
# after "screened for")
SCREENED_FOR = re.compile(r"\bscreen(?:ed|ing)?\s+for\s+(?:[\w-]+\s+){0,2}$", re.I)


def screened_for(text: str, s: int) -> bool:
    """Whether the term at ``s`` is what a test screens for (``to screen for breast cancer``), not a finding."""
    return SCREENED_FOR.search(text, max(T.clause(text, s)[0], s - 50), s) is not None


# a number that is another quantity than the level named before it
MULTIPLE_AFTER = re.compile(r"^\s*(?:times|x|×|-?fold)\s+(?:the\s+)?(?:upper|normal|ULN|baseline|higher|greater|lower|above|"
                            r"(?:upper )?limit|reference)", re.I)
DOSE_CUE = re.compile(r"\b(?:replaced|repleted|replacement|supplemented|supplementation|given|received|administered|infused|"
                      r"infusion|bolus|dose|injected|injection|treated with|started on)\b", re.I)
AMOUNT_AFTER = re.compile(r"^\s*(?:mEq|meq|mmol|g|grams?|mg|units?|U|mL|ml)\b(?!\s*/)", re.I)
FLUID_BEFORE = re.compile(r"\b(?:pleural|peritoneal|ascitic|synovial|joint|drain|pericardial|BAL|bronchoalveolar lavage|lavage|CSF|"
                          r"cerebrospinal|dialysate|effluent|amniotic|vitreous|cyst|abscess)(?:\s+fluid)?(?:\s+(?:analysis|sample|"
                          r"specimen|studies|study))?(?:\s+(?:showed|revealed|demonstrated|had|with|contained))?\s*:?\s+(?:an?\s+|the\s+)?$",
                          re.I)
AMOUNT_KINDS = {"sodium", "potassium", "chloride", "bicarbonate", "glucose", "creatinine", "albumin", "bilirubin", "bun",
                "calcium", "hemoglobin"}


def other_quantity(kind: str | None, quote: str, s: int, e: int, at: int | None) -> str | None:
    """Why the number at ``quote[s:e]``, named at ``at``, is no level of an input of ``kind``: a multiple of a limit
    (``2.5 times the upper limit``), an amount given (``replaced with 20 mEq of KCl``), the level of a fluid other than
    blood (``drain fluid creatinine``, ``lavage fluid showed a white blood cell count of``); ``None`` otherwise."""
    if MULTIPLE_AFTER.match(quote[e:e + 40]):
        return f"{quote[s:e + 30].strip()!r} is a multiple of a limit, not a level"
    ca = T.clause(quote, s)[0]
    if kind in AMOUNT_KINDS and AMOUNT_AFTER.match(quote[e:e + 8]) and DOSE_CUE.search(quote, max(ca, s - 50), s):
        return f"{quote[max(ca, s - 40):e + 8].strip()!r} is an amount given, not a level"
    if at is not None and at <= s and FLUID_BEFORE.search(quote, max(ca, at - 60), at):
        return f"{quote[max(ca, at - 40):e].strip()!r} is a level in another fluid than blood"
    return None
