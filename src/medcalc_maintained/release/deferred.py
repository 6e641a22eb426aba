"""The proposals a draft previews (``release build --draft``): the ledger's records with
``decision: deferred`` and no release yet, as ``propose`` writes them for a contributor's pull
request. They are listed in a section of their own at the top of the draft's CHANGELOG.md and in
the command's output; no label of the build includes them (only accepted records are applied).
"""

from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from medcalc_maintained.core.versions import UNRELEASED
from medcalc_maintained.ledger.records import Record, records_frame
from medcalc_maintained.release.layout import DRAFT_HEADING
from medcalc_maintained.release.markdown import md_table, uid_text
from medcalc_maintained.release.tables import is_missing

TITLE = "Proposed (deferred, not in this release)"
RATIONALE_CHARS = 80  # the rationale is cut to this many characters (its full text is in the ledger)
COLUMNS = ["id", "split", "uid", "Calculator Name", "old_value", "new_value", "rationale", "proposed_by",
           "decided_at", "file"]


def unreleased_deferred(records: Iterable[Record]) -> list[Record]:
    """The deferred records not yet in a release, in ledger order (records that failed the schema
    are never listed: the build refuses the ledger first)."""
    return [r for r in records if r.valid and r.get("decision") == "deferred" and r.release == UNRELEASED]


def proposed_frame(records: Iterable[Record], names: dict[tuple[str, int], str]) -> pd.DataFrame:
    """One row per unreleased deferred record (:data:`COLUMNS`); ``names``: the calculator name of
    each (split, uid)."""
    chosen = unreleased_deferred(records)
    if not chosen:
        return pd.DataFrame(columns=COLUMNS)
    frame = records_frame(chosen)
    out = pd.DataFrame({
        "id": frame["id"].astype(str), "split": frame["split"].astype(str), "uid": frame["uid"].astype(int),
        "old_value": frame["old_value"].astype(str), "new_value": frame["new_value"].astype(str),
        "rationale": frame["rationale"].astype(str), "decided_at": frame["decided_at"].astype(str),
        "file": frame["file"].astype(str)})
    out["Calculator Name"] = [names.get((s, u), "") for s, u in zip(out["split"], out["uid"])]
    who = [p if not is_missing(p) else r for p, r in zip(frame["proposed_by_id"], frame["reviewer_id"])]
    out["proposed_by"] = ["" if is_missing(w) else str(w) for w in who]
    return out[COLUMNS]


def short(text: Any, limit: int = RATIONALE_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis marks a cut)."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def proposed_rows(proposed: pd.DataFrame) -> list[list[Any]]:
    """Record, row, calculator, old → proposed value, short rationale, proposer and date of each."""
    return [[r["id"], uid_text(r["split"], r["uid"]), r["Calculator Name"], f"{r['old_value']} → {r['new_value']}",
             short(r["rationale"]), r["proposed_by"], r["decided_at"]] for r in proposed.to_dict("records")]


def proposed_section(proposed: pd.DataFrame) -> list[str]:
    """The changelog section (lines) listing every row of ``proposed`` (:func:`proposed_frame`)."""
    out = [f"### {TITLE} ({len(proposed)})", "",
           "Proposed label changes awaiting a reviewer's decision (`decision: deferred`). No label of this "
           "build includes them; a reviewer accepts or rejects each before a release can carry it.", ""]
    if not len(proposed):
        return out + ["None.", ""]
    header = ["record", "uid", "calculator", "old → proposed", "rationale", "proposed by", "proposed"]
    return out + [md_table(header, proposed_rows(proposed)), ""]


def draft_preamble(version: str, reasons: list[str], proposed: pd.DataFrame) -> list[str]:
    """The draft's own section, above the releases: not a release, why, and the proposals."""
    why = "; ".join(reasons) if reasons else f"the changes after {version}"
    return [DRAFT_HEADING, "",
            f"Built by `release build --draft` for {version} ({why}); its manifest says `draft: true` and "
            "`release publish` refuses it.", "", *proposed_section(proposed)]


def add_to_changelog(changelog: str, lines: list[str]) -> str:
    """``changelog`` with ``lines`` inserted before its first release section (``## ``)."""
    head, sep, rest = changelog.partition("\n## ")
    block = "\n".join(lines).rstrip() + "\n"
    if not sep:
        return changelog.rstrip() + "\n\n" + block
    return head.rstrip() + "\n\n" + block + "\n## " + rest
