"""Required literals of a regular expression: a cheap test that a pattern cannot match a text.

Most rule patterns never match most notes, and Python's regex engine tries an alternation such as
``\\b(?:spayed|neutered|feline)\\b`` at every position of a 3,000-character note. Every match of
such a pattern contains one of a few fixed strings (here ``spayed``, ``neutered``, ``feline``), and
``str.find`` looks for a fixed string far faster than the engine can fail. :func:`required` works
those strings out from the parsed pattern; when none of them is in the text, the pattern cannot
match there and the search is skipped. It is only a shortcut: the answer is always the engine's.

Only case-sensitive patterns get literals (the checks run case-insensitive rules as case-sensitive
twins on the lower-cased note, see ``registry.fast_twin``); a pattern whose literals cannot be
worked out (no fixed string in every match, scoped flags, back-references) gets ``None``.
"""

from __future__ import annotations

import re
import re._constants as C  # the parsed form of a pattern (CPython's sre)
import re._parser as P
from functools import lru_cache

_MAX_SET = 32  # at most this many alternatives per literal set (more cost more than they save)


def _exact(items) -> set[str] | None:
    """The strings a parsed sequence matches when it is made of literals, small literal character
    classes and alternations of such; None otherwise."""
    out = {""}
    for op, av in items:
        opts: set[str] | None
        if op is C.LITERAL:
            opts = {chr(av)}
        elif op is C.IN and all(o is C.LITERAL for o, _ in av):
            opts = {chr(a) for _, a in av}
        elif op is C.SUBPATTERN and not av[1] and not av[2]:
            opts = _exact(av[3])
        elif op is C.BRANCH:
            opts = set()
            for alt in av[1]:
                got = _exact(alt)
                if got is None:
                    return None
                opts |= got
        else:
            return None
        if opts is None:
            return None
        out = {a + b for a in out for b in opts}
        if len(out) > _MAX_SET:
            return None
    return out


def _score(lits: set[str] | None) -> tuple[int, int]:
    return (min(map(len, lits)), -len(lits)) if lits else (0, 0)


def _required(items) -> set[str] | None:
    """A set of strings one of which every match of the parsed sequence contains, or None."""
    best: set[str] | None = None
    run: set[str] = {""}

    def consider(lits: set[str] | None) -> None:
        nonlocal best
        if lits and "" not in lits and _score(lits) > _score(best):
            best = lits

    for op, av in items:
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):  # zero width: the text either side is contiguous
            continue
        exact = _exact([(op, av)])
        longer = {a + b for a in run for b in exact} if exact is not None else None
        if longer is not None and len(longer) <= _MAX_SET:
            run = longer
            continue
        consider(run)
        run = {""}
        if exact is not None:
            run = exact
        elif op is C.SUBPATTERN and not av[1] and not av[2]:
            consider(_required(av[3]))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and av[0] >= 1:
            consider(_required(av[2]))
        elif op is C.ATOMIC_GROUP:
            consider(_required(av))
        elif op is C.BRANCH:
            alts = [lits for lits in map(_required, av[1]) if lits]
            if len(alts) == len(av[1]):
                union = set[str]().union(*alts)
                if len(union) <= _MAX_SET:
                    consider(union)
        elif op is C.GROUPREF or op is C.GROUPREF_EXISTS:
            return None
    consider(run)
    return best


@lru_cache(maxsize=None)
def required(pattern: re.Pattern) -> tuple[str, ...] | None:
    """Strings one of which is in every text ``pattern`` matches (case-sensitive patterns only)."""
    if pattern.flags & re.IGNORECASE:
        return None
    try:
        lits = _required(P.parse(pattern.pattern, pattern.flags).data)
    except Exception:  # an unusual construct: no shortcut, the engine decides
        return None
    return tuple(sorted(lits, key=len)) if lits else None


def cannot_match(pattern: re.Pattern, text: str, start: int = 0, end: int | None = None) -> bool:
    """True when ``pattern`` certainly has no match in ``text[start:end]`` (no required literal in it)."""
    lits = required(pattern)
    if lits is None:
        return False
    stop = len(text) if end is None else end
    return all(text.find(s, start, stop) < 0 for s in lits)
