"""The lexicon of the evidence verifier (``lexicon.yaml`` beside this module): per declared input the
terms a note uses to name it, the phrases that contain a term but mean something else, terms that
negate it, wider terms whose negation negates it, and, for choices, the phrases that state each
option; plus the other quantities notes print, and the dosed drugs (``drugs``: per drug of the steroid
conversion and the MME its names, those that state a route, and the words of each route; :func:`drug_lexicon`). Terms match whole words (case-insensitive; a term of
at most four characters with a capital, such as ``HR``, ``Cr`` or ``Mg``, keeps its case); nothing
matches by word stem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.yaml_text import load_yaml

LEXICON_FILE = "lexicon.yaml"

@dataclass(frozen=True)
class Entry:
    """The terms of one input (see the module docstring)."""

    names: tuple[str, ...]
    masks: tuple[str, ...]
    patterns: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    units: tuple[str, ...]
    negating: tuple[str, ...] = ()     # terms that state the criterion absent ("afebrile", "nonsmoker")
    broader: tuple[str, ...] = ()      # wider terms whose negation negates the criterion ("no surgery": no major surgery)
    absent_polarity: bool = False      # the input is true when the named finding is absent ("Cough Absent")
    duration: bool = False             # the terms are durations ("for the past 2 days"): they name no quantity printed after them


def _str_list(value: Any, path: Path, key: str, fld: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise DataError(path, "expected a list of non-empty strings", row=f"input {key!r}", field=fld)
    return tuple(v.strip() for v in value)


def _polarity(value: Any, path: Path, key: str) -> bool:
    if value in (None, "present"):
        return False
    if value == "absent":
        return True
    raise DataError(path, f"polarity {value!r} is not 'present' or 'absent'", row=f"input {key!r}", field="polarity")


def _flag(value: Any, path: Path, key: str, fld: str) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    raise DataError(path, f"{fld} {value!r} is not true or false", row=f"input {key!r}", field=fld)


@lru_cache(maxsize=1)
def load_lexicon() -> tuple[dict[str, Entry], tuple[str, ...]]:
    res = resources.files("medcalc_maintained.calculators").joinpath(LEXICON_FILE)
    path = Path(str(res))
    try:
        data = load_yaml(res.read_text("utf-8"), where=str(path)) or {}
    except Exception as exc:  # a YAML error names its line
        raise DataError(path, f"not valid YAML: {exc}") from None
    raw = data.get("inputs") or {}
    if not isinstance(raw, dict):
        raise DataError(path, "expected a mapping", field="inputs")
    entries: dict[str, Entry] = {}
    aliases: dict[str, str] = {}
    for key, spec in raw.items():
        k = str(key).strip().lower()
        if not isinstance(spec, dict):
            raise DataError(path, "entry is not a mapping", row=f"input {key!r}")
        if spec.get("same_as") is not None:
            aliases[k] = str(spec["same_as"]).strip().lower()
            continue
        opts = spec.get("options") or {}
        if not isinstance(opts, dict):
            raise DataError(path, "expected a mapping of option -> phrases", row=f"input {key!r}", field="options")
        entries[k] = Entry(_str_list(spec.get("names"), path, k, "names"), _str_list(spec.get("not"), path, k, "not"),
                           _str_list(spec.get("patterns"), path, k, "patterns"),
                           tuple((str(o).strip().lower(), _str_list(p, path, k, f"options.{o}")) for o, p in opts.items()),
                           _str_list(spec.get("units"), path, k, "units"),
                           negating=_str_list(spec.get("negating"), path, k, "negating"),
                           broader=_str_list(spec.get("broader"), path, k, "broader"),
                           absent_polarity=_polarity(spec.get("polarity"), path, k),
                           duration=_flag(spec.get("duration"), path, k, "duration"))
    for k, target in aliases.items():
        if target not in entries:
            raise DataError(path, f"same_as names {target!r}, which has no entry", row=f"input {k!r}", field="same_as")
        entries[k] = entries[target]
    other = _str_list(data.get("other_quantities"), path, "other_quantities", "other_quantities")
    return entries, other


@dataclass(frozen=True)
class Drug:
    """One dosed drug (its conversion's key): names that state no route, and per route the names that state it."""

    key: str
    names: tuple[str, ...]
    routed: tuple[tuple[str, tuple[str, ...]], ...]  # (route, names of the drug that state it)


@dataclass(frozen=True)
class Drugs:
    """The ``drugs`` section: steroids and opioids by key, names that state no form, words of each route."""

    steroids: tuple[Drug, ...]
    opioids: tuple[Drug, ...]
    forms: tuple[tuple[str, tuple[str, ...]], ...]
    routes: tuple[tuple[str, tuple[str, ...]], ...]


def _mapping(value: Any, path: Path, fld: str) -> dict:
    if not isinstance(value, dict):
        raise DataError(path, "expected a mapping", field=fld)
    return value


@lru_cache(maxsize=1)
def drug_lexicon() -> Drugs:
    """The ``drugs`` section of ``lexicon.yaml`` (see its header comment)."""
    res = resources.files("medcalc_maintained.calculators").joinpath(LEXICON_FILE)
    path = Path(str(res))
    data = _mapping(load_yaml(res.read_text("utf-8"), where=str(path)) or {}, path, "(top)")
    raw = _mapping(data.get("drugs") or {}, path, "drugs")

    def group(fld: str) -> tuple[Drug, ...]:
        out = []
        for key, spec in _mapping(raw.get(fld) or {}, path, f"drugs.{fld}").items():
            spec = _mapping(spec, path, f"drugs.{fld}.{key}")
            out.append(Drug(str(key).lower(), _str_list(spec.get("names"), path, str(key), "names"),
                            tuple((r, _str_list(spec.get(r), path, str(key), r)) for r in ("po", "iv") if spec.get(r))))
        return tuple(out)

    def lists(fld: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return tuple((str(k).lower(), _str_list(v, path, str(k), fld))
                     for k, v in _mapping(raw.get(fld) or {}, path, f"drugs.{fld}").items())

    return Drugs(group("steroids"), group("opioids"), lists("forms"), lists("routes"))


def lexicon_entry(name: str) -> Entry | None:
    """The lexicon entry of a declared input name (case-insensitive), or ``None``."""
    return load_lexicon()[0].get(str(name).strip().lower())


def _term_pattern(term: str) -> str:
    esc = re.sub(r"(?:\\ |\\-)+", lambda m: r"[\s\-]+", re.escape(term))  # "high-density lipoprotein" = "high density\nlipoprotein"
    esc = esc.replace("'", "['’]")  # "doesn't drink" as notes print it, with a typographic apostrophe too
    exact = len(term) <= 4 and any(c.isupper() for c in term)  # HR, Cr, Na, Mg: abbreviations keep their case
    body = esc if exact else "(?i:" + esc + ")"
    return r"(?<![\w])" + body + r"(?![\w])"


@lru_cache(maxsize=4096)
def _compiled(terms: tuple[str, ...], patterns: tuple[str, ...] = ()) -> re.Pattern[str] | None:
    parts = [_term_pattern(t) for t in sorted(set(terms), key=len, reverse=True)]
    parts += ["(?i:" + p + ")" for p in patterns]
    return re.compile("|".join(parts)) if parts else None


def term_spans(text: str, terms: tuple[str, ...], masks: tuple[str, ...] = (), patterns: tuple[str, ...] = ()
           ) -> list[tuple[int, int]]:
    """Where ``terms`` (or ``patterns``) name something in ``text``, outside every ``masks`` phrase."""
    return list(_term_spans(text, terms, masks, patterns))


def forget_scans() -> None:
    """Drop the cached scans of :func:`term_spans` (a benchmark that times readings one after another)."""
    _term_spans.cache_clear()


@lru_cache(maxsize=4096)
def _starts(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    """Where a match of ``_compiled(terms)`` can begin: a character no word character precedes that is the
    first character of a term (as the term's pattern reads it: case-insensitive unless the term keeps its
    case). ``None`` when a term begins with what its pattern widens (a space or hyphen, an apostrophe)."""
    folded: set[str] = set()
    exact: set[str] = set()
    for t in set(terms):
        if not t or t[0].isspace() or t[0] in "-'":
            return None
        (exact if len(t) <= 4 and any(c.isupper() for c in t) else folded).add(re.escape(t[0]))
    parts = ([f"(?i:[{''.join(sorted(folded))}])"] if folded else []) + ([f"[{''.join(sorted(exact))}]"] if exact else [])
    return re.compile(r"(?<![\w])(?:" + "|".join(parts) + ")") if parts else None


def _finditer(terms: tuple[str, ...], patterns: tuple[str, ...], text: str) -> list[tuple[int, int]]:
    """The spans of ``_compiled(terms, patterns).finditer(text)``, found faster: with terms only, the pattern is
    tried only where :func:`_starts` says a term can begin (a match never begins elsewhere, and ``match`` at a
    position reads the characters before it as ``finditer`` does), left to right, each next try after the last
    match's end, as ``finditer`` continues."""
    pat = _compiled(terms, patterns)
    if pat is None:
        return []
    starts = None if patterns else _starts(terms)
    if starts is None:
        return [(m.start(), m.end()) for m in pat.finditer(text)]
    out: list[tuple[int, int]] = []
    pos = 0
    for c in starts.finditer(text):
        if c.start() < pos:
            continue
        m = pat.match(text, c.start())
        if m is not None:
            out.append((m.start(), m.end()))
            pos = m.end()
    return out


@lru_cache(maxsize=65536)  # the verifier reads the same note for the same terms once per input, number and release
def _term_spans(text: str, terms: tuple[str, ...], masks: tuple[str, ...], patterns: tuple[str, ...]
                ) -> tuple[tuple[int, int], ...]:
    spans = _finditer(terms, patterns, text)
    # the masks are read only where a term matched
    masked = _finditer(masks, (), text) if masks and spans else []
    return tuple((s, e) for s, e in spans if not any(a <= s and e <= b for a, b in masked))


# ------------------------------------------------------------------------------------------------
# quantities named in a text


@lru_cache(maxsize=1)
def all_quantities() -> tuple[tuple[str, Entry], ...]:
    """Every lexicon entry with names (inputs and the other quantities), as (key, entry); not an entry whose terms are
    durations ("for the past 2 days, it has been around 38.9°C": 38.9 is no value of the duration)."""
    entries, other = load_lexicon()
    out = [(k, e) for k, e in entries.items() if (e.names or e.patterns) and not e.duration]
    out += [(f"other:{t.lower()}", Entry((t,), (), (), (), ())) for t in other]
    return tuple(out)


def mentions(text: str, a: int, b: int) -> list[tuple[int, int, str]]:
    """Every quantity term inside ``text[a:b]``: (start, end, entry key), longest match first at a place."""
    return list(_mentions(text, a, b))


@lru_cache(maxsize=4096)
def _first_words(terms: tuple[str, ...]) -> tuple[str, ...]:
    """The lower-cased first word of each term: a term matches only where its first word occurs."""
    return tuple({t.split()[0].lower() for t in terms if t.split()})


@lru_cache(maxsize=1)
def _quantity_words() -> tuple[frozenset[str], tuple[tuple[str, Entry, frozenset[str]], ...]]:
    """Every first word of :func:`all_quantities`' terms, and each quantity with its own first words."""
    quantities = tuple((k, e, frozenset(_first_words(e.names))) for k, e in all_quantities())
    return frozenset(w for _, _, first in quantities for w in first), quantities


@lru_cache(maxsize=8192)  # a note's sentences are read for many inputs and many numbers: each once
def _mentions(text: str, a: int, b: int) -> tuple[tuple[int, int, str], ...]:
    found: list[tuple[int, int, str]] = []
    piece = text[a:b]
    low = piece.lower()
    words, quantities = _quantity_words()
    present = {w for w in words if w in low}  # each first word looked for once, not once per entry that has it
    for key, e, first in quantities:
        if not e.patterns and present.isdisjoint(first):
            continue  # no term of the entry can match: its first word is nowhere in the piece
        for s, t in term_spans(piece, e.names, e.masks, e.patterns):
            found.append((a + s, a + t, key))
    found.sort(key=lambda x: (x[0], -(x[1] - x[0])))
    out: list[tuple[int, int, str]] = []
    for s, t, k in found:  # leftmost-longest: "urine sodium level" is the urine sodium, not a "sodium level"
        if any((s, t) != (s2, t2) and s < t2 and s2 < t for s2, t2, _ in out):
            continue
        if any(s >= s2 and t <= t2 and (t2 - s2) > (t - s) for s2, t2, _ in found):
            continue
        out.append((s, t, k))
    return tuple(out)


def keys_of(name: str) -> set[str]:
    """The lexicon keys that denote the same input as ``name`` (itself and its ``same_as`` aliases)."""
    entries, _ = load_lexicon()
    mine = entries.get(name.lower())
    return {k for k, e in entries.items() if mine is not None and e is mine}


__all__ = ["Drug", "Drugs", "Entry", "drug_lexicon", "LEXICON_FILE", "all_quantities", "forget_scans", "keys_of", "lexicon_entry", "load_lexicon", "mentions", "term_spans"]
