"""The layout of a dataset card: which blocks of the template a release shows, and in what order.

The one template (``dataset_card.md``) serves every release. Releases before ``CARD_LEAD_FROM`` keep
the card they were published with; from it on (``ReleaseRules.card_lead``) the card *leads*: what the
dataset is, how to evaluate it and what changed come first, and the long reference tables last.
The template says both in HTML comments, which the rendered card never shows:

``<!-- if lead -->`` … ``<!-- end -->``
    lines shown only in a leading card;
``<!-- if not lead -->`` … ``<!-- end -->``
    lines shown only in the earlier layout;
``<!-- if visitor -->``, ``<!-- if not visitor -->``, ``<!-- if lead and not visitor -->`` …
    the same for the card of a Hub visitor (``ReleaseRules.card_visitor``, from ``CARD_VISITOR_FROM``), for
    the card that reports the graders' error rates (``graders``: ``ReleaseRules.card_graders``, from
    ``CARD_GRADERS_FROM``), for the release that ships config ``inputs`` (``inputs``:
    ``ReleaseRules.inputs_config``, from ``INPUTS_CONFIG_FROM``), for the release that ships the
    conformance vectors and errata (``conformance``: ``ReleaseRules.conformance``, from ``CONFORMANCE_FROM``), for
    the card that shows a real model's step-wise breakdown (``steps``: ``ReleaseRules.card_steps``, from
    ``CARD_STEPS_FROM``), and for several conditions at once (terms ``[not] FLAG`` joined by ``and``);
``<!-- lead order: A | B | ... -->`` (inside an ``if lead`` block)
    the order of the ``## `` sections in a leading card: every section of the template, each once
    (a section left out or unknown is an error, so a new section is never dropped silently).

Blocks do not nest. Errors name the template and the line. A release's state hashes the template as
its layout reads it (``release/state.py: card_sha256``), so a block only a leading card shows leaves
the cards and manifests of earlier releases byte for byte as they were published.
"""

from __future__ import annotations

import re
from pathlib import Path

from medcalc_maintained.core.errors import DataError

IF_LEAD, IF_NOT_LEAD, END = "<!-- if lead -->", "<!-- if not lead -->", "<!-- end -->"
CONDITION = re.compile(r"^<!-- if (.+) -->$")
FLAGS = ("lead", "visitor", "graders", "inputs", "conformance", "steps")  # what a block may test
ORDER = re.compile(r"^<!-- lead order: (.+?) -->\n", re.M)
FENCE = "```"
TEMPLATE = Path("dataset_card.md")  # how an error names the template where its path is not at hand


def _condition(marker: str, path: Path, n: int) -> list[tuple[bool, str]]:
    """The terms of an ``if`` marker: ``[(wanted, flag)]`` (``not visitor`` is ``(False, "visitor")``)."""
    terms = []
    for term in CONDITION.match(marker)[1].split(" and "):  # type: ignore[index]
        words = term.split()
        if not (len(words) == 1 or (len(words) == 2 and words[0] == "not")) or words[-1] not in FLAGS:
            raise DataError(path, f"line {n}: {marker}: a condition is [not] {' or [not] '.join(FLAGS)}, "
                                  "terms joined by 'and'")
        terms.append((len(words) == 1, words[-1]))
    return terms


def select_blocks(body: str, lead: bool, path: Path, first_line: int = 1, *, visitor: bool = False,
                  graders: bool = False, inputs: bool = False, conformance: bool = False, steps: bool = False) -> str:
    """``body`` with the lines of the blocks whose condition does not hold removed, and the block
    markers removed. ``first_line``: the template's line number of the body's first line (for errors)."""
    flags = {"lead": lead, "visitor": visitor, "graders": graders, "inputs": inputs, "conformance": conformance,
             "steps": steps}
    out: list[str] = []
    opened: int | None = None
    show = True
    for n, line in enumerate(body.splitlines(keepends=True), first_line):
        marker = line.strip()
        if CONDITION.match(marker):
            if opened is not None:
                raise DataError(path, f"line {n}: {marker} inside the block opened on line {opened}; blocks do not nest")
            opened, show = n, all(flags[flag] == wanted for wanted, flag in _condition(marker, path, n))
        elif marker == END:
            if opened is None:
                raise DataError(path, f"line {n}: {END} without an '<!-- if ... -->' before it")
            opened, show = None, True
        elif show:
            out.append(line)
    if opened is not None:
        raise DataError(path, f"line {opened}: the block opened here has no {END}")
    return "".join(out)


def _sections(body: str) -> tuple[str, list[tuple[str, str]]]:
    """``(preamble, [(title, text)])``: ``body`` cut at each ``## `` heading outside fenced code."""
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    fenced = False
    for line in body.splitlines(keepends=True):
        if line.startswith(FENCE):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            sections.append((line[3:].strip(), [line]))
        elif sections:
            sections[-1][1].append(line)
        else:
            preamble.append(line)
    return "".join(preamble), [(title, "".join(lines)) for title, lines in sections]


def lead_order(body: str, path: Path) -> str:
    """``body`` with its ``## `` sections in the order its ``lead order`` comment names."""
    found = ORDER.findall(body)
    if len(found) != 1:
        raise DataError(path, f"a leading card needs exactly one '<!-- lead order: A | B | ... -->' line; found {len(found)}")
    order = [name.strip() for name in found[0].split("|")]
    preamble, sections = _sections(ORDER.sub("", body))
    titles = [t for t, _ in sections]
    if len(set(titles)) != len(titles):
        raise DataError(path, f"two sections share a title: {sorted({t for t in titles if titles.count(t) > 1})}")
    missing, unknown = sorted(set(titles) - set(order)), sorted(set(order) - set(titles))
    if missing or unknown or len(order) != len(set(order)):
        raise DataError(path, "the lead order must name every section once: "
                              f"not named {missing}, not a section {unknown}, named twice "
                              f"{sorted({o for o in order if order.count(o) > 1})}")
    text = dict(sections)
    parts = [text[t] for t in order]
    parts = [p.rstrip("\n") + "\n\n" for p in parts[:-1]] + [parts[-1].rstrip("\n") + "\n"]  # one blank line between
    return preamble + "".join(parts)


def layout(body: str, lead: bool, path: Path, first_line: int = 1, *, visitor: bool = False,
           graders: bool = False, inputs: bool = False, conformance: bool = False, steps: bool = False) -> str:
    """The template body as a card of this layout: blocks selected, and for a leading card its
    sections in the lead order (the ``lead order`` line is dropped in either layout)."""
    body = select_blocks(body, lead, path, first_line, visitor=visitor, graders=graders, inputs=inputs,
                         conformance=conformance, steps=steps)
    return lead_order(body, path) if lead else ORDER.sub("", body)
