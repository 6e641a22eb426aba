"""Building one release as a Hugging Face dataset repository::

    README.md                 rendered from dataset_card.md (YAML front matter with `configs`)
    CHANGELOG.md              every release up to this one, newest first
    manifest.json             sha256 of every other file, row counts, and the release state
    croissant.json            Croissant 1.0 metadata with the Responsible-AI fields
    releases.json             the release feed: every release up to this one (release/feed.py)
    data/<config>/<split>-00000-of-00001.parquet

(the names, and reading a built release back, are :mod:`~medcalc_maintained.release.layout`).
Two builds from the same inputs are byte-identical: rows are sorted, parquet metadata is fixed,
and the only date is the release date. The tables come from stage ``release-tables`` when they
are current (:func:`~medcalc_maintained.release.table_builder.load_tables`), so the build itself
applies no ledger record.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from medcalc_maintained import ledger
from medcalc_maintained.core.atomic import naming_target, scratch_dir, swap_in_dir
from medcalc_maintained.core.errors import DataError, OutRefused
from medcalc_maintained.core.readers import sha256_file
from medcalc_maintained.core.versions import UNRELEASED, full_tag, rules
from medcalc_maintained.project import Project
from medcalc_maintained.release import (
    conformance_files,
    deferred,
    feed,
    grader_rates,
    layout,
    score_shift,
    steps_demo,
    unverified_estimate,
)
from medcalc_maintained.release import upstream as follow
from medcalc_maintained.release.card import render_card, render_changelog
from medcalc_maintained.release.croissant import write_croissant
from medcalc_maintained.release.evidence_changes import evidence_sections
from medcalc_maintained.release.layout import CARD, CHANGELOG, MANIFEST, data_file, read_manifest, release_files
from medcalc_maintained.release.plan import Release, Releases
from medcalc_maintained.release.semver import kind_problem
from medcalc_maintained.release.state import card_sha256, next_version, read_card, release_state
from medcalc_maintained.release.table_builder import build_tables, load_tables
from medcalc_maintained.release.tables import Tables, stored_state, write_parquet

GENERATOR = "medcalc-maintained release build"
PROBE_VERSION = "999999.0.0"  # the working tree as a release after every other (every record applied)


@dataclass
class BuildResult:
    out: Path
    release: Release
    rows: dict[str, dict[str, int]]
    files: dict[str, str]
    state: dict[str, Any]
    draft: bool = False
    reasons: list[str] = field(default_factory=list)
    proposed: pd.DataFrame | None = None  # a draft's unreleased deferred records (:mod:`.deferred`)


def check_current(t: Tables, project: Project, plan: Releases) -> None:
    """For the latest release without unreleased accepted records, the maintained labels of the
    pipeline (``apply``) must be the release's labels: otherwise data/maintained is stale."""
    m = project.maintained
    if not m.is_file() or t.release.version != plan.latest.version or follow.on_another_upstream(project, t.release):
        return  # apply works on the base upstream version: a release on another one has no pipeline twin
    records, _ = ledger.collect(project.ledger_paths)
    if any(r.release == UNRELEASED and r.get("decision") == "accepted" for r in records):
        return
    cols = ["split", "uid", "Ground Truth Answer", "Label Status"]
    have = pd.read_parquet(m, columns=cols).sort_values(["split", "uid"]).reset_index(drop=True).astype(str)
    want = pd.concat([t.tables["full"][s][cols] for s in t.splits]).sort_values(["split", "uid"]).reset_index(drop=True).astype(str)
    if not have.equals(want):
        raise DataError(m, f"maintained labels differ from release {t.release.version} built from the ledger: "
                           "the file is stale (run `dvc repro apply`)")


def state_of(project: Project, release: Release, plan: Releases, template: str) -> dict[str, Any]:
    """The release state of ``release``: from stage ``release-tables`` when current (and made
    with this card template), else computed from its tables."""
    doc = stored_state(project, release)
    if doc is not None and doc["state"].get("card_sha256") == card_sha256(template, release.version):
        return doc["state"]
    return release_state(load_tables(project, release, plan.path).tables, template, release.version)


def _probe(plan: Releases) -> Release:
    latest = plan.latest
    return Release(PROBE_VERSION, latest.date, "major", "draft", latest.default_rows, None, latest.upstream)


def current_state(project: Project) -> tuple[dict[str, Any], Releases]:
    """The state the working tree would release now: every released and unreleased record applied."""
    plan = follow.plan_for(project)
    t = build_tables(project, _probe(plan), plan.path, include_unreleased=True)
    return release_state(t.tables, read_card(project), t.release.version), plan


def draft_release(project: Project, plan: Releases, template: str) -> tuple[Release, list[str]]:
    """The next release as the working tree would make it (version derived), and why."""
    latest = plan.latest
    previous = state_of(project, latest, plan, template)
    probe = _probe(plan)
    current = release_state(build_tables(project, probe, plan.path, include_unreleased=True).tables, template, probe.version)
    version, kind, reasons = next_version(latest.version, previous, current)
    if version is None:
        return latest, ["nothing changed since " + latest.version]
    text = (f"Draft of {version} ({kind}): the accepted ledger records not yet in a release, applied to "
            f"{latest.version}. Not a release; it cannot be published.")
    return Release(version, dt.date.today().isoformat(), kind or "patch", text, latest.default_rows, None), reasons


@dataclass(frozen=True)
class NextVersion:
    """What ``release next-version`` derives: the version after ``latest`` and why."""

    latest: str                 # the latest release of releases.yaml
    version: str | None         # the next version (``None``: nothing changed since ``latest``)
    kind: str | None            # major, minor or patch
    reasons: list[str]


def next_release(project: Project, previous: Path | None = None) -> NextVersion:
    """The next version after the latest release of releases.yaml, from what changed between its
    state (read from ``previous``, a built release of that version, else from its tables) and the
    working tree's (every ledger record applied, released or not). Raises :class:`DataError` when
    ``previous`` is another release."""
    current, plan = current_state(project)
    if previous is None:
        before = state_of(project, plan.latest, plan, read_card(project))
    else:
        man = read_manifest(previous)
        if man.get("version") != plan.latest.version:
            raise DataError(previous, f"is release {man.get('version')}, not the latest {plan.latest.version}")
        before = man["state"]
    version, kind, reasons = next_version(plan.latest.version, before, current)
    return NextVersion(plan.latest.version, version, kind, reasons)


def previous_of(previous: Tables | None) -> dict[str, Any] | None:
    """What the manifest records of the previous release: its version and its calculators per
    split (``"<id>:<name>"``), so that a calculator it had is counted by the ``min_per_calculator``
    gate of this release even when no row of it is left."""
    if previous is None:
        return None
    calcs = {}
    for s in previous.splits:
        full = previous.tables["full"][s]
        calcs[s] = sorted({f"{int(i)}:{n}" for i, n in zip(full["Calculator ID"], full["Calculator Name"])},
                          key=lambda x: (int(x.split(":")[0]), x))
    return {"version": previous.release.version, "calculators": calcs}


def _manifest(plan: Releases, rel: Release, t: Tables, files: dict[str, str], state: dict[str, Any],
              draft: bool, reasons: list[str], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    manifest = {
        "name": plan.repo_id,
        "version": rel.version,
        "date": rel.date,
        "kind": rel.kind,
        "description": rel.description,
        "tag": full_tag(rel.version),
        "default_rows": rel.default_rows,
        "releases": [r.version for r in plan.upto(rel.version)],
        "generator": GENERATOR,
        "rows": t.rows(),
        "mini_per_calculator": t.mini_per_calculator,
        "files": files,
        "state": state,
    }
    if previous is not None:
        manifest["previous"] = previous
    if draft:
        manifest["draft"] = True
        manifest["draft_reasons"] = reasons
    return manifest


def tables_upto(project: Project, plan: Releases, t: Tables, previous: Tables | None) -> dict[str, Tables]:
    """The tables of every release up to ``t``'s, by version: those at hand, else each earlier
    release's read once (stage ``release-tables``'s files, or built now)."""
    known = {t.release.version: t, **({previous.release.version: previous} if previous is not None else {})}
    for r in plan.upto(t.release.version):
        if r.version not in known and r in plan.releases:
            known[r.version] = load_tables(project, r, plan.path)
    return known


def release_history(plan: Releases, t: Tables, known: dict[str, Tables]
                    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, list[str]]]:
    """Row counts per config and split, :meth:`Tables.identities`, and the evidence review sections
    (``release/evidence_changes.py``) of every release up to ``t``'s whose tables are in ``known``
    (:func:`tables_upto`), for the changelog."""
    order = [r.version for r in plan.upto(t.release.version) if r.version in known]
    evidence = {b: evidence_sections(known[a].combined("full"), known[b].combined("full"), b, a)
                for a, b in zip(order, order[1:]) if rules(b).evidence_gate}
    return ({v: x.rows() for v, x in known.items()}, {v: x.identities() for v, x in known.items()},
            {v: lines for v, lines in evidence.items() if lines})


def check_kind(plan: Releases, t: Tables, previous: Tables | None, template: str, base: str | None = None) -> None:
    """Refuse a release whose declared kind is not the bump derived from the previous release
    (a release on another upstream version than the previous one must be major; ``base``: the
    upstream version of releases that name none)."""
    rel = t.release
    if previous is None:
        return
    ups = (rel.upstream or base, previous.release.upstream or base)
    if ups[0] != ups[1]:  # another upstream version: new rows, always major
        if rel.kind != "major":
            raise DataError(plan.path, f"release {rel.version} is built on upstream {ups[0]} and "
                            f"{previous.release.version} on {ups[1]}: a major change",
                            row=f"release {rel.version}", field="kind")
        return
    problem = kind_problem(rel.version, rel.kind, release_state(previous.tables, template, previous.release.version),
                           release_state(t.tables, template, rel.version), previous.combined("full"), t.combined("full"),
                           previous.release.version, (previous.release.default_rows, rel.default_rows))
    if problem:
        raise DataError(plan.path, problem, row=f"release {rel.version}", field="kind")


def write_build(out: Path, project: Project, plan: Releases, t: Tables, template: str, *, draft: bool = False,
                reasons: list[str] | None = None, say: Callable[[str], None] = lambda _m: None,
                rows: dict[str, Any] | None = None, identities: dict[str, Any] | None = None,
                previous: dict[str, Any] | None = None, proposed: pd.DataFrame | None = None,
                evidence: dict[str, list[str]] | None = None, known: dict[str, Tables] | None = None,
                shift: dict[str, Any] | None = None) -> BuildResult:
    """Write the release of tables ``t`` into ``out``; the directory is replaced only when every
    file was written (``rows``, ``identities``: row counts and row identities of earlier releases
    for the changelog; ``proposed``: a draft's deferred records, listed at the top of its changelog;
    ``known``: every release's tables up to ``t``'s, for the feed; ``shift``: the worked example's
    score shift, :func:`score_shift.measure`)."""
    rel, reasons = t.release, list(reasons or [])
    out = Path(out)
    check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = scratch_dir(out)  # also removes the scratch directories of killed builds
    try:
        say("writing parquet files")
        for cfg, splits in t.published().items():
            for s in splits:
                write_parquet(t.tables[cfg][s], tmp / data_file(cfg, s))
        data_hashes = {f: sha256_file(tmp / f) for f in release_files(tmp)}  # hashed once: feed and manifest
        say(f"writing {feed.FEED_FILE}")
        doc = feed.release_feed(plan, known or {rel.version: t}, rel.version, data_hashes, project.root,
                                project.upstream_base)
        feed.write_feed(tmp, doc)
        say("writing croissant.json")
        write_croissant(t, plan, tmp)
        if conformance_files.copy_into(project.errata_dir, tmp, rel.version):
            say("copying the conformance vectors and errata")
        say("rendering the card and the changelog")
        estimates = unverified_estimate.read(project.unverified_estimate)
        opening = score_shift.banner(feed.latest_entry(doc), shift, score_shift.example_text(project))
        (tmp / CARD).write_text(render_card(template, project.card_template, t, plan, estimates,
                                            follow.quarantine_text(project, rel),
                                            {"score_shift": opening, "feed_table": feed.feed_table(doc),
                                             "grader_check": grader_card_text(project, rel.version),
                                             "conformance": conformance_files.card_text(project.errata_dir,
                                                                                        rel.version),
                                             "steps_demo": steps_demo.card_text(project, t)}),
                                encoding="utf-8")
        changelog = render_changelog(plan.upto(rel.version), t.records, rows, identities, evidence)
        if draft:
            changelog = deferred.add_to_changelog(changelog, deferred.draft_preamble(
                rel.version, reasons, proposed if proposed is not None else pd.DataFrame(columns=deferred.COLUMNS)))
        (tmp / CHANGELOG).write_text(follow.add_to_changelog(changelog, project, plan, rel.version), encoding="utf-8")
        files = {f: data_hashes.get(f) or sha256_file(tmp / f) for f in release_files(tmp)}
        state = release_state(t.tables, template, rel.version)
        manifest = _manifest(plan, rel, t, files, state, draft, reasons, previous)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
        swap_in_dir(tmp, out, check=check_out)  # one atomic exchange: out is always a complete build
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return BuildResult(out, rel, t.rows(), files, state, draft, reasons, proposed)


def grader_card_text(project: Project, version: str) -> str:
    """The card's graders' error rates (:mod:`.grader_rates`) for a release from ``CARD_GRADERS_FROM`` on,
    from stage ``grader-check``'s report; empty before (those cards have no such block)."""
    if not rules(version).card_graders:
        return ""
    return grader_rates.text(grader_rates.read(project.grader_check_report), version)


def check_out(out: Path) -> None:
    """Refuse (:class:`OutRefused`) an ``out`` that is neither missing, empty nor an earlier build (a
    symbolic link, a file, a folder without manifest.json, or one holding what no build writes):
    checked before the build and again at the moment of the swap."""
    if out.is_symlink() or (out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MANIFEST).is_file()))):
        raise OutRefused(out, "exists and is not a release build (no manifest.json); refusing to replace it")
    if out.is_dir() and (out / MANIFEST).is_file():
        _check_replaceable(out)


def _check_replaceable(out: Path) -> None:
    """Refuse to replace ``out`` unless it holds only an earlier build: manifest.json and the
    top-level entries of the files it lists (a folder that merely has a manifest.json is kept)."""
    try:
        listed = read_manifest(out).get("files") or {}
    except DataError as exc:
        raise OutRefused(out, f"exists and is not a release build ({exc.problem}); refusing to replace it") from None
    known = {MANIFEST} | {str(f).split("/", 1)[0] for f in listed}
    other = sorted(p.name for p in out.iterdir() if p.name not in known or p.is_symlink())
    if other:
        raise OutRefused(out, f"holds {', '.join(repr(n) for n in other[:3])}{', ...' if len(other) > 3 else ''}, "
                             "which no release build writes; refusing to replace it (choose another --out)")


def proposed_of(project: Project, t: Tables) -> pd.DataFrame:
    """The unreleased deferred records of the working tree's ledger (:func:`deferred.proposed_frame`)."""
    names = {(str(s), int(u)): str(n) for sp in t.splits
             for s, u, n in zip(t.tables["full"][sp]["split"], t.tables["full"][sp]["uid"],
                                t.tables["full"][sp]["Calculator Name"])}
    return deferred.proposed_frame(ledger.load(project.ledger_paths), names)


def pipeline_tables(project: Project, release_dir: Path) -> Tables | None:
    """The tables the pipeline builds for the release in ``release_dir`` (by its manifest's version:
    stage ``release-tables``'s when current, else built now; a draft's with the unreleased records
    under its version), which ``validate`` and ``publish`` compare the release with. ``None`` for a
    directory that is no release or names no release of releases.yaml (its own contracts say so)."""
    man = layout.manifest_or_empty(Path(release_dir))
    version = str(man.get("version"))
    plan = follow.plan_for(project)
    if man.get("draft"):
        latest = plan.latest
        rel = Release(version, str(man.get("date")), str(man.get("kind") or "patch"), str(man.get("description") or ""),
                      str(man.get("default_rows") or latest.default_rows), None, latest.upstream)
        return build_tables(project, rel, plan.path, include_unreleased=True)
    if version not in {r.version for r in plan.releases}:
        return None
    return load_tables(project, plan.get(version), plan.path)


def _in_pipeline(project: Project, out: Path) -> bool:
    """Whether ``out`` is, holds or lies inside a path the pipeline writes or reads (the release
    build first of all): where a draft must never go."""
    target = Path(out).resolve()
    known = [p for p in project.known_paths() if p != project.release_draft.resolve()]
    return any(target == p or target.is_relative_to(p) or p.is_relative_to(target) for p in known)


def build(project: Project, out: Path, *, version: str | None = None, draft: bool = False,
          progress: Callable[[str], None] | None = None) -> BuildResult:
    """Build release ``version`` (default: the latest in releases.yaml) into ``out``, atomically:
    the directory is replaced only when the whole build succeeded.

    ``draft``: build a preview of the next release instead -- every accepted record applied, the
    version derived with :func:`~medcalc_maintained.release.state.derive_bump` (the latest release
    when no accepted record is new); its manifest says ``draft: true``, publish refuses it, and its
    changelog lists the unreleased deferred records (proposals) in a section of their own.
    """
    if draft and _in_pipeline(project, out):
        raise DataError(f"--out {out}", f"is the pipeline's output {project.release_build} or another path it "
                                        f"writes; a draft goes elsewhere (default {project.release_draft})")
    check_out(Path(out))  # before any work
    say = progress or (lambda _msg: None)
    plan = follow.plan_for(project)
    template = read_card(project)
    reasons: list[str] = []
    ahead = False  # a draft with accepted records that no release carries yet
    if draft:
        if version is not None:
            raise DataError("--version", "a draft's version is derived; do not pass --version with --draft")
        say("deriving the next version")
        rel, reasons = draft_release(project, plan, template)
        ahead = rel.version != plan.latest.version
        if ahead:
            plan = plan.with_draft(rel)
    else:
        rel = plan.get(version)
    if ahead:
        say(f"applying the ledger up to {rel.version}")
        t = build_tables(project, rel, plan.path, include_unreleased=True)
    else:
        say(f"reading the tables of {rel.version}")
        t = load_tables(project, rel, plan.path)
        check_current(t, project, plan)
    prev = plan.previous(rel.version)
    previous = load_tables(project, prev, plan.path) if prev is not None else None
    if not draft:
        say("checking the declared kind against the changes since the previous release")
        check_kind(plan, t, previous, template, project.upstream_base)
    known = tables_upto(project, plan, t, previous)
    rows, identities, evidence = release_history(plan, t, known)
    proposed = proposed_of(project, t) if draft else None
    shift = score_shift.measure(project, previous, t)
    with naming_target(out, always=True):  # a full disk names the release directory (left as it was)
        return write_build(out, project, plan, t, template, draft=draft, reasons=reasons, say=say, rows=rows,
                           identities=identities, previous=previous_of(previous), proposed=proposed,
                           evidence=evidence, known=known, shift=shift)
