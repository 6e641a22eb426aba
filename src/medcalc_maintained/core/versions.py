"""Versions of the maintained benchmark: ``MAJOR.MINOR.PATCH``, their order, bumps and git tags.

A ledger record names the release it belongs to, or ``unreleased`` (a correction accepted but not
yet part of any release); ``unreleased`` sorts after every version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
KINDS = ("major", "minor", "patch")
UNRELEASED = "unreleased"
TAG = re.compile(r"^v?(\d+\.\d+\.\d+)$")
# From this release on, every verified label ships with its derivation (``Derivation`` and
# ``Derivation Status`` in ``full``, explanations from the derivation) and the release contract
# ``label_reproduces_definition`` blocks; earlier releases are rebuilt exactly as published.
DERIVATIONS_FROM = "2.1.0"
# From this release on, a derivation counts only the recorded inputs whose quote the evidence verifier
# (``calculators/evidence.py``) accepts: each input states its ``source`` and ``verdict``, a rejected
# input makes the label ``unexplained``, an N/A carries no numeric value, and the release contract
# ``evidence_supports_inputs`` blocks. New ledger records of these releases are refused by ``apply``
# and ``propose`` when an input's quote does not state it.
EVIDENCE_FROM = "2.2.0"
# From this release on, the rows of ``mini`` are interleaved by calculator (round robin, calculators in
# ``Calculator ID`` order; ``release/mini.py: select``), so the first N rows of the file (``lm_eval
# --limit N``, ``datasets`` slicing) cover min(N, calculators) calculators; earlier releases keep the
# ``Row Number`` order they were published with.
MINI_INTERLEAVED_FROM = "2.2.0"
# From this release on, a `disputed` ledger record leaves a row's label as it was and takes the row out of
# ``default`` (``Label Status`` and ``Derivation Status`` ``disputed``); earlier releases' cards do not name the value.
DISPUTED_FROM = "2.3.0"
# From this release on, ``full`` states for every verified row what its note says of each input of its label
# (``Evidence Status``, ``Evidence``: ``release/row_evidence.py``), the card's headline gives the three shares, and
# the release contract ``evidence`` re-verifies every recorded verdict.
EVIDENCE_ROWS_FROM = "2.3.0"
# From this release on, the dataset card leads with what a Hub visitor needs (what it is, how to evaluate,
# what changed and why) and keeps its long reference tables (every column and value) last, linked from the
# top (``release/card_layout.py``); earlier releases' cards keep the order they were published with.
CARD_LEAD_FROM = "2.3.0"
# From this release on, the card serves a visitor of the Hub who has not seen the repository: it opens with
# what the dataset is in plain words and links the repository, lists every label the release changes, and
# shows the harness commands writing under an ignored folder (``<!-- if visitor -->`` blocks of the template).
CARD_VISITOR_FROM = "2.3.1"
# From this release on, ``releases.json`` (format 2) gives each release its description and, per config, the
# ids of the rows whose label changed, that came in and that left (``release/feed.py``).
FEED_DETAILS_FROM = "2.3.1"
# From this release on, the card says how often each grader is wrong (false-positive and false-negative rates
# against two readers' grades of real model outputs, stage ``grader-check``; ``<!-- if graders -->`` blocks).
CARD_GRADERS_FROM = "2.3.2"
# From this release on, the release ships config ``inputs``: one row per input of every verified row, the
# ``Evidence`` documents of ``full`` as a table (``release/inputs_config.py``), checked by contract ``inputs``.
INPUTS_CONFIG_FROM = "2.4.0"
# From this release on, the release ships the calculators' conformance vectors and the errata of other
# implementations (``conformance/vectors.json``, ``conformance/errata.json``, ``conformance/errata.md``: stage
# ``errata``), checked by contract ``conformance``, and the card says what they found (``<!-- if conformance -->``).
CONFORMANCE_FROM = "2.4.1"
# From this release on, the card shows how a real small model got to its answers: the committed outputs of
# ``release.steps_demo`` graded step by step against the release (``release/steps_demo.py``; ``<!-- if steps -->``).
CARD_STEPS_FROM = "2.4.2"


def version_key(version: str) -> tuple[int, int, int]:
    m = SEMVER.match(str(version))
    if not m:
        raise ValueError(f"{version!r} is not a MAJOR.MINOR.PATCH version")
    return int(m[1]), int(m[2]), int(m[3])


@dataclass(frozen=True)
class ReleaseRules:
    """What a release does: one value per version (:func:`rules`), the only place that compares a version
    with the release that introduced a behaviour. Each field is on from its release (the constants above
    say what each does); ``unreleased`` (a record not yet in a release, a draft's probe) is the next
    release, so every rule is on; a value that is not a version has none."""

    derivations: bool = False       # DERIVATIONS_FROM
    evidence_gate: bool = False     # EVIDENCE_FROM
    interleaved_mini: bool = False  # MINI_INTERLEAVED_FROM
    disputed: bool = False          # DISPUTED_FROM
    evidence_rows: bool = False     # EVIDENCE_ROWS_FROM
    card_lead: bool = False         # CARD_LEAD_FROM
    card_visitor: bool = False      # CARD_VISITOR_FROM
    feed_details: bool = False      # FEED_DETAILS_FROM
    card_graders: bool = False      # CARD_GRADERS_FROM
    inputs_config: bool = False     # INPUTS_CONFIG_FROM
    conformance: bool = False       # CONFORMANCE_FROM
    card_steps: bool = False        # CARD_STEPS_FROM


FIRST = {"derivations": DERIVATIONS_FROM, "evidence_gate": EVIDENCE_FROM, "interleaved_mini": MINI_INTERLEAVED_FROM,
         "disputed": DISPUTED_FROM, "evidence_rows": EVIDENCE_ROWS_FROM, "card_lead": CARD_LEAD_FROM,
         "card_visitor": CARD_VISITOR_FROM, "feed_details": FEED_DETAILS_FROM,
         "card_graders": CARD_GRADERS_FROM, "inputs_config": INPUTS_CONFIG_FROM,
         "conformance": CONFORMANCE_FROM, "card_steps": CARD_STEPS_FROM}  # each rule -> the release that introduced it


def rules(version: object) -> ReleaseRules:
    """The rules of release ``version`` (or ``unreleased``: every rule; not a version: none)."""
    if str(version) == UNRELEASED:
        return ReleaseRules(**{k: True for k in FIRST})
    if not SEMVER.match(str(version)):
        return ReleaseRules()
    key = version_key(str(version))
    return ReleaseRules(**{k: key >= version_key(v) for k, v in FIRST.items()})


def release_key(release: str) -> tuple:
    """Sort key of a record's ``release``: versions in order, then ``unreleased``."""
    if release == UNRELEASED:
        return (1, ())
    return (0, version_key(release))


def bump(version: str, kind: str) -> str:
    """The version after ``version`` for a ``kind`` (major | minor | patch) change."""
    major, minor, patch = version_key(version)
    if kind == "major":
        return f"{major + 1}.0.0"
    if kind == "minor":
        return f"{major}.{minor + 1}.0"
    if kind == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise ValueError(f"unknown change kind {kind!r} (expected one of {', '.join(KINDS)})")


def full_tag(version: str) -> str:
    return f"v{version}"


def short_tag(version: str) -> str:
    major, minor, _ = version_key(version)
    return f"v{major}.{minor}"


def from_tag(text: str) -> str | None:
    """``2.1.0`` for ``v2.1.0`` or ``2.1.0``; ``None`` when ``text`` is no full version or tag."""
    m = TAG.match(str(text).strip())
    return m[1] if m and SEMVER.match(m[1]) else None


SHORT_TAG = re.compile(r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)$")


def resolve_tag(text: str, versions: list[str]) -> str | None:
    """The version of ``versions`` that ``text`` names: a version or full tag (``2.1.0``,
    ``v2.1.0``), or a minor-line tag (``v2.1``, ``2.1``: the first release of that line, the one
    ``publish`` tagged ``v2.1``). ``None`` when ``text`` names none of them."""
    full = from_tag(text)
    if full is not None:
        return full if full in versions else None
    m = SHORT_TAG.match(str(text).strip())
    if not m:
        return None
    line = [v for v in versions if version_key(v)[:2] == (int(m[1]), int(m[2]))]
    return min(line, key=version_key) if line else None


def looks_like_version(text: str) -> bool:
    """Whether ``text`` is spelled as a version or tag (full or minor line)."""
    return from_tag(text) is not None or SHORT_TAG.match(str(text).strip()) is not None
