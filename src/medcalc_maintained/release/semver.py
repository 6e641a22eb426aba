"""Semantic versions enforced: a release's declared ``kind`` must be the bump derived from what
changed since the previous release (:func:`~medcalc_maintained.release.state.derive_bump`), and
the refusal names the rows that force the derived kind.

``release build`` checks it against the previous release's tables; ``release publish`` against the
previous release as published on the target (its manifest and ``full`` config).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.core.versions import full_tag, version_key
from medcalc_maintained.release.layout import FEED, MANIFEST, config_of, manifest_listing, read_full
from medcalc_maintained.release.state import derive_bump

SHOWN = 5  # rows named per reason


def _key_rows(full: pd.DataFrame | None) -> dict[tuple[str, int], dict[str, Any]]:
    if full is None or full.empty:
        return {}
    return {(str(s), int(u)): r for s, u, r in zip(full["split"], full["uid"], row_dicts(full))}


def _uid(key: tuple[str, int]) -> str:
    return f"{key[0]} uid {key[1]}"


def _class(label: Any, otype: Any) -> str:
    kind = parse_answer(str(label), str(otype)).kind
    return "number" if kind in ("decimal", "integer") else kind


def row_evidence(previous: pd.DataFrame | None, current: pd.DataFrame | None, kind: str | None) -> list[str]:
    """Phrases naming the rows that make the change from ``previous`` to ``current`` (two ``full``
    configs) a ``kind`` change: added or removed rows and new label classes for major, changed
    labels, limits or statuses for minor."""
    a, b = _key_rows(previous), _key_rows(current)
    out: list[str] = []
    if kind == "major":
        added, removed = sorted(set(b) - set(a)), sorted(set(a) - set(b))
        out += [f"adds row {_uid(k)}" for k in added[:SHOWN]] + [f"removes row {_uid(k)}" for k in removed[:SHOWN]]
        space: dict[str, set[str]] = {}
        for r in a.values():
            space.setdefault(str(r.get("Output Type")), set()).add(_class(r.get("Ground Truth Answer"), r.get("Output Type")))
        new_class = []
        for k in sorted(set(a) & set(b)):
            r = b[k]
            cls = _class(r.get("Ground Truth Answer"), r.get("Output Type"))
            if cls not in space.get(str(r.get("Output Type")), set()):
                new_class.append(f"changes the label of {_uid(k)} ({a[k].get('Ground Truth Answer')} -> "
                                 f"{r.get('Ground Truth Answer')}), a new {cls} label of {r.get('Output Type')} outputs")
        out += new_class[:SHOWN]
    if kind in ("major", "minor"):
        changed = []
        for k in sorted(set(a) & set(b)):
            x, y = a[k], b[k]
            if str(x.get("Ground Truth Answer")) != str(y.get("Ground Truth Answer")):
                changed.append(f"changes the label of {_uid(k)} ({x.get('Ground Truth Answer')} -> {y.get('Ground Truth Answer')})")
            elif str(x.get("Label Status")) != str(y.get("Label Status")):
                changed.append(f"changes the label status of {_uid(k)} ({x.get('Label Status')} -> {y.get('Label Status')})")
            elif (str(x.get("Lower Limit")), str(x.get("Upper Limit"))) != (str(y.get("Lower Limit")), str(y.get("Upper Limit"))):
                changed.append(f"changes the limits of {_uid(k)}")
        if kind == "minor" or not out:
            out += changed[:SHOWN] + ([f"and {len(changed) - SHOWN} more row(s)"] if len(changed) > SHOWN else [])
    return out


def kind_problem(version: str, declared: str, previous_state: dict[str, Any], current_state: dict[str, Any],
                 previous_full: pd.DataFrame | None, current_full: pd.DataFrame | None, against: str,
                 rules: tuple[Any, Any] = (None, None)) -> str | None:
    """Why release ``version`` declared ``declared`` is refused (``None`` when the declared kind is
    the derived bump; a release that changes nothing but metadata may be a patch). ``rules``: the
    ``default_rows`` of the previous and this release; a change of rule changes which rows
    ``load_dataset(...)`` returns, a major change."""
    derived, reasons = derive_bump(previous_state, current_state)
    if rules[0] != rules[1]:
        rule = f"changes the rows of the default config (default_rows {rules[0]} -> {rules[1]})"
        derived, reasons, previous_full = "major", [rule] + (reasons if derived == "major" else []), None
    if derived == declared or (derived is None and declared == "patch"):
        return None
    if derived is None:
        return (f"release {version} is declared {declared} but nothing changed since {against} "
                "(schema, rows, labels and card are the same): at most a patch")
    rows = row_evidence(previous_full, current_full, derived) if previous_full is not None else []
    what = "; ".join(rows or reasons)
    why = "" if not rows else f" ({'; '.join(reasons)})"
    return f"release {version} is declared {declared} but {what}: a {derived} change since {against}{why}"


def history_problem(release_dir: Path, earlier: list[str], fetch: Callable[[str, str], bytes]) -> str | None:
    """Why the release feed (``releases.json``) of ``release_dir`` rewrites an earlier release: its
    entry for a version already published on the target names other data files than the target's
    manifest at that tag (a published release is never replaced, as a Hub tag or a PyPI file)."""
    path = Path(release_dir) / FEED
    try:
        feed = json.loads(path.read_text(encoding="utf-8"))
        entries = {str(e["version"]): e for e in feed["releases"]}
    except (OSError, ValueError, KeyError, TypeError):
        return f"{path} is not a release feed with an entry per release: rebuild the release"
    for version in earlier:
        entry = entries.get(version)
        mine = {str(f): str(h) for c in ((entry or {}).get("configs") or {}).values()
                for f, h in ((c or {}).get("files") or {}).items()}
        tag = full_tag(version)
        published = {f: h for f, h in manifest_listing(json.loads(fetch(tag, MANIFEST).decode("utf-8"))).items()
                     if config_of(f)}
        if mine != published:
            f = next((f for f in sorted(set(mine) | set(published)) if mine.get(f) != published.get(f)), "")
            return (f"{path}: the entry for {version} differs from what the target published at {tag} ({f}: sha256 "
                    f"{str(mine.get(f))[:12]} here, {str(published.get(f))[:12]} there): a published release is never "
                    "rewritten; restore the ledger and verdicts it was built from (`release freeze` records them)")
    return None


def publish_problem(man: dict[str, Any], release_dir: Path, tags: set[str],
                    fetch: Callable[[str, str], bytes]) -> str | None:
    """Why publishing the release of manifest ``man`` to a target holding ``tags`` is refused:
    an earlier release of releases.yaml (the manifest's ``releases``) is not published there, or
    the declared kind is not the bump derived against the previous release as published
    (``fetch(tag, path) -> bytes`` reads a file of the target at a tag)."""
    version = str(man.get("version"))
    listed = man.get("releases")
    if not isinstance(listed, list) or version not in listed:
        return (f"{Path(release_dir) / MANIFEST} lists no `releases` up to {version} (built by an older "
                "version of this package): rebuild the release")
    earlier = [str(v) for v in listed if version_key(str(v)) < version_key(version)]
    missing = [v for v in earlier if full_tag(v) not in tags]
    if missing:
        return (f"release {missing[0]} of releases.yaml is not published on the target (no tag {full_tag(missing[0])}); "
                f"publish releases in order: {', '.join(missing)} before {version}")
    if not earlier:
        return None
    rewritten = history_problem(release_dir, earlier, fetch)
    if rewritten:
        return rewritten
    prev, tag = earlier[-1], full_tag(earlier[-1])
    prev_man = json.loads(fetch(tag, MANIFEST).decode("utf-8"))
    prev_full = read_full(list(prev_man.get("files") or {}), lambda f: fetch(tag, f))
    cur_full = read_full(list(man.get("files") or {}), lambda f: (Path(release_dir) / f).read_bytes())
    return kind_problem(version, str(man.get("kind")), prev_man.get("state") or {}, man.get("state") or {},
                        prev_full, cur_full, f"{prev} ({tag} on the target)",
                        (prev_man.get("default_rows"), man.get("default_rows")))
