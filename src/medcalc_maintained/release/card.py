"""The dataset card (README.md, from the ``dataset_card.md`` template) and CHANGELOG.md of a release."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.core.versions import full_tag, rules, short_tag, version_key
from medcalc_maintained.ledger.derivation import input_text
from medcalc_maintained.release.card_layout import layout
from medcalc_maintained.release.evidence_changes import headline_text, share_text
from medcalc_maintained.release.layout import data_file, split_front_matter
from medcalc_maintained.release.markdown import md_table, uid_text
from medcalc_maintained.release.plan import Release, Releases
from medcalc_maintained.release.tables import ALL_CONFIGS, INPUTS, SOURCE_COLUMN, Tables, is_missing


def _counts(series: pd.Series, missing: str = "(none)") -> list[tuple[str, int]]:
    vals = [missing if (is_missing(v) or v == "") else str(v) for v in series]
    counts: dict[str, int] = {}
    for v in vals:
        counts[v] = counts.get(v, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _status_before(records: pd.DataFrame) -> dict[str, str]:
    """For each accepted record: the label status of its row before it (the status the row's last
    accepted record of an earlier release gave it; ``unverified`` when there is none)."""
    out: dict[str, str] = {}
    acc = records[records["decision"] == "accepted"] if len(records) else records
    last: dict[tuple[str, str], tuple[tuple, str]] = {}
    for r in sorted(row_dicts(acc), key=lambda r: version_key(r["release"])):
        key = (str(r["split"]), str(r["uid"]))
        prev = last.get(key)
        out[r["id"]] = prev[1] if prev and prev[0] < version_key(r["release"]) else "unverified"
        if prev is None or prev[0] < version_key(r["release"]):
            last[key] = (version_key(r["release"]), str(r["label_status"]))
    return out


def _who(*parts: Any) -> str:
    vals = [str(p) for p in parts if not is_missing(p) and str(p)]
    return f"{vals[0]} ({', '.join(vals[1:])})" if len(vals) > 1 else (vals[0] if vals else "")


def change_rows(changes: pd.DataFrame, before: dict[str, str]) -> tuple[list[str], list[list[Any]]]:
    """The label-change table of one release: record id, row, old -> new, status before -> after,
    error type, deciding reviewer (id, role, specialty), proposer (when any record of the release
    carries ``proposed_by``), decision date and rationale."""
    proposer = "proposed_by_id" in changes.columns and not changes["proposed_by_id"].map(is_missing).all()
    severity = "change_severity" in changes.columns
    header = ["record", "uid", "calculator", "old → new", *(["severity"] if severity else []), "status", "error type",
              "reviewer", *(["proposer"] if proposer else []), "decided", "rationale"]
    rows = []
    for r in row_dicts(changes):
        rows.append([r["id"], uid_text(r["split"], r["uid"]), r["Calculator Name"], f"{r['old_value']} → {r['new_value']}",
                     *([r.get("change_severity") or ""] if severity else []),
                     f"{before.get(r['id'], 'unverified')} → {r['label_status']}", r["error_type"],
                     _who(r.get("reviewer_id"), r.get("reviewer_role"), r.get("reviewer_specialty")),
                     *([_who(r.get("proposed_by_id"), r.get("proposed_by_role"), r.get("proposed_by_specialty"))] if proposer else []), r.get("decided_at"), r["rationale"]])
    return header, rows


LEVELS = ("L0", "L1", "L2", "L3")


def _level_counts(values: pd.Series) -> dict[str, int]:
    counts = values.fillna("").astype(str).value_counts()
    return {lv: int(counts.get(lv, 0)) for lv in LEVELS}


def label_changes(records: pd.DataFrame, version: str) -> pd.DataFrame:
    """The label changes of release ``version``: its accepted records whose label text changed
    (:func:`change_kind`); none where the records carry no ``change_severity``."""
    if not len(records) or "change_severity" not in records.columns:
        return records.iloc[0:0]
    ch = records[(records["release"] == version) & (records["decision"] == "accepted")]
    return ch[[change_kind(r) not in ("confirmation", "reconfirmed") for r in row_dicts(ch)]]


def severity_table(records: pd.DataFrame, version: str) -> str:
    """The label changes (:func:`label_changes`) of release ``version`` per calculator and
    ``change_severity`` level, with a total row."""
    ch = label_changes(records, version)
    if not len(ch):
        return "No label change in this release."
    rows = []
    for name, part in sorted(ch.groupby(ch["Calculator Name"].astype(str)), key=lambda kv: kv[0]):
        c = _level_counts(part["change_severity"])
        rows.append([name, *[c[lv] for lv in LEVELS], len(part)])
    c = _level_counts(ch["change_severity"])
    rows.append(["**all calculators**", *[c[lv] for lv in LEVELS], len(ch)])
    return md_table(["calculator", *LEVELS, "changes"], rows, ["l"] + ["r"] * (len(LEVELS) + 1))


def changed_labels_table(records: pd.DataFrame, version: str) -> str:
    """Every label release ``version`` changes (:func:`label_changes`), one line each: the
    row, its calculator, the label before and after, the severity and the ledger record, after a line
    saying where each record's reasons are; '' when the release changes no label (the severity table
    says so)."""
    ch = label_changes(records, version)
    if not len(ch):
        return ""
    rows = [[uid_text(r["split"], r["uid"]), r["Calculator Name"], f"{r['old_value']} → {r['new_value']}",
             r.get("change_severity") or "", f"`{r['id']}`"]
            for r in sorted(row_dicts(ch), key=lambda r: (str(r["split"]), int(r["uid"])))]
    return (f"The {_plural(len(rows), 'label')} this release changes, one line each (the `corrections` config and "
            "[CHANGELOG.md](CHANGELOG.md) give each record's reviewer, rationale and evidence):\n\n"
            + md_table(["Row Number", "calculator", "label before → after", "severity", "record"], rows) + "\n")


def _plural(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def config_change(a: dict[str, dict[str, str]] | None, b: dict[str, dict[str, str]] | None) -> str | None:
    """How a config's rows changed between two releases (their :meth:`Tables.identities`): rows out,
    rows in, rows whose values differ on the columns both releases have, columns added or removed;
    "unchanged" only when all of these are none (``None`` when an identity is not known)."""
    if a is None or b is None:
        return None
    out, new = len(set(a) - set(b)), len(set(b) - set(a))
    cols_a = set().union(*a.values()) if a else set()
    cols_b = set().union(*b.values()) if b else set()
    common = cols_a & cols_b
    changed = sum(1 for k in set(a) & set(b) if any(a[k].get(c) != b[k].get(c) for c in common))
    parts = ([_plural(out, "row") + " out"] if out else []) + ([_plural(new, "row") + " in"] if new else []) + \
        ([_plural(changed, "row") + " with other values"] if changed else [])
    if a and b and cols_b - cols_a:
        parts.append("adds column(s) " + ", ".join(sorted(cols_b - cols_a)))
    if a and b and cols_a - cols_b:
        parts.append("removes column(s) " + ", ".join(sorted(cols_a - cols_b)))
    return "changed: " + ", ".join(parts) if parts else "unchanged"


def rows_summary(rows: dict[str, dict[str, int]] | None, previous: dict[str, dict[str, int]] | None,
                 previous_version: str | None, identity: dict[str, Any] | None = None,
                 previous_identity: dict[str, Any] | None = None) -> list[str]:
    """How each config's rows changed since the previous release: the counts, and (with the two
    releases' identities) which rows went out, came in or changed values: "unchanged" only when the
    rows and their values are equal."""
    if rows is None:
        return []
    def in_order(d: dict[str, Any]) -> list[str]:  # the configs' own order, whatever the source (state files sort keys)
        return sorted(d, key=lambda c: (ALL_CONFIGS.index(c) if c in ALL_CONFIGS else len(ALL_CONFIGS), c))

    total = {c: sum(rows[c].values()) for c in in_order(rows)}
    if previous is None or previous_version is None:
        table = [[c, n] for c, n in total.items()]
        return ["Rows per config (first release):", "", md_table(["config", "rows"], table, ["l", "r"]), ""]
    before = {c: sum(previous[c].values()) for c in in_order(previous)}
    table = []
    for c in list(total) + [c for c in before if c not in total]:
        a, b = before.get(c, 0), total.get(c, 0)
        what = config_change((previous_identity or {}).get(c), (identity or {}).get(c))
        if what is None:
            what = f"{b - a:+d}" if a != b else "same count (rows not compared)"
        elif a != b:
            what = f"{b - a:+d}; {what}"
        table.append([c, a, b, what])
    return [f"Rows per config since {previous_version}:", "",
            md_table(["config", previous_version, "this release", "change"], table, ["l", "r", "r", "r"]), ""]


def _present(r: dict[str, Any], key: str) -> bool:
    return key in r and not is_missing(r.get(key)) and str(r.get(key)).strip() != ""


def change_kind(r: dict[str, Any]) -> str:
    """What an accepted record did to its row's label, read from its values (never from counts):
    ``confirmation`` / ``reconfirmed`` (the label text stays), ``harmonization`` and ``restored``
    (policy records, ledger/harmonize.py), ``inputs`` (a change that records its inputs, and every
    ``inputs-corrected`` record, also one that brings the label back to upstream's),
    ``recomputed`` (a confirmation that wrote another text of the same label, inside the tolerance)
    or ``change`` (also a confirmation that sets a changed label back to upstream's value). An
    abstention re-confirmed as an abstention (``N/A`` -> ``NA``) keeps the label."""
    old, new = str(r["old_value"]).strip(), str(r["new_value"]).strip()
    same = old == new or (parse_answer(old).is_abstain and parse_answer(new).is_abstain)  # N/A -> N/A in any spelling
    status, policy = str(r["label_status"]), str(r.get("source")) == "policy"
    if same:
        return "confirmation" if status == "confirmed" else "reconfirmed"
    if policy:
        return "harmonization" if _present(r, "adjudicated_value") else "restored"
    if str(r.get("reconstruction")) == "inputs-corrected":
        return "inputs"
    if status == "confirmed" and _within_tolerance(old, new):
        return "recomputed"
    return "inputs" if _present(r, "inputs") else "change"


def _within_tolerance(old: str, new: str) -> bool:
    """Whether two label texts are one value (the ±5% band of a decimal label): a confirmation that
    only rewrote the text, not one that set a changed label back to upstream's."""
    a, b = parse_answer(old), parse_answer(new)
    if not (a.is_number and b.is_number):
        return (a.is_valid and b.is_valid and a.value is not None and a.value == b.value) or old.strip() == new.strip()
    return abs(a.number - b.number) <= 0.05 * max(abs(a.number), abs(b.number))


def _inputs_text(raw: Any) -> str:
    try:
        inputs = json.loads(str(raw)) if not is_missing(raw) else []
    except json.JSONDecodeError:
        return str(raw)
    parts = []
    for i in inputs if isinstance(inputs, list) else []:
        ev = i.get("evidence") or {}
        quote = f' ("{ev.get("text")}", characters {ev.get("start")}-{ev.get("end")})' if ev.get("text") else " (absent)"
        parts.append(f"{input_text(i)}{quote}")
    return "; ".join(parts)


SECTIONS = (
    ("change", "Label changes", "Reviewed decisions that change a label."),
    ("harmonization", "Definition harmonization",
     "The adjudicated label followed a definition other than the row's declared one (or was N/A where the "
     "declared convention computes a value): decided under the declared definition (`calculators/definitions.yaml`) "
     "by a policy record, which keeps the adjudicated value and the definition it followed."),
    ("inputs", "Inputs corrected",
     "Changes that record the corrected inputs with their note evidence; a record that replaces an adjudicated "
     "label no evidenced reading reproduces (reconstruction `inputs-corrected`) names that value."),
    ("restored", "Confirmed labels restored to upstream's value",
     "A confirmed label is the upstream label, value for value: the earlier release shipped a recomputed "
     "number inside the tolerance."),
    ("recomputed", "Confirmed with a recomputed value",
     "The audit confirmed the upstream label and wrote its own recomputation of it (inside the tolerance)."),
)


def change_sections(accepted: pd.DataFrame, before: dict[str, str]) -> list[str]:
    """The changelog sections of one release's accepted records: every record whose label text
    changed is listed in exactly one section; re-confirmations are listed; confirmations counted."""
    out: list[str] = []
    kinds = [change_kind(r) for r in row_dicts(accepted)]
    kinds_s = pd.Series(kinds, index=accepted.index, dtype="object")
    changed = accepted[kinds_s.isin([k for k, _, _ in SECTIONS])]
    out += [f"{len(changed)} label(s) changed in this release"
            + (": " + ", ".join(f"{t.lower()} {int((kinds_s == k).sum())}" for k, t, _ in SECTIONS if (kinds_s == k).any())
               if len(changed) else "") + ".", ""]
    if len(changed) and "change_severity" in changed.columns:
        out += ["By clinical severity (L1 same decision band, L2 crosses a band, L3 changes treatment or "
                "disposition; `calculators/thresholds.yaml`): "
                + ", ".join(f"{lv} {n}" for lv, n in _level_counts(changed["change_severity"]).items()) + ".", ""]
    for key, title, text in SECTIONS:
        part = accepted[kinds_s == key]
        if key == "change" or len(part):
            out += [f"### {title} ({len(part)})", "", text, ""]
        if not len(part):
            if key == "change":
                out += ["None.", ""]
            continue
        header, rows = change_rows(part, before)
        if key in ("harmonization", "inputs"):
            header = header + ["derivation"]
            rows = [row + [(f"adjudicated {r.get('adjudicated_value')} under {r.get('adjudicated_definition') or 'no named definition'}"
                            f"; declared {r.get('definition')}" if key == "harmonization" else
                            f"adjudicated {r.get('adjudicated_value')}; " if _present(r, "adjudicated_value") else "")
                           + (("; inputs: " if key == "harmonization" else "") + _inputs_text(r.get("inputs"))
                              if _present(r, "inputs") else "")]
                    for row, r in zip(rows, row_dicts(part))]
        out += [md_table(header, rows), ""]
    reconfirmed = accepted[kinds_s == "reconfirmed"]
    if len(reconfirmed):
        out += [f"### Re-confirmed ({len(reconfirmed)})", "",
                "A reviewer agreed with a label that an earlier release had already changed: the row keeps its "
                "status and error type, and gains the reviewer.", ""]
        out += [md_table(["record", "uid", "calculator", "label", "status", "error type", "re-confirmed by", "decided"],
                         [[r["id"], uid_text(r["split"], r["uid"]), r["Calculator Name"], r["new_value"],
                           r["label_status"], r["error_type"],
                           _who(r.get("reviewer_id"), r.get("reviewer_role"), r.get("reviewer_specialty")),
                           r.get("decided_at")] for r in row_dicts(reconfirmed)]), ""]
    confirmed = int((kinds_s == "confirmation").sum())
    if confirmed:
        out += [f"{confirmed} accepted record(s) confirm the upstream label, text for text (listed in the "
                "`corrections` config).", ""]
    return out


def render_changelog(releases: list[Release], records: pd.DataFrame,
                     rows: dict[str, dict[str, dict[str, int]]] | None = None,
                     identities: dict[str, dict[str, Any]] | None = None,
                     extra: dict[str, list[str]] | None = None) -> str:
    """CHANGELOG.md: one section per release (newest first) with counts and the label changes;
    ``rows`` ({version: {config: {split: n}}}) adds the row counts per config against the previous release;
    ``extra`` ({version: lines}) ends a release's section (the evidence review, ``release/evidence_changes.py``)."""
    rows = rows or {}
    extra = extra or {}
    out = [
        "# Changelog",
        "",
        "Every label change of the maintained benchmark, newest release first. Each change is a",
        "reviewed record of the corrections ledger; its full text (evidence, reviewer, date) is in the",
        "`corrections` config. Releases are tagged `vMAJOR.MINOR.PATCH` on the dataset repository, and",
        "the first release of a minor line also `vMAJOR.MINOR`.",
        "",
    ]
    before = _status_before(records) if len(records) else {}
    for i in range(len(releases) - 1, -1, -1):
        rel = releases[i]
        prev = releases[i - 1].version if i else None
        recs = records[records["release"] == rel.version] if len(records) else records
        out += [f"## {rel.version} ({rel.date}, {rel.kind})", "", rel.description, ""]
        ids = identities or {}
        out += rows_summary(rows.get(rel.version), rows.get(prev) if prev else None, prev, ids.get(rel.version),
                            ids.get(prev) if prev else None)
        if not len(recs):
            if i == 0 or not any(version_key(v) < rel.key for v in records["release"]):
                out += ["No ledger records: every label is the upstream MedCalc-Bench v1.0 label.", ""]
            else:
                out += [f"No new ledger records: our corrections are those of {releases[i - 1].version}"
                        + (" (carried as described above)." if rel.upstream and rel.upstream != releases[i - 1].upstream
                           else "."), ""]
            out += extra.get(rel.version, [])
            continue
        accepted = recs[recs["decision"] == "accepted"]
        out += [f"{len(recs)} ledger record(s), {len(accepted)} accepted.", ""]
        out += ["### Accepted records by label status and source", ""]
        pairs: dict[tuple[str, str], int] = {}
        for st, src in zip(accepted["label_status"], accepted["source"]):
            pairs[(st, src)] = pairs.get((st, src), 0) + 1
        sources = sorted({s for _, s in pairs})
        statuses = [s for s in ("corrected", "abstain", "confirmed") if any(k[0] == s for k in pairs)]
        out += [md_table(["label status", *sources, "total"],
                         [[st, *[pairs.get((st, so), 0) for so in sources], sum(pairs.get((st, so), 0) for so in sources)]
                          for st in statuses], ["l"] + ["r"] * (len(sources) + 1)), ""]
        out += ["### Accepted records by error type", ""]
        out += [md_table(["error type", "records"], _counts(accepted["error_type"], "(none: confirmation)"), ["l", "r"]), ""]
        if (recs["decision"] != "accepted").any():
            out += ["### Records by decision", ""]
            out += [md_table(["decision", "records"], _counts(recs["decision"]), ["l", "r"]), ""]
        out += change_sections(accepted, before)
        out += extra.get(rel.version, [])
    return "\n".join(out).rstrip() + "\n"


PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
COMMENT = re.compile(r"<!--.*?-->\n?", re.S)


def card_context(t: Tables, plan: Releases) -> dict[str, str]:
    rel = t.release
    splits = t.splits
    full = pd.concat([t.tables["full"][s] for s in splits], ignore_index=True)
    default_rule = (
        "every row, with the upstream MedCalc-Bench v1.0 label (no ledger record is applied in this "
        "release, so every `Label Status` is `unverified`)"
        if rel.default_rows == "all" else
        "the rows whose label was verified by the maintenance process (`Label Status` is `confirmed`, "
        "`corrected` or `abstain`); rows still `unverified` are only in `full`"
    )
    from medcalc_maintained.release.fields import columns_text

    configs_rows = [
        ["default", "every row, upstream labels" if rel.default_rows == "all" else "verified rows (`Label Status` ≠ `unverified`)",
         columns_text(t, "default")],
        ["full", "every row: maintained label and provenance", columns_text(t, "full")],
        ["original", "every row exactly as published upstream (v1.0 labels)", columns_text(t, "original")],
        ["corrections", "one row per ledger record of the releases up to this one", columns_text(t, "corrections")],
        ["mini", "a stratified subset of the verified rows (see below)", columns_text(t, "mini")],
    ] + ([[INPUTS, "one row per input of every verified row: its value and what the note says of it (see below)",
           columns_text(t, INPUTS)]] if INPUTS in t.configs else [])
    empty = t.empty_configs()
    for row in configs_rows:
        if row[0] in empty:
            row[1] = "no rows in this release (an empty file; load it with `streaming=True`)"
    splits_rows = [[c, *[len(t.tables[c][s]) for s in splits]] for c in t.configs]
    status = _counts(full["Label Status"])
    acc = t.records[t.records["decision"] == "accepted"] if len(t.records) else t.records
    if len(acc):
        reviewers = [[role, n] for role, n in _counts(acc["reviewer_role"])]
        blinded = int(acc["blinded"].sum())
        etypes = _counts(acc["error_type"], "(none: confirmation)")
    else:
        reviewers, blinded, etypes = [], 0, []
    history = [[r.version, r.date, r.kind, f"`{full_tag(r.version)}`", r.description.split(". ")[0].rstrip(".")]
               for r in plan.upto(rel.version)]
    unverified = int((full["Label Status"] == "unverified").sum())
    return {
        "version": rel.version,
        "date": rel.date,
        "kind": rel.kind,
        "description": rel.description,
        "repo_id": plan.repo_id,
        "tag": full_tag(rel.version),
        "short_tag": short_tag(rel.version),
        "rows": f"{len(full):,}",
        "default_rows": f"{sum(len(t.tables['default'][s]) for s in splits):,}",
        "unverified_rows": f"{unverified:,}",
        "disputed_rows": f"{int((full['Label Status'] == 'disputed').sum()):,}",
        "default_rule": default_rule,
        "splits": ", ".join(f"`{s}`" for s in splits),
        "configs_table": md_table(["config", "rows", "columns"], configs_rows),
        "splits_table": md_table(["config", *splits], splits_rows, ["l"] + ["r"] * len(splits)),
        "status_table": md_table(["Label Status", "rows"], status, ["l", "r"]),
        "reviewers_table": (md_table(["reviewer role", "accepted records"], reviewers, ["l", "r"])
                            + f"\n\n{blinded} of {len(acc)} accepted records were decided blind to the upstream label."
                            if len(acc) else "No ledger record is part of this release."),
        "error_types_table": (md_table(["error type", "accepted records"], etypes, ["l", "r"]) if etypes
                              else "No ledger record is part of this release."),
        "releases_table": md_table(["version", "date", "kind", "tag", "summary"], history),
        "severity_table": severity_table(t.records, rel.version),
        "changed_labels": changed_labels_table(t.records, rel.version),
        "repository": plan.repository,
        **extra_context(t),
    }


# a config without rows needs an explicit batch size: the parquet reader of `datasets` takes it from
# the first row group otherwise, which has no rows
EMPTY_BATCH_SIZE = 1000
FEATURE_DTYPES = {"int64": "int64", "bool": "bool", "string": "string", "large_string": "string"}


def dataset_info(t: Tables) -> list[dict[str, Any]]:
    """The Hub's ``dataset_info`` of every config: its features (column, dtype), and per split its
    rows and ``num_bytes`` (the in-memory size of its Arrow table; ``datasets`` records within 0.1% of
    it when it prepares the split), with ``dataset_size`` their sum. ``datasets`` ignores a ``splits`` list
    without ``num_bytes`` (it warns "The `splits` field in YAML is malformed" on every load)."""
    from medcalc_maintained.release.tables import arrow_table

    out = []
    for c, splits in t.published().items():
        tables = {s: arrow_table(t.tables[c][s]) for s in splits}
        schema = tables[splits[0]].schema
        sizes = {s: int(tables[s].nbytes) for s in splits}
        out.append({"config_name": c,
                    "features": [{"name": f.name, "dtype": FEATURE_DTYPES[str(f.type)]} for f in schema],
                    "splits": [{"name": s, "num_bytes": sizes[s], "num_examples": int(len(t.tables[c][s]))}
                               for s in splits],
                    "dataset_size": sum(sizes.values())})
    return out


def extra_context(t: Tables) -> dict[str, str]:
    """Placeholders of the mini config and the explanation sources."""
    from medcalc_maintained.release import mini

    minis = pd.concat([t.tables["mini"][s] for s in t.splits], ignore_index=True)
    per_calc = minis.groupby("Calculator ID").size() if len(minis) else pd.Series(dtype="int64")
    n = int(t.mini_per_calculator)
    sizes = (f"{len(minis):,} rows over {len(per_calc)} calculators ({int((per_calc == n).sum())} with {n} rows)"
             if len(minis) else "no rows (this release has no verified row)")
    full = pd.concat([t.tables["full"][s] for s in t.splits], ignore_index=True)
    return {
        "mini_rule": mini.rule_text(n, t.release.version),
        "mini_size": sizes,
        "explanation_table": md_table([SOURCE_COLUMN, "rows (full)"], _counts(full[SOURCE_COLUMN]), ["l", "r"]),
    }


def render_card(template: str, path: Path, t: Tables, plan: Releases,
                estimates: dict[str, Any] | None = None, quarantine: str = "", extra: dict[str, str] | None = None) -> str:
    """``estimates``: stage triage-simulate's unverified estimate by release (``None``: not run);
    ``quarantine``: the text on the upstream rows left out because they do not parse; ``extra``: more
    placeholders (the release build's ``score_shift``, :mod:`.score_shift`, and ``feed_table``, :mod:`.feed`)."""
    from medcalc_maintained.release import fields, unverified_estimate

    front, body = split_front_matter(template, path)
    for key in ("configs", "version", "dataset_info"):
        if key in front:
            raise DataError(path, f"front matter key {key!r} is generated by the release build; remove it", field=key)
    front = dict(front)
    front["version"] = t.release.version
    empty = t.empty_configs()
    front["configs"] = [
        {"config_name": c, **({"default": True} if c == "default" else {}),
         "data_files": [{"split": s, "path": data_file(c, s)} for s in splits],
         **({"batch_size": EMPTY_BATCH_SIZE} if c in empty else {})}
        for c, splits in t.published().items()
    ]
    front["dataset_info"] = dataset_info(t)
    first_line = template[: len(template) - len(body)].count("\n") + 1
    r = rules(t.release.version)
    body = layout(body, r.card_lead, path, first_line, visitor=r.card_visitor,  # this release's blocks, in its order
                  graders=r.card_graders, inputs=r.inputs_config, conformance=r.conformance, steps=r.card_steps)
    body = COMMENT.sub("", body).lstrip("\n")  # template notes are not part of the card
    ctx = card_context(t, plan)
    ctx["unverified_estimate"] = unverified_estimate.text(estimates, t.release.version)
    ctx["quarantine"] = quarantine or "No upstream row is reported as quarantined."
    ctx.update(fields.card_fields(t))  # every column and value, from the tables (release/fields.py)
    ctx.update({**dict.fromkeys(("score_shift", "feed_table", "grader_check", "conformance", "steps_demo"), ""),
                **(extra or {})})
    ctx["derivation_share"] = share_text(t.combined("full"), t.release.version)
    if INPUTS in t.configs:
        ctx["inputs_summary"] = fields.inputs_summary(t.combined(INPUTS))
    ctx["score_shift"] += headline_text(t.combined("full"), t.release.version)  # the card's opening
    unknown = sorted({m.group(1) for m in PLACEHOLDER.finditer(body)} - set(ctx))
    if unknown:
        raise DataError(path, f"unknown placeholder(s) {unknown}; known: {sorted(ctx)}")
    body = PLACEHOLDER.sub(lambda m: ctx[m.group(1)], body)
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{head}---\n{body}"
