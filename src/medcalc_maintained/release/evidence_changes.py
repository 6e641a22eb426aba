"""What a release says about its derivations: the verifier-accepted derivable share (card) and, for a
release under the evidence rules (``core/versions.py: EVIDENCE_FROM``), the changelog sections of its
evidence review, computed from the ``full`` configs of the previous release and this one.

Each verified row of ``full`` carries ``Derivation Status`` and the ``Derivation`` document
(``ledger/derivation.py``). Between two releases a verified row is listed in one section:

``Labels changed``
    the label itself changed: old -> new, with the evidence of the new derivation (each input's
    quote and the verifier's rule) or the justification of an N/A;
``Derivations withdrawn to unexplained``
    the label stays, but its recorded inputs are not evidence (the verifier rejects a quote): the
    row is ``unexplained``, listed with the rejected inputs and their rules;
``Inputs re-recorded``
    the label stays and still derives, from other inputs (read again from the note, or inputs that
    changed nothing set aside): old inputs -> new inputs.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from medcalc_maintained.core.labels import DISPUTED, in_default
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.core.versions import rules
from medcalc_maintained.ledger.derivation import DERIVED, UNDERIVED, input_text, parse_document
from medcalc_maintained.release.markdown import md_table, uid_text

STATUS, DOC = "Derivation Status", "Derivation"
EVIDENCE_STATUS = "Evidence Status"  # release/row_evidence.py (not imported: it builds, this module only reads)
EVIDENCE_VERDICTS = ("certified", "contradicted", "not_addressed")


def _doc(raw: Any) -> dict[str, Any]:
    return parse_document(raw) or {}


def _inputs(doc: dict[str, Any]) -> str:
    parts = []
    for i in doc.get("inputs") or []:
        ev = i.get("evidence") or {}
        quote = f' "{ev.get("text")}"' if ev.get("text") else " (not mentioned)"
        verdict = (i.get("verdict") or {}).get("rule")
        parts.append(f"{input_text(i)}{quote}" + (f" [{verdict}]" if verdict else "")
                     + (f" ({i['source']})" if i.get("source") else ""))
    return "; ".join(parts) or "none (upstream's entities)"


def derivation_counts(full: pd.DataFrame) -> dict[str, int]:
    """Verified rows of ``full`` per ``Derivation Status``."""
    if STATUS not in full.columns:
        return {}
    verified = full[full["Label Status"].astype(str) != "unverified"]
    out: dict[str, int] = {}
    for s in verified[STATUS]:
        out[str(s)] = out.get(str(s), 0) + 1
    return dict(sorted(out.items()))


def share_text(full: pd.DataFrame, version: str) -> str:
    """The card's sentence and table on how the verified labels derive."""
    if not rules(version).derivations or STATUS not in full.columns:
        return "This release ships no derivations (they start with release 2.1.0)."
    counts = derivation_counts(full)
    total = sum(counts.values())
    derived = sum(n for s, n in counts.items() if s in DERIVED)
    table = md_table(["Derivation Status", "verified rows"],
                     [[s, counts.get(s, 0)] for s in (*DERIVED, *UNDERIVED) if counts.get(s) or s != DISPUTED], ["l", "r"])
    pct = f"{100 * derived / total:.1f}%" if total else "n/a"
    if rules(version).evidence_rows and EVIDENCE_STATUS in full.columns:
        docs = [_doc(r.get(DOC)) for r in row_dicts(full) if str(r.get("Label Status")) != "unverified"]
        recorded = [d["inputs"] for d in docs if d.get("inputs")]
        accepted = sum(1 for inputs in recorded if all(_accepted(i) for i in inputs))
        return (f"{len(recorded)} of the {total} verified labels derive from inputs a ledger record recorded; for "
                f"{accepted} of them ({_pct(accepted, len(recorded))}) the evidence verifier accepts every recorded "
                "input. The other labels derive from upstream's entities; what the note says of those is `Evidence "
                "Status` (the headline at the top of this card). A label whose recorded inputs the verifier rejects "
                "is `unexplained`: kept, listed, and routed to review by triage.\n\n" + table)
    if rules(version).evidence_gate:
        return (f"**{derived} of {total} verified labels ({pct}) derive**, counting only derivations whose every "
                "recorded input the evidence verifier accepts (`calculators/evidence.py`: the quote names the input "
                "and states its value). A label whose recorded inputs the verifier rejects is `unexplained`: kept, "
                "listed, and routed to review by triage.\n\n" + table)
    return (f"{derived} of {total} verified labels ({pct}) derive as recorded. In this release a recorded input's quote "
            "was only checked to be the note's text, not to state the input (the evidence verifier applies from "
            "release 2.2.0 on).\n\n" + table)


def _accepted(inp: Any) -> bool:
    """Whether a recorded input of a ``Derivation`` document carries the verifier's acceptance."""
    verdict = inp.get("verdict") if isinstance(inp, dict) else None
    return isinstance(verdict, dict) and verdict.get("supports") is True


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}%" if d else "n/a"


def evidence_counts(full: pd.DataFrame, *, default_only: bool = False) -> dict[str, int]:
    """Verified rows of ``full`` (or the rows of ``default``) per ``Evidence Status``."""
    rows = full[full["Label Status"].astype(str) != "unverified"]
    if default_only:
        rows = rows[rows["Label Status"].astype(str).map(in_default)]
    statuses = rows[EVIDENCE_STATUS].astype(str).tolist()
    return {v: statuses.count(v) for v in EVIDENCE_VERDICTS}


def headline_text(full: pd.DataFrame, version: str) -> str:
    """The card's headline on the evidence of its labels (releases from ``EVIDENCE_ROWS_FROM`` on; empty
    before): the three shares of ``Evidence Status`` over the rows of ``default`` and over every verified row."""
    if not rules(version).evidence_rows or EVIDENCE_STATUS not in full.columns:
        return ""
    d, v = evidence_counts(full, default_only=True), evidence_counts(full)
    nd, nv = sum(d.values()), sum(v.values())
    return (f"\n\n**Evidence.** Of the {nd} labels of `default`, **{d['certified']} ({_pct(d['certified'], nd)}) are "
            "derived from evidence**: every input their derivation uses is quoted from the note by a quote the "
            "evidence verifier certifies, or is absent by the definition's convention for an unmentioned input. For "
            f"**{d['contradicted']} ({_pct(d['contradicted'], nd)})** the note states another value of an input "
            f"(`contradicted`), and for **{d['not_addressed']} ({_pct(d['not_addressed'], nd)})** the verifier "
            "certifies no quote for an input (`not_addressed`). Over all "
            f"{nv} verified labels (`full`): {v['certified']} ({_pct(v['certified'], nv)}) certified, {v['contradicted']} "
            f"({_pct(v['contradicted'], nv)}) contradicted, {v['not_addressed']} ({_pct(v['not_addressed'], nv)}) not "
            "addressed. `Evidence` in `full` gives every input's verdict and quote.")


def _verified(full: pd.DataFrame) -> dict[tuple[str, int], dict[str, Any]]:
    return {(str(r["split"]), int(r["uid"])): r for r in row_dicts(full)
            if str(r.get("Label Status")) != "unverified"}


def evidence_sections(previous: pd.DataFrame, full: pd.DataFrame, version: str, previous_version: str) -> list[str]:
    """The changelog lines of a release under the evidence rules (empty otherwise)."""
    if not rules(version).evidence_gate or STATUS not in full.columns or STATUS not in previous.columns:
        return []
    before, after = _verified(previous), _verified(full)
    changed, withdrawn, rerecorded = [], [], []
    for key in sorted(after):
        new = after[key]
        old = before.get(key)
        if old is None:
            continue
        d_old, d_new = _doc(old.get(DOC)), _doc(new.get(DOC))
        row = [uid_text(key[0], key[1]), new.get("Calculator Name")]
        if str(old["Ground Truth Answer"]) != str(new["Ground Truth Answer"]):
            evidence = _inputs(d_new) if d_new.get("inputs") else (d_new.get("reason") or "")
            changed.append(row + [f"{old['Ground Truth Answer']} → {new['Ground Truth Answer']}",
                                  f"{old.get(STATUS)} → {new.get(STATUS)}", evidence])
        elif str(old.get(STATUS)) in DERIVED and str(new.get(STATUS)) == "unexplained":
            withdrawn.append(row + [str(new["Ground Truth Answer"]), f"{old.get(STATUS)} → unexplained",
                                    _inputs(d_old), d_new.get("reason") or ""])
        elif str(new.get(STATUS)) in DERIVED and _plain(d_old.get("inputs")) != _plain(d_new.get("inputs")):
            rerecorded.append(row + [str(new["Ground Truth Answer"]), f"{old.get(STATUS)} → {new.get(STATUS)}",
                                     _inputs(d_old), _inputs(d_new)])
    out = ["### Evidence review", "",
           f"Every recorded input was checked by the evidence verifier against the row's note; compared with "
           f"{previous_version}: {len(changed)} label(s) changed, {len(withdrawn)} derivation(s) withdrawn to "
           f"`unexplained`, {len(rerecorded)} row(s) with inputs re-recorded.", ""]
    out += [f"#### Labels changed ({len(changed)})", "",
            "The label the note's evidenced inputs give under the declared definition (or an N/A that stands), "
            "with that evidence.", ""]
    out += [md_table(["uid", "calculator", "old → new", "derivation", "evidence"], changed), ""] if changed else ["None.", ""]
    out += [f"#### Derivations withdrawn to `unexplained` ({len(withdrawn)})", "",
            "The label is kept and listed as `unexplained`: the inputs it was derived from quote text that does not "
            "state them (rule of `calculators/evidence.py` in brackets).", ""]
    out += [md_table(["uid", "calculator", "label (kept)", "derivation", "withdrawn inputs", "why"], withdrawn), ""] \
        if withdrawn else ["None.", ""]
    out += [f"#### Inputs re-recorded ({len(rerecorded)})", "",
            "The label stays and still derives, from inputs read again from the note, or without inputs that "
            "changed nothing.", ""]
    out += [md_table(["uid", "calculator", "label", "derivation", "old inputs", "new inputs"], rerecorded), ""] \
        if rerecorded else ["None.", ""]
    return out


def _plain(inputs: Any) -> list[tuple[Any, Any, Any, Any]]:
    return [(i.get("name"), i.get("value"), i.get("unit"), (i.get("evidence") or {}).get("text"))
            for i in inputs or [] if isinstance(i, dict)]


__all__ = ["derivation_counts", "evidence_sections", "share_text"]
