"""Applying the ledger: accepted records, in release order, over the upstream instances.

The output keeps every v1.0 column (a drop-in replacement) with ``Ground Truth Answer`` set to the
maintained label and ``Lower Limit``/``Upper Limit`` recomputed from it (±5% for decimals, equal to
the answer otherwise, ``N/A`` for abstentions), and adds ``Label Status`` (corrected | abstain |
confirmed | unverified | disputed), ``Original Ground Truth Answer``, ``Label Source``, ``Correction IDs`` and
``Error Type`` and ``Guideline Version`` (the definition version the label assumes: the applied
record's ``guideline_version``, else the definition policy's version of the calculator) and
``Change Severity`` (``L0``-``L3`` of the change from the original to the maintained label,
:func:`medcalc_maintained.calculators.severity.change_level`; ``L0`` for an unchanged label). Rows
without an accepted record keep their upstream label as ``unverified``.

Severity is derived, never trusted: a record may state ``change_severity`` (optional), and a
stated value must equal the one computed from the record's ``old_value``, ``new_value``,
calculator and the row's entities; the ``corrections`` config carries the stated value (so checked)
or, for a record that states none, the computed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import pandas as pd

from medcalc_maintained.calculators.policy import guideline_version
from medcalc_maintained.calculators.severity import change_level
from medcalc_maintained.core.answers import format_answer, labels_agree, limits, parse_answer, same_value
from medcalc_maintained.core.labels import DISPUTED, DISPUTED_DECISION, MAINTAINED_COLUMNS, label_style
from medcalc_maintained.core.rows import Row, rows_of
from medcalc_maintained.core.versions import SEMVER, UNRELEASED, release_key
from medcalc_maintained.ledger import rules
from medcalc_maintained.ledger.records import LedgerError, LedgerProblem, Record, collect


@dataclass
class _Rows:
    """What the record rules need of each instance row, by position: the rows (their ``label`` is the
    upstream label, which a record's status is said against) and the style of each label."""

    rows: list[Row]
    styles: list[str | None]

@dataclass
class Step:
    """One accepted record replayed over the labels (see :func:`replay`)."""

    pos: int                   # the caller's position of the record
    key: tuple[str, int]       # (split, uid)
    base: str                  # the row's label before this record
    first_in_release: bool     # no earlier accepted record for this row in the same release
    first_pos: int             # position of the first accepted record of this row and release
    matches_base: bool         # old_value denotes the base label
    applied: bool              # the label moved to new_value


def replay(entries: Iterable[tuple[int, tuple[str, int], str, Any, Any]], labels: dict[tuple[str, int], str],
           otypes: dict[tuple[str, int], str]) -> Iterator[Step]:
    """Replay accepted records over ``labels`` (modified in place), in the order given.

    ``entries`` are ``(pos, (split, uid), release, old_value, new_value)`` sorted by release and
    then ledger order. A record applies when it is the first accepted one of its row in its
    release, its ``old_value`` is the label at that point (its base) and its ``new_value`` parses.
    Rows that do not exist are skipped. The one definition of "the label at the base release",
    used by :func:`check_and_apply` and by the ledger contract.
    """
    first: dict[tuple[str, int, str], int] = {}
    for pos, key, release, old, new in entries:
        if key not in labels:
            continue
        otype = otypes[key]
        base = labels[key]
        slot = (*key, release)
        is_first = slot not in first
        first.setdefault(slot, pos)
        matches = same_value(str(old), base, otype)
        applied = is_first and matches and parse_answer(str(new), otype).is_valid
        if applied:
            labels[key] = str(new)
        yield Step(pos, key, base, is_first, first[slot], matches, applied)





APPLIED = ("accepted", DISPUTED_DECISION)  # the decisions replayed over the labels, in release order


def replayed_value(rec: Any) -> Any:
    """The label a record leaves: its ``new_value`` when accepted; its ``old_value`` when disputed
    (the label stays; the row is marked ``disputed``)."""
    return rec.get("old_value") if rec.get("decision") == DISPUTED_DECISION else rec.get("new_value")


def _row_key(rec: Record) -> tuple[str, int] | None:
    """``(split, uid)`` of a record, ``None`` when either has the wrong type (the schema says so)."""
    split, uid = rec.get("split"), rec.get("uid")
    if not isinstance(split, str) or isinstance(uid, bool) or not isinstance(uid, int):
        return None
    return (split, uid)


def _replayable(rec: Record) -> bool:
    """An accepted record the replay can place: its row, release and both values are there (a record
    that failed the schema otherwise is replayed as if it were fixed, so that its ``old_value`` and
    duplicate problems are named too, but it is never applied)."""
    return (rec.get("decision") in APPLIED and _row_key(rec) is not None and rec.get("old_value") is not None
            and rec.get("new_value") is not None and (rec.release == UNRELEASED or bool(SEMVER.match(rec.release))))


def _check_records(selected: list[Record], index: dict[tuple[str, int], int], rows: "_Rows",
                   frozen: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> list[LedgerProblem]:
    """The record rules of :mod:`medcalc_maintained.ledger.rules` for every selected record
    (accepted or not, and whether or not it passed the JSON Schema: every problem of a record is
    named in one run), and ``label_status`` agrees with the values. ``frozen``: per published release,
    the verdicts it published, which decide its records' inputs."""
    problems: list[LedgerProblem] = []
    for rec in selected:
        key = _row_key(rec)
        if key is None:  # split or uid unusable (a schema problem): the rules that need no row
            for fld, problem in (("blinded", rules.blinded_problem(rec.data)),
                                 ("decided_at", rules.decided_at_problem(rec.get("decided_at")))):
                if problem:
                    problems.append(LedgerProblem(rec.path, problem, rec.id, fld))
            continue
        if key not in index:
            problems.append(LedgerProblem(rec.path, f"uid {key[1]} does not exist in split {key[0]!r}", rec.id, "uid"))
            continue
        i = index[key]
        row, style = rows.rows[i], rows.styles[i]
        otype = row.output_type
        for fld, problem in rules.record_problems(rec.data, calculator_id=row.calculator_id, output_type=otype,
                                                  style=style, note=row.note):
            problems.append(LedgerProblem(rec.path, problem, rec.id, fld))
        for fld, problem in rules.derivation_problems(rec.data, calculator_id=row.calculator_id, output_type=otype,
                                                      style=style, note=row.note, entities=row.entities,
                                                      frozen=(frozen or {}).get(rec.release)):
            problems.append(LedgerProblem(rec.path, f"{rec['split']} uid {key[1]}: {problem}", rec.id, fld))
        problems += _status_problems(rec, rows, i, otype)
        problems += _severity_problems(rec, rows, i, otype)
    return problems


def _status_problems(rec: Record, rows: "_Rows", i: int, otype: str) -> list[LedgerProblem]:
    """``label_status`` agrees with ``new_value`` (and, for corrected/confirmed, with the upstream label)."""
    problems: list[LedgerProblem] = []
    if not isinstance(rec.get("new_value"), str) or not rec["new_value"].strip():
        return problems  # an absent or empty new_value is a value problem already
    new = parse_answer(rec["new_value"], otype)
    st = rec.get("label_status")
    if st == "abstain" and not new.is_abstain:
        problems.append(LedgerProblem(rec.path, "label_status 'abstain' needs new_value N/A", rec.id, "label_status"))
    if st != "abstain" and new.is_abstain:
        problems.append(LedgerProblem(rec.path, f"new_value N/A needs label_status 'abstain', not {st!r}", rec.id, "label_status"))
    # status is said of the row against its upstream label: a physician who agrees with an already
    # corrected label keeps the row corrected (old_value = new_value, label_status corrected)
    original = rows.rows[i].label
    if st in ("corrected", "confirmed") and not new.is_abstain and parse_answer(original, otype).is_valid and new.is_valid:
        agree = labels_agree(rec["new_value"], original, otype)
        if st == "confirmed" and not agree:
            problems.append(LedgerProblem(rec.path, f"label_status 'confirmed' but new_value {rec['new_value']!r} differs "
                                          f"from the upstream label {original!r}", rec.id, "label_status"))
        if st == "corrected" and agree:
            problems.append(LedgerProblem(rec.path, f"label_status 'corrected' but new_value {rec['new_value']!r} agrees "
                                          f"with the upstream label {original!r}", rec.id, "label_status"))
    return problems


def _severity_problems(rec: Record, rows: "_Rows", i: int, otype: str) -> list[LedgerProblem]:
    """A stated ``change_severity`` must be the level computed from the record's values."""
    stated = rec.get("change_severity")
    if stated is None or not isinstance(rec.get("old_value"), str) or not isinstance(rec.get("new_value"), str):
        return []
    try:
        level = change_level(rows.rows[i].calculator_id, rec["old_value"], rec["new_value"], otype, rows.rows[i].entities)
    except ValueError as exc:
        return [LedgerProblem(rec.path, f"change_severity cannot be computed: {exc}", rec.id, "change_severity")]
    if level != stated:
        return [LedgerProblem(rec.path, f"change_severity {stated!r} but the change {rec['old_value']!r} -> "
                              f"{rec['new_value']!r} is {level} (calculators/thresholds.yaml)", rec.id, "change_severity")]
    return []


def _change_severities(rows: list[Row], labels: list[str], ids: list[list[str]]) -> list[str]:
    """``Change Severity`` of every row: original label -> maintained label (raises
    :class:`LedgerError` naming the row's last record when a level cannot be computed)."""
    out, problems = [], []
    for i, row in enumerate(rows):
        try:
            out.append(change_level(row.calculator_id, row.label, labels[i], row.output_type, row.entities))
        except ValueError as exc:
            out.append("")
            rid = ids[i][-1] if ids[i] else None
            problems.append(LedgerProblem("calculators/thresholds.yaml", f"change severity of row {row.uid} "
                                          f"cannot be computed: {exc}", rid, "change_severity"))
    if problems:
        raise LedgerError(problems)
    return out


def _label_text(new: Any, original: str, otype: str, style: str | None) -> str:
    """The released text of a record's ``new_value``: the upstream label's own text stays verbatim
    (a confirmed label is upstream's, text for text), any other value in the canonical form."""
    return original if str(new) == original else format_answer(new, otype, style)


def _step_problem(step: Step, accepted: list[Record]) -> LedgerProblem | None:
    """Why a replayed record cannot apply: a second one for its row and release (the later is
    blamed), or an ``old_value`` that is not the row's label at that point."""
    rec = accepted[step.pos]
    if not step.first_in_release:
        other = accepted[step.first_pos]
        return LedgerProblem(rec.path, rules.duplicate_problem(
            step.key[0], step.key[1], rec.release, (rec.id, rec.path, rec.get("decided_at")),
            (other.id, other.path, other.get("decided_at"))), rec.id, "decision")
    if not step.matches_base:
        return LedgerProblem(rec.path, f"old_value {rec['old_value']!r} does not match the current label "
                                       f"{step.base!r}", rec.id, "old_value")
    return None


def check_and_apply(instances: pd.DataFrame, records: list[Record], *, upto: str | None = None,
                    prior: list[LedgerProblem] | None = None,
                    frozen: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> pd.DataFrame:
    """Apply accepted records, in release order, to upstream ``instances``; return maintained rows.

    ``upto`` limits application to records of releases <= ``upto`` (``None`` = all, including
    unreleased records). Raises :class:`LedgerError` with every problem found; nothing is returned
    partially. ``frozen``: per published release, the input verdicts it published (a record of that
    release is held to them, not to today's verifier).
    """
    df = instances.copy()
    keep = [c for c in df.columns if c not in MAINTAINED_COLUMNS]
    df = df[keep].copy()
    df["Original Ground Truth Answer"] = df["Ground Truth Answer"].astype("string")
    df["Label Status"] = "unverified"
    df["Label Source"] = "upstream"
    df["Correction IDs"] = ""
    df["Error Type"] = ""
    upstream = rows_of(df)
    index = {(r.split, r.uid): i for i, r in enumerate(upstream)}
    problems: list[LedgerProblem] = list(prior or [])
    labels = [r.label for r in upstream]
    status = ["unverified"] * len(df)
    source = ["upstream"] * len(df)
    ids: list[list[str]] = [[] for _ in range(len(df))]
    etype = [""] * len(df)
    gversion = [guideline_version(r.calculator_id) or "" for r in upstream]
    otypes = [r.output_type for r in upstream]
    styles = [label_style(r.label, r.output_type) for r in upstream]
    rows = _Rows(upstream, styles)

    selected = [r for r in records if upto is None or (r.release != UNRELEASED and bool(SEMVER.match(r.release))
                                                       and release_key(r.release) <= release_key(upto))]
    problems += _check_records(selected, index, rows, frozen)

    positions = {id(r): n for n, r in enumerate(records)}
    accepted = sorted((r for r in selected if _replayable(r)),
                      key=lambda r: rules.accepted_order(release_key(r.release), r.get("decided_at"), positions[id(r)]))
    current = {key: labels[i] for key, i in index.items()}
    row_types = {key: otypes[i] for key, i in index.items()}
    entries = ((n, (r["split"], int(r["uid"])), r.release, r["old_value"], replayed_value(r.data)) for n, r in enumerate(accepted))
    for step in replay(entries, current, row_types):
        rec = accepted[step.pos]
        if (problem := _step_problem(step, accepted)) is not None:
            problems.append(problem)
            continue
        if not step.applied or not rec.valid:
            continue
        i = index[step.key]
        if rec.get("decision") == DISPUTED_DECISION:  # the label stays; the row leaves `default`
            status[i] = DISPUTED
            source[i] = rec["source"]
            ids[i].append(rec.id)
            continue
        labels[i] = _label_text(rec["new_value"], upstream[i].label, otypes[i], styles[i])
        status[i] = rec["label_status"]
        source[i] = rec["source"]
        ids[i].append(rec.id)
        etype[i] = rec.get("error_type") or ""
        gversion[i] = rec.get("guideline_version") or gversion[i]
    if problems:
        raise LedgerError(problems)
    severity = _change_severities(upstream, labels, ids)

    lows, highs = [], []
    for lab, otype, style in zip(labels, otypes, styles):
        lo, hi = limits(lab, otype, style)
        lows.append(lo)
        highs.append(hi)
    df["Ground Truth Answer"] = pd.array(labels, dtype="string")
    df["Lower Limit"] = pd.array(lows, dtype="string")
    df["Upper Limit"] = pd.array(highs, dtype="string")
    df["Label Status"] = pd.array(status, dtype="string")
    df["Label Source"] = pd.array(source, dtype="string")
    df["Correction IDs"] = pd.array([";".join(x) for x in ids], dtype="string")
    df["Error Type"] = pd.array(etype, dtype="string")
    df["Guideline Version"] = pd.array(gversion, dtype="string")
    df["Change Severity"] = pd.array(severity, dtype="string")
    return df


def build(instances: pd.DataFrame, ledger_paths: Iterable[Path], upto: str | None = None, *,
          collected: tuple[list[Record], list[LedgerProblem]] | None = None,
          history: Mapping[str, Any] | None = None, whole_ledger: bool = True,
          frozen: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> pd.DataFrame:
    """Maintained instances from the ledger files (or their records as :func:`collect` read them, for
    a caller that needs the records too); raises :class:`LedgerError` listing every problem.
    ``history``: the published releases (:func:`medcalc_maintained.ledger.published.load_published`),
    which no record may rewrite (:func:`medcalc_maintained.ledger.published.published_problems`; a
    published record missing counts only when ``ledger_paths`` are the ``whole_ledger``). ``frozen``: per
    published release, the input verdicts its records are held to (default: ``history``'s)."""
    records, problems = collected if collected is not None else collect(ledger_paths)
    if history is not None:
        from medcalc_maintained.ledger.published import published_problems

        problems = [*problems, *published_problems(records, history, complete=whole_ledger)]
    if frozen is None and history is not None:  # published.frozen_verdicts
        frozen = {v: p.verdicts for v, p in history.items()}
    out = check_and_apply(instances, records, upto=upto, prior=problems, frozen=frozen)
    drop = [c for c in ("entities", "gt_kind", "gt_value", "gt_date") if c in out.columns]
    return out.drop(columns=drop)
