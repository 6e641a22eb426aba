"""Contract views of a built release directory: every file a user can load.

``validate DIR`` evaluates the suites on these views (suite ``expectations/release.json`` and
``expectations/manifest.json``; the ``default`` config is also run through the row-level suites of
:data:`CONFIG_SUITES`). Each view is one boolean fact per row, so that a corrupted release is
reported by Great Expectations as a named, failed expectation with the offending files, configs,
columns or rows:

``files``           every file listed in ``manifest.json`` or present in the directory:
                    ``in_manifest``, ``exists``, ``sha256_matches``, ``known_file`` (a file a release
                    build writes and these contracts check: :func:`medcalc_maintained.release.layout.known_file`)
``config_files``    every parquet file of a config (listed or present): ``readable``,
                    ``rows_match_manifest``
``config_columns``  every (config, column) of the config's layout or of its files:
                    ``in_layout``, ``present``, ``type_matches_manifest``
``card``            every config named by the card's front matter or the manifest:
                    ``in_card``, ``in_manifest``, ``card_files_match_manifest``, ``default_flag_ok``
``default_rows``    every row of ``default`` or selected from ``full`` by the release's
                    ``default_rows`` rule: ``membership_ok``, ``matches_full``, ``unique_in_default``
``change_severity`` every row of ``full`` and record of ``corrections``: ``severity_allowed``,
                    ``severity_consistent``, ``severity_matches`` (:mod:`.severity_views`)
``inputs``          every input of config ``inputs`` (releases from 2.4.0 on) read against ``full`` and the
                    notes (:mod:`.release_inputs`)
``conformance``     the conformance vectors and errata (releases from 2.4.1 on), read back and checked against
                    each other and against the reference calculators (:mod:`.release_conformance`)
``instances@default`` the ``default`` rows as an instance view (the provenance columns that the
                    config does not carry come from ``full``): schema and label invariants
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd
import pyarrow.parquet as pq

from medcalc_maintained.contracts import (
    release_conformance,
    release_evidence,
    release_feed,
    release_inputs,
    severity_views,
)
from medcalc_maintained.contracts import release_content as rc
from medcalc_maintained.core.labels import in_default
from medcalc_maintained.core.readers import sha256_file
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.release import layout
from medcalc_maintained.release.layout import config_of, manifest_listing
from medcalc_maintained.release.tables import INPUT_COLUMNS, INPUTS, NULLABLE_INT_COLUMNS, configs_of

# suites (by name) that a config other than `full` is also validated with, and the view it gets
CONFIG_SUITES = {"default": ("schema", "label_invariants")}
CONFIG_VIEW = "instances@{config}"
ID_COLUMNS = {
    "files": ["path"],
    "config_files": ["path"],
    "config_columns": ["config", "column"],
    "card": ["config"],
    "default_rows": ["split", "uid"],
    "instances@default": ["split", "uid"],
    **severity_views.ID_COLUMNS,
    "column_types": ["config", "column"],
    "mini_rows": ["split", "uid"],
    "explanations": ["split", "uid"],
    "derivations": ["split", "uid"],
    "evidence": ["split", "uid"],
    "inputs": ["split", "uid", "name"],
    "proposals": ["split", "uid", "field"],
    "conformance": ["path"],
    "card_features": ["config"],
    "croissant": ["item"],
    "feed": ["item"],
}


@dataclass
class ReleaseData:
    """What a release directory holds, read without trusting any of it."""

    root: Path
    manifest: dict[str, Any]
    configs: dict[str, pd.DataFrame] = field(default_factory=dict)  # config -> rows (with split, uid)
    columns: dict[str, dict[str, str]] = field(default_factory=dict)  # config -> {column: arrow type}
    parts: list[dict[str, Any]] = field(default_factory=list)  # one per parquet file

    def config(self, name: str) -> pd.DataFrame:
        return self.configs.get(name, pd.DataFrame())


def read_release(root: Path) -> ReleaseData:
    """Every parquet file under ``data/`` or listed in the manifest, grouped by config; an
    unreadable file is kept as a part with ``readable: False``."""
    root = Path(root)
    manifest = layout.manifest_or_empty(root)
    paths = layout.data_paths(root) | {p for p in manifest_listing(manifest) if config_of(p)}
    data = ReleaseData(root, manifest)
    frames: dict[str, list[pd.DataFrame]] = {}
    for rel in sorted(paths):
        config, split = config_of(rel) or ("?", "?")
        part = {"path": rel, "config": config, "split": split, "exists": (root / rel).is_file(), "readable": False,
                "rows": None}
        data.parts.append(part)
        if not part["exists"]:
            continue
        try:
            table = pq.read_table(root / rel)
        except Exception:  # not parquet, truncated, ...: reported as unreadable
            continue
        part["readable"], part["rows"] = True, table.num_rows
        data.columns.setdefault(config, {}).update({f.name: str(f.type) for f in table.schema})
        df = table.to_pandas()
        for c in NULLABLE_INT_COLUMNS & set(df.columns):  # a quote's offsets stay integers (not floats) with nulls
            df[c] = pd.array(table.column(c).to_pylist(), dtype="Int64")
        if "split" not in df.columns:
            df["split"] = pd.array([split] * len(df), dtype="string")
        if "uid" not in df.columns and "Row Number" in df.columns:
            uid = pd.to_numeric(df["Row Number"], errors="coerce")
            df["uid"] = uid.astype("int64") if uid.notna().all() else uid.astype("Int64")
        frames.setdefault(config, []).append(df)
    data.configs = {c: pd.concat(fs, ignore_index=True) for c, fs in frames.items()}
    return data


# --- views ------------------------------------------------------------------------------------

def _configs(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The configs the release of ``manifest`` has (:func:`~medcalc_maintained.release.tables.configs_of` its version)."""
    return configs_of(str(manifest.get("version")))  # a manifest without a version: the first five


def files_view(root: Path, manifest: dict[str, Any]) -> pd.DataFrame:
    """Every file of the manifest or of the directory (any path): listed, present, sha256 equal."""
    listed = manifest_listing(manifest)
    present = set(layout.release_files(root)) - {layout.MANIFEST}
    rows = []
    for rel in sorted(set(listed) | present):
        exists = rel in present
        rows.append({"path": rel, "in_manifest": rel in listed, "exists": exists,
                     "sha256_matches": exists and rel in listed and sha256_file(Path(root) / rel) == listed[rel],
                     "known_file": layout.known_file(rel, _configs(manifest), manifest.get("version"))})
    return pd.DataFrame(rows, columns=["path", "in_manifest", "exists", "sha256_matches", "known_file"])


def config_files_view(data: ReleaseData) -> pd.DataFrame:
    listed = data.manifest.get("rows")
    counts = listed if isinstance(listed, dict) else {}
    rows = []
    for p in data.parts:
        want = (counts.get(p["config"]) or {}).get(p["split"]) if isinstance(counts.get(p["config"]), dict) else None
        rows.append({"path": p["path"], "config": p["config"], "split": p["split"],
                     "readable": p["readable"] or not p["exists"],  # a missing file is the `files` view's failure
                     "rows_match_manifest": (not p["readable"]) or (want is not None and int(want) == p["rows"])})
    return pd.DataFrame(rows, columns=["path", "config", "split", "readable", "rows_match_manifest"])


def layouts(manifest: dict[str, Any]) -> dict[str, list[str]]:
    """The column layout of each config: fixed for default, original and corrections (the release
    tables' layouts; corrections with the derivation columns from 2.1.0 on), as recorded in the
    manifest's release state for full."""
    from medcalc_maintained.core.rows import UPSTREAM_COLUMNS
    from medcalc_maintained.core.versions import rules
    from medcalc_maintained.release.tables import CORRECTION_COLUMNS, DEFAULT_COLUMNS, DERIVATION_RECORD_COLUMNS

    derived = rules(manifest.get("version")).derivations

    state_schema = (manifest.get("state") or {}).get("schema") or {}
    out = {c: [col for col, _t in (state_schema.get(c) or {}).get("columns") or []] for c in state_schema}
    out.update({"default": list(DEFAULT_COLUMNS), "mini": list(DEFAULT_COLUMNS), "original": list(UPSTREAM_COLUMNS),
                "corrections": list(CORRECTION_COLUMNS) + (list(DERIVATION_RECORD_COLUMNS) if derived else []),
                **({INPUTS: list(INPUT_COLUMNS)} if rules(manifest.get("version")).inputs_config else {})})
    return out


def config_columns_view(data: ReleaseData) -> pd.DataFrame:
    layout = layouts(data.manifest)
    state_schema = (data.manifest.get("state") or {}).get("schema") or {}
    rows = []
    for config in sorted(set(data.columns) | {p["config"] for p in data.parts}):
        types = {c: t for c, t in (state_schema.get(config) or {}).get("columns") or []}
        have = data.columns.get(config, {})
        expected = layout.get(config, [])
        for col in expected + [c for c in have if c not in expected]:
            rows.append({"config": config, "column": col, "in_layout": col in expected,
                         "present": col in have or config not in data.columns,  # unreadable: reported elsewhere
                         "type_matches_manifest": col not in have or types.get(col) == have[col]})
    return pd.DataFrame(rows, columns=["config", "column", "in_layout", "present", "type_matches_manifest"])


def card_configs(root: Path) -> dict[str, dict[str, Any]] | None:
    """The ``configs`` of the card's YAML front matter: {name: {"default": bool, "files": {...}}};
    ``None`` when the card has no readable front matter with a ``configs`` list."""
    front = layout.card_front_matter(root)
    if front is None or not isinstance(front.get("configs"), list):
        return None
    out: dict[str, dict[str, Any]] = {}
    for c in front["configs"]:
        if not isinstance(c, dict) or "config_name" not in c:
            continue
        files = c.get("data_files") or []
        paths = sorted(str(f.get("path")) if isinstance(f, dict) else str(f) for f in files)
        out[str(c["config_name"])] = {"default": bool(c.get("default")), "files": paths}
    return out


def card_view(root: Path, manifest: dict[str, Any]) -> pd.DataFrame:
    card = card_configs(root) or {}
    in_manifest: dict[str, list[str]] = {}
    for rel in manifest_listing(manifest):
        cs = config_of(rel)
        if cs:
            in_manifest.setdefault(cs[0], []).append(rel)
    rows = []
    for config in sorted(set(card) | set(in_manifest) | ({"default"} if not card else set())):
        c = card.get(config)
        rows.append({"config": config, "in_card": c is not None, "in_manifest": config in in_manifest,
                     "card_files_match_manifest": c is None or c["files"] == sorted(in_manifest.get(config, [])),
                     "default_flag_ok": c is None or c["default"] == (config == "default")})
    return pd.DataFrame(rows, columns=["config", "in_card", "in_manifest", "card_files_match_manifest",
                                       "default_flag_ok"])


def default_rows_view(data: ReleaseData) -> pd.DataFrame:
    """Rows of ``default`` against the rows of ``full`` that the release's ``default_rows`` rule selects."""
    from medcalc_maintained.release.tables import DEFAULT_COLUMNS

    rule = data.manifest.get("default_rows")
    full, default = data.config("full"), data.config("default")
    cols = ["split", "uid", "membership_ok", "matches_full", "unique_in_default"]
    if full.empty and default.empty:
        return pd.DataFrame(columns=cols)
    if full.empty or "Label Status" not in full.columns:
        selected: set[tuple[str, int]] = set()
    elif rule == "all":
        selected = set(zip(full["split"].astype(str), full["uid"].astype(int)))
    elif rule == "verified":
        v = full[full["Label Status"].map(in_default)]
        selected = set(zip(v["split"].astype(str), v["uid"].astype(int)))
    else:
        selected = set()
    full_rows = {} if full.empty else {
        (str(s), int(u)): r for s, u, r in zip(full["split"], full["uid"], row_dicts(full))}
    seen: dict[tuple[str, int], int] = {}
    rows: list[dict[str, Any]] = []
    records = [] if default.empty else row_dicts(default)
    for r in records:
        key = (str(r.get("split")), int(r["uid"]) if rc.cell_text(r.get("uid")) is not None else -1)
        seen[key] = seen.get(key, 0) + 1
        ref = full_rows.get(key)
        same = ref is not None and all(rc.cell_text(r.get(c)) == rc.cell_text(ref.get(c)) for c in DEFAULT_COLUMNS if c in r)
        rows.append({"split": key[0], "uid": key[1], "membership_ok": key in selected and rule in ("all", "verified"),
                     "matches_full": same, "unique_in_default": True})
    for row in rows:
        row["unique_in_default"] = seen[(row["split"], row["uid"])] == 1
    for key in sorted(selected - set(seen)):
        rows.append({"split": key[0], "uid": key[1], "membership_ok": False, "matches_full": True,
                     "unique_in_default": True})
    return pd.DataFrame(rows, columns=cols)


def default_instances(data: ReleaseData) -> pd.DataFrame:
    """The ``default`` rows with the provenance columns of ``full`` that the config does not carry
    by design (its own columns, even broken ones, are kept as they are)."""
    from medcalc_maintained.release.tables import DEFAULT_COLUMNS

    default, full = data.config("default"), data.config("full")
    if default.empty or full.empty:
        return pd.DataFrame()
    extra = [c for c in full.columns if c not in DEFAULT_COLUMNS and c not in default.columns]
    left = default.copy()
    left["_k"] = list(zip(left["split"].astype(str), left["uid"].astype("Int64")))
    right = full[extra].copy()
    right["_k"] = list(zip(full["split"].astype(str), full["uid"].astype("Int64")))
    right = right.drop_duplicates("_k")
    return left.merge(right, on="_k", how="left").drop(columns="_k")


def release_views(root: Path, frozen: Mapping[str, Any] | None = None, evidence: Mapping[str, Any] | None = None
                  ) -> tuple[ReleaseData, dict[str, pd.DataFrame]]:
    """The release-only views (everything but the instance suites' views) of release ``root``; ``frozen``: per
    published release, the input verdicts it published (``ledger/published.py: frozen_verdicts``); ``evidence``:
    the ``Evidence`` cells it published (``frozen_evidence``)."""
    data = read_release(root)
    views = {
        "files": files_view(root, data.manifest),
        "config_files": config_files_view(data),
        "config_columns": config_columns_view(data),
        "card": card_view(root, data.manifest),
        "default_rows": default_rows_view(data),
        severity_views.VIEW: severity_views.severity_view(data.config("full"), data.config("corrections")),
        **content_views(data, frozen, evidence),
    }
    return data, views


def content_views(data: ReleaseData, frozen: Mapping[str, Any] | None = None, evidence: Mapping[str, Any] | None = None
                  ) -> dict[str, pd.DataFrame]:
    """The views of :mod:`medcalc_maintained.contracts.release_content`: column types, the mini
    rule, the explanations, the card's features and croissant.json."""
    per_calc = data.manifest.get("mini_per_calculator")
    return {
        "column_types": rc.column_types_view(data.columns),
        "mini_rows": rc.mini_rows_view(data.config("default"), data.config("mini"), per_calc,
                                        data.manifest.get("version")),
        "explanations": rc.explanations_view(data.config("full"), data.config("original")),
        "derivations": rc.derivations_view(data.config("full"), data.manifest.get("version"),
                                           (frozen or {}).get(str(data.manifest.get("version")))),
        "evidence": release_evidence.evidence_view(data.config("full"), data.manifest.get("version"),
                                                   (evidence or {}).get(str(data.manifest.get("version")))),
        "inputs": release_inputs.inputs_view(data.config("full"), data.configs.get(INPUTS),
                                             data.manifest.get("version")),
        "proposals": rc.proposals_view(data.config("full"), data.manifest.get("version")),
        release_conformance.VIEW: release_conformance.conformance_view(data.root, data.config("full"),
                                                                       data.manifest.get("version")),
        "card_features": rc.card_features_view(data.root, data.columns, data.manifest.get("rows")),
        "croissant": rc.croissant_view(data.root, manifest_listing(data.manifest), data.columns),
        "feed": release_feed.feed_view(data.root, data.manifest, manifest_listing(data.manifest)),
    }


def config_suites(suites: list[dict[str, Any]], views: dict[str, pd.DataFrame]) -> list[dict[str, Any]]:
    """Copies of the suites of :data:`CONFIG_SUITES` aimed at each config's instance view
    (``schema@default`` on ``instances@default``): only their expectations on the instance view."""
    out = []
    for config, names in CONFIG_SUITES.items():
        view = CONFIG_VIEW.format(config=config)
        if view not in views:
            continue
        for suite in suites:
            if suite.get("name") not in names:
                continue
            base = suite.get("meta", {}).get("view", "instances")
            exps = [json.loads(json.dumps(e)) for e in suite["expectations"]
                    if e.get("meta", {}).get("view", base) == "instances"]
            for e in exps:
                e.setdefault("meta", {})["view"] = view
            meta = {**suite.get("meta", {}), "view": view, "config": config}
            out.append({**suite, "name": f"{suite['name']}@{config}", "meta": meta, "expectations": exps})
    return out
