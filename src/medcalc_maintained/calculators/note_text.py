"""The text of a patient note as the evidence verifier reads it: sentences and clauses, the numbers
printed and the units after them (:mod:`.note_numbers`, re-exported here), and the cues that negate, qualify or date a
mention (``calculators/evidence.py`` applies them); which named quantity a printed number belongs to is
:mod:`.note_attribution`'s.
"""

from __future__ import annotations

import re

from medcalc_maintained.calculators.note_numbers import DECIMAL_COMMA as DECIMAL_COMMA
from medcalc_maintained.calculators.note_numbers import FLAT_EXPONENT_GROUP as FLAT_EXPONENT_GROUP
from medcalc_maintained.calculators.note_numbers import NUMBER as NUMBER
from medcalc_maintained.calculators.note_numbers import SPACED_THOUSANDS as SPACED_THOUSANDS
from medcalc_maintained.calculators.note_numbers import flat_exponent as flat_exponent
from medcalc_maintained.calculators.note_numbers import numbers as numbers
from medcalc_maintained.calculators.note_numbers import same_number as same_number
from medcalc_maintained.calculators.note_numbers import spelled_numbers as spelled_numbers
from medcalc_maintained.calculators.note_numbers import unit_after as unit_after

# a full stop ends a sentence, unless it ends a number or "i.e." / "e.g." ("within normal levels, i.e. 0.7 mg/dL and ...");
# a line break ends one, unless it wraps it: after a word, a comma or a hyphen and before a lower-case word
# ("high-density\nlipoprotein 49 mg/dL")
SENTENCE_END = re.compile(r"(?<!\d)(?<!\bi\.e)(?<!\be\.g)\.(?=\s|$)|(?<=\d)\.(?=\s+[A-Z(])|[;!?]|\n(?:(?<![A-Za-z,\-]\n)|(?![a-z]))")
CLAUSE_BREAK = re.compile(r"\b(?:but|however|although|though|except|whereas|yet|aside from|apart from)\b|[;:]",
                           re.I)
DATE = re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}-\d{1,2}-\d{4}\b"
                   r"|(?i:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?"
                   r"(?:,?\s+\d{4})?)|(?i:\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct"
                   r"|nov|dec)[a-z]*\b(?:,?\s+\d{4})?)|\b(?:19|20)\d{2}\b")
RANGE = re.compile(r"(?<![A-Za-z\d.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*(?:-|–|—|to)\s*(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?"
                   r"|(?<![A-Za-z\d.,])\d{1,3}(?: \d{3})+\s*(?:-|–|—|to)\s*\d{1,3}(?: \d{3})+(?!\d)")
REFERENCE_CUE = re.compile(r"\b(?:normal|reference|ref|range|uln|upper limit|lower limit|nl)\b|[<>≤≥]", re.I)
TIME_CUE = re.compile(r"\b(?:ago|baseline|previous(?:ly)?(?! healthy)|prior to (?:this |the |her |his )?(?:admission|presentation"
                       r"|hospitali[sz]ation)|before (?:this |the |her |his )?(?:admission|presentation|illness)|last (?:year|month|"
                       r"(?:clinic |office |outpatient )?visit)|usual (?:body )?weight|pre-?(?:illness|morbid|pregnancy)|at (?:her|his|the) (?:last|previous|prior) (?:visit|admission)|earlier this year|last recorded)\b",
                       re.I)
STRONG_TIME_CUE = re.compile(r"\b(?:(?:\d+|a|an|one|two|three|four|five|six|several|a few)\s+(?:years?|months?|weeks?|days?)"
                              r"\s+(?:ago|earlier|before|prior)|years? ago|months? ago|"
                              r"(?:prior to|before) (?:this |the |her |his )?(?:admission|presentation|"
                              r"hospitali[sz]ation)|last recorded|at discharge|on discharge)\b", re.I)
ELSEWHERE_CUE = re.compile(r"\b(?:(?:at|from|in) (?:an?|another|the referring|an outside|a nearby|a local) (?:hospital|facility|"
                            r"clinic)|outside hospital|repeat(?:ed)? (?:blood |laboratory |lab )?(?:tests?|labs?|results|"
                            r"measurements?))\b", re.I)
# "initially X, but now Y": the first value is the earlier one
INITIALLY_BUT = re.compile(r"\binitially\b", re.I)
# a finding that is the effect of a treatment given ("hypertension resulting from epinephrine administration")
TREATMENT_EFFECT = re.compile(r"\b(?:resulting from|induced by|caused by|due to|secondary to)\b[^.;]{0,40}?\b(?:administration|"
                               r"infusion|injection|bolus|overdose)\b", re.I)
# a value measured later than the presentation the definition asks about
DAY_CUE = re.compile(r"\b(?:on (?:hospital |hospitali[sz]ation )?day[- ]\d+|(?:hospital|hospitali[sz]ation) day[- ]\d+|(?:on|by) (?:the )?(?:end of )?(?:the )?"
                      r"(?:second|third|fourth|fifth|sixth|seventh|\d+(?:st|nd|rd|th)) (?:day(?! of (?:the |her |his |their )?"
                      r"(?:illness|fever|symptoms?|onset|disease))|hospital day)|(?:on|by) "
                      r"(?:the end of )?day (?:two|three|four|five|six|seven|\d+)|day[- ]\d+ of (?:admission|"
                      r"hospitali[sz]ation))\b", re.I)
LATER_CUE = re.compile(r"\b(?:later|subsequently|thereafter|afterwards?|repeat(?:ed)?(?! (?:attempts?|prompting|efforts?|"
                       r"stimul\w*|requests?|questioning|episodes?|indications?|bouts?)\b)|post-?operative(?:ly)?|(?:decreased|increased|dropped|rose|fell|improved|"
                        r"worsened|declined) to|transferred to|started developing|(?<!regular )(?<!routine )(?<!for a )follow-?up|at discharge|"
                        r"on discharge|(?:at|on) the time of discharge|upon discharge|and discharged|discharged (?:on|with|home on)|"
                        r"(?:the|on the) (?:following|next) (?:day|morning)|the day after (?:admission|presentation)|"
                        r"(?:days?|weeks?|hours?) (?:after|following) (?:admission|presentation|arrival|hospitali[sz]ation)|"
                        r"(?:days?|weeks?) into (?:the |his |her |their )?(?:hospitali[sz]ation|admission|hospital stay)|"
                        r"(?:second|third|fourth|\d+(?:nd|rd|th)) week of (?:the |his |her )?(?:hospitali[sz]ation|admission|"
                        r"hospital stay)|(?:on )?the day of discharge|"
                        r"after (?:treatment|therapy|(?:\d+|several|a few|two|three) (?:days?|weeks?|"
                        r"hours?)(?! of)))\b", re.I)
# an event before the illness the note presents, not one of its findings ("coughing ... one day before the onset of symptoms")
PRE_ONSET = re.compile(r"\b(?:before|prior to|preceding) (?:the )?onset of (?:the |her |his |their |these |this )?(?:current )?"
                       r"(?:symptoms?|illness|complaints?)\b", re.I)
# a time years before the presentation: what it dates lies outside every recent window an input asks about
YEARS_AGO = re.compile(r"\b(?:(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|several|many|a few) years? (?:ago|earlier|"
                       r"before|prior)|years? ago|in (?:19|20)\d{2})\b", re.I)
# a past far outside every recent window ("in the past", "remote", the past medical history)
FAR_PAST = re.compile(r"\b(?:in the (?:distant |remote )?past|remote|PMH|past (?:medical|surgical) history|as a child|in (?:his|her) "
                      r"(?:childhood|youth|twenties|thirties))\b", re.I)
# a word that places a negation in the recent window the input asks about ("no recent surgery", "in the past month")
RECENT = re.compile(r"\b(?:recent(?:ly)?|currently|current|now|presently|at present|at (?:the time of )?(?:admission|presentation)|"
                    r"in the (?:past|last|previous) (?:\d+|few|several|two|three|four|six|twelve)? ?(?:days?|weeks?|months?)|"
                    r"within)\b", re.I)
PRESENTATION = re.compile(r"\b(?:on|at|upon) (?:admission|presentation|arrival)|in the (?:ED|emergency department|emergency room)"
                           r"|initial (?:labs?|laboratory|vital)|at the time of (?:admission|presentation|arrival)"
                           r"|on the day of (?:(?:his|her|the) )?(?:admission|presentation|arrival)"
                           r"|(?:at|on|during) (?:his|her|their|the(?: patient's)?) first (?:visit|examination|presentation|evaluation)",
                           re.I)
PAST_CUE = re.compile(r"\b(?:in the past|remote|(?<!-)old|PMH|past medical history|years? ago|months? ago|\d+ (?:years?|"
                       r"months?|weeks?) (?:ago|earlier|before)|previous(?:ly)?(?! healthy)|prior(?! to))\b|\b(?:19|20)\d{2}\b", re.I)
# a year or a calendar date in the sentence of a mention: a dated event, which a time window needs to place
YEAR_OR_DATE = re.compile(r"\b(?:19|20)\d{2}\b|\b(?:on|in) (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}",
                          re.I)
# inputs whose definition asks about a time window: a dated or past mention needs a stated timepoint
WINDOW = re.compile(r"last month|within|recent|past 24 hours|previous 4 weeks|≤3 days|\bacute\b|\bcurrent\b|\bactive\b"
                    r"|^neoplastic disease$|^elevated-risk surgery$",
                     re.I)
NEGATION_BEFORE = re.compile(r"\b(?:no|not|never|denie[sd]|deny|denying|without|negative for|free of|free from|absence of|"
                              r"void of|escaped|pointing away from|"
                              r"(?:do|does|did|has|have|had|could|would|can)(?:n['’]t| not)|cannot|none of|nor|"
                              r"absent|ruled out|rules out|ruling out|unremarkable for|did not have|does not have|"
                              r"had no|has no|nor|neither|lack of|lack(?:s|ed|ing)|excluded|excludes|"
                              r"fail(?:s|ed)? to (?:reveal|show|demonstrate|detect|identify|disclose|find|depict|visuali[sz]e)|exclud(?:ing|es|ed) (?:any|the (?:presence|diagnosis|possibility) of)|"
                              r"(?:eliminat|alleviat|dispell?|allay)\w* (?:any |all )?(?:concerns?|fears?|worr(?:y|ies)|suspicions?) "
                              r"(?:about|of|for|regarding))\b", re.I)
NEGATION_AFTER = re.compile(r"^\W{0,3}(?:\w+\W+){0,5}?(?:was|were|is|are|has been|had been|been|(?:seems|seemed|appears|appeared)"
                             r" to be)?\s*(?:ruled out|excluded|negative|absent|lacking|not (?:present|seen|found|detected|identified|"
                             r"noted|observed|reported|performed|done|undertaken|carried out|appreciated|evident|apparent|"
                             r"visuali[sz]ed|elicited|palpated|palpable|demonstrated|appreciable)|(?:could|can|did) not be "
                             r"(?:seen|found|detected|identified|appreciated|elicited|palpated|visuali[sz]ed|demonstrated)|"
                             r"(?:has|have|had|did) not (?:occur(?:red)?|recur(?:red)?)|never occurred|denied|unlikely|none|normal|unremarkable|"
                             r"within normal (?:limits|range)|had resolved|resolved (?:\w+\W+){0,4}?(?:before|prior to) "
                             r"(?:this |the |her |his )?(?:admission|presentation|visit))\b", re.I)
PLANNED = re.compile(r"\b(?:scheduled (?:for|to)|planned|planning|plan (?:for|to)|will (?:undergo|have|be)|to undergo|"
                      r"candidate for|considered for|consideration of|referred for|awaiting|pending|suspected|suspicion of|"
                      r"suspicious (?:for|of)|suggestive (?:of|signs of)|suggests|presumed|presumptive|questionable|"
                      r"possible|possibly|probable|probably|likely|concern for|concerning for|risk of|at risk for|risk for|"
                      r"if|whether|in case of|"
                      r"to exclude|to prevent|prevention of|(?:told|instructed|asked|encouraged) to(?! (?:continue|resume|keep))|booked for|(?:wait-?)?listed for|"
                      r"rule out|ruling out|r/o|prophylaxis|differential diagnosis|contemplated|recommended|suggested|proposed|advised|was considered|"
                      r"(?:known to|(?:that|which) (?:can|could|may|might)) (?:cause|accelerate|increase|induce|promote|predispose|lead to))\b",
                      re.I)
FAMILY = re.compile(r"\b(?:family (?:medical |health )?history|family hx|FHx|family member|mother|father|brother|sister|sibling|"
                     r"siblings|parent|parents|son|sons|daughter|daughters|children|grandchildren|grandson|granddaughter|niece|"
                     r"nephew|husband|wife|spouse|grandmother|grandfather|aunt|uncle|cousin|relative|relatives|maternal|paternal)\b",
                     re.I)
# a relative named right after a condition: "hypertension in his father", "stroke (mother)", "runs in the family"
FAMILY_AFTER = re.compile(r"^\W{0,3}(?:[\w\-]+\W+){0,3}?(?:runs? in (?:the|his|her|their) family|in (?:his|her|their|both|the "
                          r"patient's) (?:\w+ )?(?:mother|father|parents?|brothers?|sisters?|siblings?|sons?|daughters?|children|"
                          r"relatives?|grandmother|grandfather|aunts?|uncles?|family)\b)|^\s*\((?:in )?(?:his |her )?(?:mother|"
                          r"father|brother|sister|son|daughter|maternal|paternal|grandmother|grandfather|aunt|uncle)\b", re.I)
PARENTHESES = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def sentence(text: str, pos: int) -> tuple[int, int]:
    """The sentence of ``text`` around ``pos`` (ends at ``.``+space, ``;``, ``!``, ``?``, a newline that does not wrap it:
    :data:`SENTENCE_END`)."""
    start, lo, width = 0, pos, 256
    # the last end before ``pos`` (each end is one character, read as a scan that stops at ``pos`` reads it), found in
    # windows that widen back from ``pos``: a sentence's length is read, not the text before it
    while lo > 0:
        lo = max(0, lo - width)
        ends = list(SENTENCE_END.finditer(text, lo, pos))
        if ends:
            start = ends[-1].end()
            break
        width *= 2
    end = SENTENCE_END.search(text, pos)
    return start, (end.start() if end else len(text))


CONTEXT_SENTENCES = 3  # sentences before a value whose time cues date it ("On day 3 ...; HR 94")


def context_start(text: str, sentence_start: int) -> int:
    """Where the :data:`CONTEXT_SENTENCES` sentences before the one starting at ``sentence_start`` begin
    (never before the paragraph: a blank line ends the context)."""
    start = sentence_start
    for _ in range(CONTEXT_SENTENCES):
        if start <= 0 or text[max(0, start - 2):start].count("\n") >= 2:
            break
        start = sentence(text, max(0, start - 2))[0]
    return start


# the day another quantity of an earlier sentence came back to normal ("CK was 312 U/l on admission ... and normalizing on
# hospital day 4"): the end of that value's course, not a time the sentences after it are set at
NORMALISED_ON = re.compile(r"\b(?:normali[sz](?:ing|ed)|returning to (?:normal|baseline)|returned to (?:normal|baseline))\s*$",
                           re.I)


def context_cue(text: str, sa: int, s: int) -> re.Match[str] | None:
    """The time a value's sentence and the sentences before it set ("On day 3 of admission ...", "tested
    in another hospital. Blood tests: AST 444"): the last such cue before the value, unless a later
    one says the presentation ("On admission, ...", "Initial laboratory results"); never the day another value of an
    earlier sentence normalised (:data:`NORMALISED_ON`)."""
    cues = [m for rx in (DAY_CUE, ELSEWHERE_CUE, PRESENTATION) for m in rx.finditer(text, context_start(text, sa), s)
            if not (m.start() < sa and NORMALISED_ON.search(text, max(0, m.start() - 24), m.start()))]
    if not cues:
        return None
    last = max(cues, key=lambda m: m.start())
    return None if PRESENTATION.fullmatch(last.group(0)) else last


# a transfer to the reporting hospital ("transferred to our hospital"), and a stay in hospital before it ("on day 27",
# "after 5 days of hospitalization"): what follows is a later admission than the first presentation
TRANSFER = re.compile(r"\b(?:transferred|referred|moved|readmitted)\s+(?:back\s+)?to\s+(?:our|this)\b[^.;]{0,40}?"
                      r"\b(?:hospital|cent(?:er|re)|institution|facility|unit|department|ICU)\b", re.I)
STAY = re.compile(r"\bon (?:hospital )?day[- ]\d+\b(?! of (?:illness|fever|symptoms?|onset|disease))|\bday[- ]\d+ (?:post|after) "
                  r"(?:admission|hospitali[sz]ation)|\bafter (?:\d+|several|a few|two|three|four|five|six|seven|ten) (?:days|weeks) "
                  r"of (?:hospitali[sz]ation|admission|hospital stay)|\b(?:hospitali[sz]ed|admitted|treated) "
                  r"(?:there )?for (?:\d+|several|a few|two|three|four|five|six|seven|ten) (?:days|weeks)", re.I)

ADMITTED = re.compile(r"\b(?:admitted|hospitali[sz]ed|hospitali[sz]ation)\b", re.I)


def transfer_cue(text: str, s: int) -> re.Match[str] | None:
    """The transfer to the reporting hospital after a stay of days in another one (an admission before it) that a
    sentence before the one at ``s`` states (the stay in its sentence or the one before): a value after it is the transfer admission's, not the
    first presentation's; ``None`` when no such sentence precedes."""
    sa, _ = sentence(text, s)
    for m in TRANSFER.finditer(text, 0, sa):
        ta, tb = sentence(text, m.start())
        if ADMITTED.search(text, 0, ta) and STAY.search(text, sentence(text, max(0, ta - 2))[0] if ta > 1 else ta, tb):
            return m
    return None


def clause(text: str, pos: int) -> tuple[int, int]:
    """The clause of the sentence around ``pos``: the sentence cut at ``but``, ``however``, ``;``, ``:`` ..."""
    a, b = sentence(text, pos)
    start, end = a, b
    for m in CLAUSE_BREAK.finditer(text, a, b):
        if m.end() <= pos:
            start = m.end()
        elif m.start() >= pos:
            end = m.start()
            break
    return start, end


def sentences(text: str) -> list[tuple[int, int]]:
    """Every sentence of ``text`` as ``(start, end)``, in order: the spans between the ends
    :func:`sentence` reads, without the spaces around them; empty ones left out."""
    spans, start = [], 0
    for m in [*SENTENCE_END.finditer(text), None]:
        a, b = start, (m.start() if m else len(text))
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            spans.append((a, b))
        start = m.end() if m else len(text)
    return spans


def negation_cue(text: str, s: int, e: int) -> str | None:
    """The cue that negates the term at ``text[s:e]`` in its own clause (before it, or ``was ruled out`` /
    ``negative`` / ``within normal limits`` right after it), or ``None``."""
    ca, cb = clause(text, s)
    before = list(NEGATION_BEFORE.finditer(text, ca, s))
    if before and not NEW_SUBJECT.search(text, before[-1].end(), s) and not in_relative_clause(text, before[-1].end(), s):
        return before[-1].group(0)
    after = NEGATION_AFTER.match(text[e:cb])
    if after and not EXCEPTION.search(text[max(sentence(text, s)[0], s - 60):s]):  # "apart from varicose veins, the exam is
        # unremarkable": the negation is of the rest
        return after.group(0).strip()
    rest = text[e:cb]
    colon = COLON_NEGATION.match(text[e:e + 20]) if not rest.strip() else None
    if colon:
        return colon.group(1)
    listed = LIST_RULED_OUT.search(rest)  # "infection, malignancy and vasculitis were ruled out"
    if listed and len(rest[:listed.start()].split()) <= 12 and LIST_SEPARATOR.search(rest[:listed.start()]):
        return listed.group(1)
    return None


def negation_in(text: str, start: int, end: int) -> bool:
    """Whether a negation cue (:data:`NEGATION_BEFORE`) stands anywhere in ``text[start:end]``, whatever
    it negates: the unscoped reading of a whole sentence (:func:`negated` scopes a cue to a term)."""
    return NEGATION_BEFORE.search(text, start, end) is not None


def negated(text: str, s: int, e: int) -> bool:
    """Whether the term at ``text[s:e]`` is negated in its own clause (:func:`negation_cue`)."""
    return negation_cue(text, s, e) is not None


# a term named as the exception to what follows: a negation after it negates the rest, not the term
EXCEPTION = re.compile(r"\b(?:apart from|except(?: for)?|other than|aside from|besides|with the exception of)\s+(?:\w+\W+){0,3}$",
                       re.I)
LIST_RULED_OUT = re.compile(r"\b(?:were|have been|had been) (?:all |also )?(ruled out|excluded|negative|absent|not present|denied)\b",
                            re.I)
# a heading's value that negates it ("Confusion: none", "Hemoptysis: absent")
COLON_NEGATION = re.compile(r"^\s*:\s*(none|no|nil|absent|negative|denied|not present)\b", re.I)
LIST_SEPARATOR = re.compile(r",|\band\b|\bor\b", re.I)
# a number that is a change or a load, not the level ("an increase of 2 mg/dL", "glucose 2 hours after a 75 g load")
CHANGE_CUE = re.compile(r"\b(?:(?:increase[sd]?|decrease[sd]?|rise|rose|drop(?:ped)?|fall|fell|change|delta|elevation|reduction)"
                        r"\s+(?:of|by)|(?:rose|fell|dropped|climbed|declined|increased|decreased|went (?:up|down)|jumped)"
                        r"(?:\s+by)?|(?:corrected|reduced|lowered|raised|improved|worsened)\s+by)\s*$", re.I)
# after a number and its unit: the change it measures ("an 8 mEq/L rise in sodium")
CHANGE_AFTER = re.compile(r"^\s*(?:increase|decrease|rise|drop|fall|decline|reduction|elevation)\b", re.I)
LOAD_CUE = re.compile(r"\b(?:post-?load|post-?prandial|after (?:a |an |the )?(?:\d+\s*-?\s*g(?:ram)? )?(?:oral )?(?:glucose )?"
                      r"(?:load|challenge|meal)|after (?:a |an |the |his |her )?(?:standard |mixed |test |light )?(?:meal|breakfast|"
                      r"lunch|dinner|supper|eating)|tolerance test|at (?:30|60|90|120|150|180) min(?:utes)?|(?:1|2|one|two)[- ]h(?:ou)?r?s?\b|OGTT|oral glucose tolerance|glucose tolerance)",
                      re.I)
# a bound, not a value: "below 10", "< 10", "more than 200" (a censored result states no value)
BOUND_CUE = re.compile(r"(?:[<>≤≥]=?|\b(?:below|above|under|over|less than|greater than|more than|lower than|higher than|"
                       r"up to|at least|at most|exceeds?|exceeded|exceeding|in excess of))\s*$", re.I)
# a bound written after the number and its unit: "2.0 mg/dL or higher", "135 mmol/L or lower", "38 °C or more"
BOUND_AFTER = re.compile(r"^\s*(?:or (?:higher|more|greater|above|over|less|lower|below|fewer|under)|and (?:above|over|higher|"
                         r"below|under|lower))\b", re.I)
# a number that ranks the quantity among others, not its value: "at the 25th percentile", "(50th centile)", "z-score 2.1"
PERCENTILE_AFTER = re.compile(r"^(?:st|nd|rd|th)?\s*(?:percentile|centile|%ile)\b|^\s*(?:SDS?|standard deviations?)\b", re.I)
PERCENTILE_BETWEEN = re.compile(r"\b(?:z-?scores?|SDS|SD scores?|standard deviation scores?|percentiles?|centiles?)\b", re.I)
# a value aimed at, not measured: "a target of 60", "goal sodium 130", "aimed for a systolic pressure of 140"
TARGET_CUE = re.compile(r"\b(?:target(?:ed|ing)?|goals?|aim(?:ed|ing)? (?:for|at)|desired)\b", re.I)
# the age at an event written as "at N years" or "when she was N years old", outside a sentence of the presentation
AGE_AT = re.compile(r"\b(?:at|when (?:she|he|they|the patient) (?:was|were))\s*$", re.I)
# a signed number in parentheses or after a change word: "insulin (−26 uIU/ml)"
SIGNED = re.compile(r"(?:^|[\s(\[])[−–+]\s*$")
# a dash between spaces after a name separates the name from its value ("heart rate – 82 beats/min"): no sign
DASH_SEPARATOR = re.compile(r"[A-Za-z)]\s+[–—-]\s+$")
# a mass that is a loss or a gain, not the weight ("a 30 lb weight loss", "weight loss (2 kg per 3 months)")
MASS_CHANGE = re.compile(r"\b(?:loss|lost|losing|gain|gained|gaining|reduction|decrease|increase)\b", re.I)
# after a mass and its unit, across the period of "lb.": "a 30 lb. weight loss"
MASS_CHANGE_AFTER = re.compile(r"^(?:\.(?=\s+(?-i:[a-z])))?\s*(?:of\s+)?(?:\w+\s+)?(?:weight\s+)?(?:loss|gain)\b", re.I)
# a mass of an object, not of the patient: "a 2.3 kg (5 lb) weight", "lifting 20 kg"
OBJECT_MASS = re.compile(r"^\.?\s*(?:\([^)]{0,20}\)\s*)?(?:weight|dumbbell|kettlebell|object|load|bag|box|package|parcel|"
                         r"sack|suitcase|barbell)s?\b", re.I)
LIFTING = re.compile(r"\b(?:lift(?:s|ed|ing)?|carr(?:y|ies|ied|ying)|hold(?:s|ing)?|held|push(?:es|ed|ing)?|pull(?:s|ed|ing)?|"
                     r"raise[sd]?|raising)\b(?!\s+(?:his|her|their|the patient's)\s+(?:arm|leg|head))", re.I)
# a saturation measured on supplemental oxygen, not on room air
ON_OXYGEN = re.compile(r"^[^.;]{0,25}?\b(?:on \d+(?:\.\d+)?\s*(?:L|l|liters?|litres?)\b|nasal cannula|supplemental oxygen|"
                       r"non-?rebreather|face ?mask|high-flow|FiO2|oxygen therapy|on oxygen|with oxygen)", re.I)
# the period a count is given per ("one beer a day", "3 drinks daily", "4 glasses a month", "2 drinks/week")
PER_PERIOD = re.compile(r"\b(?:per|a|an|each|every)\s+(day|night|evening|week|month|year)\b|\b(daily|nightly|weekly|monthly|"
                        r"yearly|annually)\b|/\s*(d|day|wk|week|mo|month|yr|year)\b", re.I)
PERIODS = {"day": "day", "night": "day", "evening": "day", "daily": "day", "nightly": "day", "d": "day", "week": "week",
           "weekly": "week", "wk": "week", "month": "month", "monthly": "month", "mo": "month", "year": "year",
           "yearly": "year", "annually": "year", "yr": "year"}


# a multiplier printed as a unit that no unit table knows ("13.7 x 104/L": a garbled power of ten)
POWER_OF_TEN = re.compile(r"^10\s*\^?\s*\d{1,2}\s*/", re.I)
# a comma and a new subject end a negation's scope ("she does not have a catheter, her tests revealed X")
NEW_SUBJECT = re.compile(r",\s+(?:and\s+)?(?:her|his|their|the patient's|she|he|they|it|which|who)\s+\w+"
                         r"|,\s+(?:has|have|had|was|were|is|are)\s+(?:been\s+)?\w+", re.I)  # "..., with no X, has been treated for Y"
# a relative clause between a negation and a term: the negation's scope is the noun the clause describes, not the
# term in it ("never been prescribed any medication known to accelerate bleeding" negates no bleeding)
OTHER_HEAD = re.compile(r"\b(?:known to|(?:that|which) (?:can|could|may|might|would|causes?|increases?|accelerates?|induces?|"
                        r"predisposes?)|(?:used|given|prescribed) (?:to treat|for))\b", re.I)
EXAMPLES = re.compile(r"\b(?:like|such as|including|e\.g\.|for example|namely)\b", re.I)


def in_relative_clause(text: str, a: int, s: int) -> bool:
    """Whether the term at ``s`` stands in a relative clause (:data:`OTHER_HEAD`) opened after ``a`` and not closed
    by examples of the noun it describes ("medications known to increase bleeding risk like NSAIDs": NSAIDs are the
    medications)."""
    heads = list(OTHER_HEAD.finditer(text, a, s))
    return bool(heads) and not EXAMPLES.search(text, heads[-1].end(), s)


# a European thousands separator in a count ("127.000/µL" is 127,000 per µL)
THOUSANDS_DOT = re.compile(r"^\d{1,3}(?:\.\d{3})+$")
# a test or an examination in the clause of a negated term: it states the finding absent now, not a history's absence
TEST_CONTEXT = re.compile(r"\b(?:CT|angiograph\w*|ultrasound|ultrasonograph\w*|scan|x-ray|radiograph\w*|MRI|"
                          r"echocardiograph\w*|Doppler|testing|tests?|swabs?|cultures?)\b", re.I)
# a sentence that states the presentation: a date in it is the presentation's, not an earlier event's
PRESENTED = re.compile(r"\b(?:present(?:ed|s|ing)|admitted|arrived|was brought|came to|visited)\b", re.I)
# a time cue after a number that dates another value it is compared with ("1.22 compared to her previous 0.8")
COMPARED = re.compile(r"\b(?:compared (?:to|with)|than|versus|vs\.?|from)\b", re.I)
# a value at birth, not now
BIRTH_CUE = re.compile(r"\b(?:born|at birth|birth ?weight|birth length|neonatal weight)\b", re.I)
# an age at an event, not the patient's age now: "at age 45", "at the age of 45", "diagnosed at 45"
AGE_AT_EVENT = re.compile(r"\b(?:at (?:the )?age(?: of)?|aged?|when (?:she|he) was|(?:diagnosed|started|began|onset|menopause|"
                          r"menarche)\s+(?:\w+\s+){0,3}?at)\s*$", re.I)
# a mention in a historical context: what an input about a previously documented condition needs
HISTORICAL = re.compile(r"\b(?:history|known|prior|previous(?:ly)?(?! (?:healthy|well))|past|recurrent|ago|old|before|earlier|again|another|"
                        r"second|PMH|h/o)\b|\b(?:19|20)\d{2}\b", re.I)
# negations that state a test or an examination of now, which say nothing of a history ("PE was ruled out")
TEST_NEGATION = re.compile(r"ruled out|rules out|rule out|ruling out|r/o|excluded|negative|normal|unremarkable", re.I)
# inputs about the patient's past: a later or dated mention is still their history
HISTORY_INPUT = re.compile(r"\bhistory\b|\bprevious(?:ly)?\b|\bprior\b", re.I)


# a finding watched or screened for, named right after it ("monitored for signs of deep vein thrombosis", "screened for
# diabetes"); not a finding whose consequences are watched for ("monitoring for complications of protein C deficiency")
WATCHED_FOR = re.compile(r"\b(?:monitor(?:ed|ing)?|watch(?:ed|ing)?|observed|screen(?:ed|ing)?)\s+(?:closely\s+)?for\s+(?:(?:any|new|"
                         r"possible)\s+)?(?:(?:signs?|symptoms?|development|recurrence|evidence|onset)\s+of\s+)?(?:(?:an?|the|any)\s+)?$",
                         re.I)
PLANNED_WINDOW = 45  # characters before a term in which "scheduled for", "suspected" ... qualify it


PLANNED_AFTER = re.compile(r"^\W{0,3}(?:[\w\-]+\W+){0,3}?(?:(?:was|were|is|are|being)\s+(?:contemplated|planned|scheduled|"
                           r"recommended|considered|suggested|proposed|suspected)|(?:will|would|is to|are to|was to|were to) be\s+"
                           r"(?:started|initiated|commenced|begun|added|given|performed|scheduled))\b", re.I)


# a diagnosis given as one of alternatives is no diagnosis of either: "admitted with diagnosis of non ST elevation MI
# (NSTEMI) or myocarditis" (the term is followed by "or", an abbreviation in brackets between, or follows "A or")
EITHER_DIAGNOSIS = re.compile(r"\bdiagnos[ie]s (?:of|was|is)\s+", re.I)
OR_AFTER = re.compile(r"^\)?\s*(?:\([^()]{1,20}\)\s*)?or\b", re.I)
OR_BEFORE = re.compile(r"\bor\s+(?:an?\s+|the\s+)?$", re.I)


def either_or(text: str, s: int, e: int) -> bool:
    """Whether the term at ``s:e`` is one alternative of a diagnosis stated as "diagnosis of A or B" in its clause."""
    ca, cb = clause(text, s)
    lead = list(EITHER_DIAGNOSIS.finditer(text, max(ca, s - PLANNED_WINDOW - 40), s))
    if not lead:
        return False
    between = text[lead[-1].end():s]
    first = len(between) <= 40 and not re.search(r"[,;]|\band\b|\bor\b", between, re.I) and OR_AFTER.match(text[e:cb])
    second = len(between) <= 60 and not re.search(r"[,;]|\band\b", between, re.I) and OR_BEFORE.search(between) \
        and len(re.findall(r"\bor\b", between, re.I)) == 1
    return bool(first or second)


def planned(text: str, s: int, e: int | None = None) -> bool:
    """Whether the term at ``s`` (ending at ``e``) is planned, suspected or considered in its clause, before it
    ("scheduled for ...") or, given ``e``, right after it ("... was contemplated"), or one of two diagnoses
    ("diagnosis of NSTEMI or myocarditis")."""
    ca, cb = clause(text, s)
    cues = list(PLANNED.finditer(text, max(ca, s - PLANNED_WINDOW), s))
    if (cues and not EVENT_FOLLOWED.search(text, cues[-1].end(), s)) or WATCHED_FOR.search(text, max(ca, s - 60), s):
        return True
    return e is not None and bool(PLANNED_AFTER.match(text[e:cb]) or either_or(text, s, e))


# between a plan and the term: the term is the past event the plan follows ("an anticoagulant recommended following a
# major bleeding episode he experienced"), not what is planned
EVENT_FOLLOWED = re.compile(r"\b(?:following|after)\s+(?:an?|the|his|her|their)\s+(?:[\w-]+\s+)?$", re.I)


def near(text: str, s: int, e: int) -> tuple[int, int]:
    """A window of the term's sentence around it (60 characters before and after)."""
    sa, sb = sentence(text, s)
    return max(sa, s - 60), min(sb, e + 60)


FAMILY_HEADING = re.compile(r"\s*(?:FHx|family (?:medical |health )?history|family hx)\s*:", re.I)  # "FHx: hypertension"
AGENT_RELATIVE = re.compile(r"\b(?:by|with) (?:his|her|their|the patient's)\s+$|accompanied by (?:his|her|their)\s+$", re.I)


def family(text: str, s: int, e: int | None = None) -> bool:
    """Whether a relative is the experiencer of what is named at ``s``: a family word in its clause before it,
    unless the relative only brings, accompanies or reports the patient ("brought by his mother"); given the term's end ``e``,
    also a relative named right after it in its clause (:data:`FAMILY_AFTER`: "hypertension in his father")."""
    ca, cb = clause(text, s)
    if e is not None and FAMILY_AFTER.match(text[e:cb]):
        return True
    if FAMILY_HEADING.match(text, sentence(text, s)[0]) and ca > sentence(text, s)[0]:
        return True
    return any(not AGENT_RELATIVE.search(text, max(ca, m.start() - 25), m.start()) for m in FAMILY.finditer(text, ca, s))
