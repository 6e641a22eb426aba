"""The release feed: ``releases.json``, shipped in every built release, for harness maintainers who
pin a dataset revision and want to know when (and how much) to move the pin.

One entry per release of ``releases.yaml`` up to and including the built one, oldest first, each
derived from the release tables (never typed by hand)::

    version, date, kind, default_rows, upstream     from releases.yaml
    tag, tags                                       vMAJOR.MINOR.PATCH (and vMAJOR.MINOR for the
                                                    first release of a minor line, as publish tags it)
    ledger_ref, ledger_commit                       see LEDGER_COMMIT below
    previous                                        the release it is compared with (null: the first)
    comparability, comparable                       the class of its `default` config, and whether
                                                    scores on it are comparable with `previous`'s
    configs.<config>                                rows per split, sha256 of each data file, and the
                                                    diff with `previous`: class, rows_in, rows_out,
                                                    labels_changed, row_order_changed
    changed_rows_per_calculator                     `default`'s rows in, out and with another label,
                                                    per calculator (only calculators with a change)

Format 2 (the feed of a release from ``FEED_DETAILS_FROM`` on, ``rules(version).feed_details``) adds to
every entry its ``description`` (``releases.yaml``) and to each config's diff the ids behind its counts:
``labels_changed_ids``, ``rows_in_ids`` and ``rows_out_ids`` (``split:Row Number`` for the row configs,
the record ``id`` for ``corrections``), sorted. Earlier releases keep the format-1 feed they were
published with.

The comparability classes (:data:`CLASSES`) are computed per config from the previous release's
tables: rows are matched by ``(split, uid)`` (``id`` in ``corrections``, ``(split, uid, name)`` in
``inputs``) and compared on the columns that decide a score (:data:`ITEM_COLUMNS`; :data:`RECORD_COLUMNS`
for ``corrections``; :data:`INPUT_COLUMNS` for ``inputs``). A config new in a release (``inputs`` in
``INPUTS_CONFIG_FROM``) has class ``first`` there.
The data files' sha256 are those ``release build`` writes for each release (the parquet writer is
deterministic, so they equal the files of that release's own build and publication).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core import git
from medcalc_maintained.core.readers import sha256_file
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.core.versions import full_tag, resolve_tag, rules, short_tag
from medcalc_maintained.release.layout import FEED, data_file
from medcalc_maintained.release.markdown import md_table
from medcalc_maintained.release.plan import Release, Releases
from medcalc_maintained.release.tables import INPUTS, Tables, is_missing, row_keys, write_parquet

FEED_FILE = FEED
FEED_FORMAT = 2  # the newest format; a release's own is feed_format(version)
FEED_FORMATS = (1, 2)
ID_FIELDS = {"labels_changed": "labels_changed_ids", "rows_in": "rows_in_ids", "rows_out": "rows_out_ids"}


def feed_format(version: str) -> int:
    """The format of release ``version``'s feed: 2 from ``FEED_DETAILS_FROM`` on, else 1."""
    return 2 if rules(version).feed_details else 1
# what a model is asked and how its answer is graded: a row whose values here are unchanged scores the same
ITEM_COLUMNS = ("Calculator ID", "Patient Note", "Question", "Output Type", "Ground Truth Answer", "Lower Limit",
                "Upper Limit")
RECORD_COLUMNS = ("split", "uid", "old_value", "new_value", "decision", "label_status")  # a ledger record's decision
# an input of config ``inputs`` (from INPUTS_CONFIG_FROM on): its value and what the note says of it
INPUT_COLUMNS = ("value", "unit", "source", "verdict", "quote_in", "quote_start", "quote_end", "note_value", "used")
CLASSES = {
    "first": "the first release: nothing to compare with",
    "identical": "every data file of the config is byte-identical to the previous release's",
    "labels-unchanged": "the same rows, each with the same item and label (the compared columns); other columns "
                        "differ (explanations, provenance, added columns, row order): scores are comparable",
    "labels-changed": "the same rows, but at least one row's label or item (a compared column) differs: scores are "
                      "not comparable",
    "rows-changed": "rows were added or removed: scores are not comparable",
}
COMPARABLE = ("identical", "labels-unchanged")
LEDGER_COMMIT = (
    "ledger_commit is the commit of the maintainers' repository whose git-tracked ledger files the release was "
    "built from: its `ledger_ref` of releases.yaml, resolved when this file was built; null when the release is "
    "built from the working tree's ledger (every record whose `release` is at most the version), which the data "
    "files' sha256 then identify. The commit of the dataset repository that a tag points to is made by "
    "`release publish` from the built directory, this file included, so no file of a release can name it: "
    "resolve the tag on the target (`git ls-remote`, `HfApi.list_repo_refs`).")


def _compared(config: str) -> tuple[str, ...]:
    return RECORD_COLUMNS if config == "corrections" else INPUT_COLUMNS if config == INPUTS else ITEM_COLUMNS


def _values(frame: pd.DataFrame, config: str) -> dict[str, tuple[str | None, ...]]:
    cols = [c for c in _compared(config) if c in frame.columns]
    texts = [[None if is_missing(v) else str(v) for v in frame[c]] for c in cols]
    return dict(zip(row_keys(frame, config), zip(*texts))) if cols else dict.fromkeys(row_keys(frame, config), ())


def config_diff(before: pd.DataFrame, after: pd.DataFrame, config: str, same_bytes: bool) -> dict[str, Any]:
    """The diff of one config (every split in one frame, :meth:`Tables.combined`) with the previous
    release's: its class (:data:`CLASSES`) and the counts it is derived from."""
    a, b = _values(before, config), _values(after, config)
    gone, new = set(a) - set(b), set(b) - set(a)
    changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    common_a = [k for k in row_keys(before, config) if k in b]
    common_b = [k for k in row_keys(after, config) if k in a]
    if same_bytes:
        cls = "identical"
    elif gone or new:
        cls = "rows-changed"
    else:
        cls = "labels-changed" if changed else "labels-unchanged"
    return {"class": cls, "rows_in": len(new), "rows_out": len(gone), "labels_changed": len(changed),
            "row_order_changed": common_a != common_b, "_changed": changed, "_in": sorted(new), "_out": sorted(gone)}


def per_calculator(before: pd.DataFrame, after: pd.DataFrame, diff: dict[str, Any]) -> list[dict[str, Any]]:
    """``default``'s rows in, out and with another label, per calculator (those with any)."""
    names: dict[str, tuple[int, str]] = {}
    for frame in (before, after):
        for r in row_dicts(frame[["split", "uid", "Calculator ID", "Calculator Name"]]):
            names[f"{r['split']}:{int(r['uid'])}"] = (int(r["Calculator ID"]), str(r["Calculator Name"]))
    counts: dict[tuple[int, str], dict[str, int]] = {}
    for field, keys in (("rows_in", diff["_in"]), ("rows_out", diff["_out"]), ("labels_changed", diff["_changed"])):
        for k in keys:
            c = counts.setdefault(names[k], {"rows_in": 0, "rows_out": 0, "labels_changed": 0})
            c[field] += 1
    return [{"calculator_id": cid, "calculator": name, **c} for (cid, name), c in sorted(counts.items())]


def data_digests(t: Tables) -> dict[str, str]:
    """sha256 of every data file ``release build`` writes for ``t`` (written to a scratch directory)."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="medcalc-feed-") as tmp:
        for cfg, splits in t.published().items():
            for s in splits:
                rel = data_file(cfg, s)
                out[rel] = sha256_file(write_parquet(t.tables[cfg][s], Path(tmp) / rel))
    return out


def tags_of(plan: Releases, version: str) -> list[str]:
    """The tags ``publish`` gives ``version``: the full tag, and the minor line's for its first release."""
    versions = [r.version for r in plan.releases]
    return [full_tag(version)] + ([short_tag(version)] if resolve_tag(short_tag(version), versions) == version else [])


def ledger_commit(root: Path, rel: Release) -> str | None:
    """The commit ``rel.ledger_ref`` names (None without a ref, or when the ref does not resolve)."""
    if not rel.ledger_ref:
        return None
    proc = git.git("rev-parse", "--verify", "--quiet", f"{rel.ledger_ref}^{{commit}}", cwd=root, check=False)
    return proc.stdout.decode().strip() or None


def entry(plan: Releases, t: Tables, files: dict[str, str], prev: tuple[Tables, dict[str, str]] | None,
          commit: str | None, base_upstream: str, details: bool = False) -> dict[str, Any]:
    """The feed entry of release ``t`` (``files``: its data files' sha256; ``prev``: the previous
    release's tables and data files' sha256; ``details``: format 2, with the description and ids)."""
    rel = t.release
    configs: dict[str, Any] = {}
    calcs: list[dict[str, Any]] = []
    for c in t.configs:
        own = {f: files[f] for f in (data_file(c, s) for s in t.splits) if f in files}
        doc: dict[str, Any] = {"rows": {s: int(len(t.tables[c][s])) for s in t.splits}, "files": own}
        if prev is None or c not in prev[0].configs:
            doc["class"] = "first"  # the first release of the config: nothing to compare with
        else:
            before = prev[0].combined(c)
            same = bool(own) and all(prev[1].get(f) == h for f, h in own.items()) and set(own) == {
                f for f in prev[1] if f.split("/")[1:2] == [c]}
            diff = config_diff(before, t.combined(c), c, same)
            if c == "default":
                calcs = per_calculator(before, t.combined(c), diff)
            doc.update({k: v for k, v in diff.items() if not k.startswith("_")})
            if details:
                doc.update({"labels_changed_ids": diff["_changed"], "rows_in_ids": diff["_in"],
                            "rows_out_ids": diff["_out"]})
        configs[c] = doc
    cls = configs["default"]["class"]
    return {"version": rel.version, "date": rel.date, "kind": rel.kind, **({"description": rel.description}
                                                                          if details else {}),
            "tag": full_tag(rel.version),
            "tags": tags_of(plan, rel.version), "default_rows": rel.default_rows,
            "upstream": rel.upstream or base_upstream, "ledger_ref": rel.ledger_ref, "ledger_commit": commit,
            "previous": None if prev is None else prev[0].release.version, "comparability": cls,
            "comparable": cls in COMPARABLE or cls == "first", "configs": configs,
            "changed_rows_per_calculator": calcs}


def release_feed(plan: Releases, known: dict[str, Tables], version: str, files: dict[str, str], root: Path,
                 base_upstream: str) -> dict[str, Any]:
    """The feed of release ``version``: an entry for each release of ``plan`` up to it whose tables
    are in ``known`` (``files``: the built release's own data files' sha256)."""
    order = [r.version for r in plan.upto(version) if r.version in known]
    digests = {v: (files if v == version else data_digests(known[v])) for v in order}
    details = rules(version).feed_details
    entries = []
    for i, v in enumerate(order):
        prev = (known[order[i - 1]], digests[order[i - 1]]) if i else None
        entries.append(entry(plan, known[v], digests[v], prev, ledger_commit(root, known[v].release), base_upstream,
                             details))
    return {"format": feed_format(version), "name": plan.repo_id, "latest": version, "classes": CLASSES,
            "comparable_classes": list(COMPARABLE),
            "compared_columns": {"rows": list(ITEM_COLUMNS), "corrections": list(RECORD_COLUMNS),
                                 **({INPUTS: list(INPUT_COLUMNS)} if rules(version).inputs_config else {})},
            "ledger_commit": LEDGER_COMMIT, "releases": entries}


def write_feed(root: Path, doc: dict[str, Any]) -> Path:
    path = Path(root) / FEED_FILE
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def latest_entry(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["releases"][-1]


def feed_table(doc: dict[str, Any]) -> str:
    """The feed as the card shows it: the classes, then per release its tags and its `default`
    config against the previous release."""
    cols = ", ".join(f"`{c}`" for c in doc["compared_columns"]["rows"])
    recs = ", ".join(f"`{c}`" for c in doc["compared_columns"]["corrections"])
    head = (f"The classes (rows matched by `split` and `Row Number` and compared on {cols}; records of "
            f"`corrections` matched by `id` and compared on {recs}"
            + ("; inputs of `inputs` matched by `split`, `Row Number` and `name` and compared on "
               + ", ".join(f"`{c}`" for c in doc["compared_columns"][INPUTS]) if INPUTS in doc["compared_columns"] else "")
            + "): "
            + "; ".join(f"`{k}`: {v}" for k, v in doc["classes"].items()) + ".")
    rows = []
    for e in doc["releases"]:
        d = e["configs"]["default"]
        rows.append([e["version"], ", ".join(f"`{t}`" for t in e["tags"]), e["previous"] or "",
                     f"`{e['comparability']}`", sum(d["rows"].values()), d.get("labels_changed", ""),
                     d.get("rows_in", ""), d.get("rows_out", "")])
    return head + "\n\n" + md_table(["version", "tags", "compared with", "class (`default`)", "rows", "labels changed",
                                      "rows in", "rows out"], rows, ["l", "l", "l", "l", "r", "r", "r", "r"])
