"""Commands ``release tables|build|publish|freeze|next-version|list``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from medcalc_maintained.cli.common import console, fail_ledger, guarded
from medcalc_maintained.cli.common import fail as _fail
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.project import Project

release_app = typer.Typer(
    help=(
        "Semantic-versioned releases of the maintained benchmark (releases.yaml): build a Hugging Face "
        "dataset repository, derive the next version, publish to the Hub or a git repository."
    ),
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


def _print_rows(rows: dict[str, dict[str, int]], title: str = "rows") -> None:
    table = Table(title=title)
    splits = sorted({s for by in rows.values() for s in by})
    table.add_column("config")
    for s in splits:
        table.add_column(s, justify="right")
    for cfg, by in rows.items():
        table.add_row(cfg, *(str(by.get(s, 0)) for s in splits))
    console.print(table)


@release_app.command("tables")
def tables_cmd() -> None:
    """Build every config of every release of releases.yaml once (stage `release-tables`).

    Writes data/releases/<version>/<config>.parquet (all splits, the release's column types) and
    state.json for each release; `release build` and the comparisons read them instead of applying
    the ledger again. The releases are built side by side, one worker process per core.
    """
    from medcalc_maintained.ledger import LedgerError
    from medcalc_maintained.stages import release_tables as stage

    project = Project.load()
    try:
        written = stage.run(project, workers=None, progress="building the tables of every release")
    except LedgerError as exc:
        fail_ledger(exc)
    except DataError as exc:
        _fail(exc)
    for version, files in written.items():
        console.print(f"release-tables: {version} -> {files[0].parent} ({len(files)} files)", highlight=False)


@release_app.command("build")
def build_cmd(
    out: Optional[Path] = typer.Option(None, "--out", help="Directory to write (replaced atomically; default: params.release.out, build/release)."),
    version: Optional[str] = typer.Option(None, "--version", help="Release to build (default: the latest in releases.yaml)."),
    draft: bool = typer.Option(False, "--draft", help="Preview the next release: apply the unreleased accepted records too, derive its version, list the unreleased deferred records (proposals) without applying them; cannot be published."),
) -> None:
    """Build one release as a Hugging Face dataset repository in OUT.

    Applies the ledger records of the releases up to VERSION to the upstream instances (or reads
    the tables of stage `release-tables` when current) and writes README.md (from
    dataset_card.md), CHANGELOG.md, data/<config>/<split>-00000-of-00001.parquet for the configs
    default, full, original and corrections, and manifest.json (sha256 of every file). The same
    inputs always give byte-identical files. Refuses a release whose declared kind in releases.yaml
    is not the bump derived from the changes since the previous release, naming the rows that
    force the derived kind. On any problem nothing is written.

    With --draft: a preview of the next release (the latest one when no accepted record is new),
    marked `draft: true` in its manifest so that `release publish` refuses it; its CHANGELOG.md and
    the output list every unreleased deferred record (`propose`'s proposals) under "Proposed
    (deferred, not in this release)" -- record, uid, calculator, old -> proposed value, rationale
    (shortened) -- and no label includes them.
    """
    from medcalc_maintained.ledger import LedgerError
    from medcalc_maintained.stages import release as stage

    try:
        project = guarded(out)
        with console.status("building the release") as status:
            res = stage.run(project, out=out, version=version, draft=draft, progress=lambda m: status.update(m))
    except LedgerError as exc:
        fail_ledger(exc)
    except DataError as exc:
        _fail(exc)
    what = "draft of release" if res.draft else "release"
    console.print(f"{what} {res.release.version} ({res.release.kind}, {res.release.date}) -> {res.out}", highlight=False)
    for r in res.reasons:
        console.print(f"  - {r}", highlight=False)
    _print_rows(res.rows)
    if res.draft:
        _print_proposed(res.proposed)
    console.print(f"{len(res.files) + 1} files, manifest {res.out / 'manifest.json'}")


def _print_proposed(proposed) -> None:
    """A draft's unreleased deferred records, one line each (also at the top of its CHANGELOG.md)."""
    from medcalc_maintained.release import deferred

    rows = deferred.proposed_rows(proposed) if proposed is not None else []
    console.print(f"{deferred.TITLE}: {len(rows)} record(s)" + ("; no label of this draft includes them" if rows else ""),
                  highlight=False)
    for rid, uid, calc, change, why, who, day in rows:
        console.print(f"  {escape(str(rid))}  uid {uid} ({escape(str(calc))}): {escape(change)}  "
                      f"{escape(why)} ({escape(str(who))}, {day})", highlight=False, soft_wrap=True)


@release_app.command("publish")
def publish_cmd(
    target: str = typer.Option(..., "--target", help="hf://ORG/NAME (token from $HF_TOKEN) or file:///path/repo.git (a bare git repository)."),
    release_dir: Optional[Path] = typer.Option(None, "--release-dir", help="A built release (`release build`; default: params.release.out, build/release)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Check and print what would happen; write nothing."),
) -> None:
    """Publish a built release: one commit with the release's files, tagged vMAJOR.MINOR.PATCH
    (and vMAJOR.MINOR for the first release of a minor line).

    Always writes branch `main` (created when missing) and points the target's HEAD at it.
    Refuses, leaving the target unchanged, when the release fails its manifest, when its tag
    already exists (tags are never moved), when a later version is already published, when an
    earlier release of releases.yaml is not published yet, when its declared kind is not the bump
    derived against the previous release on the target, when its release feed's entry for an earlier
    release differs from what the target published at that tag (a published release is never
    rewritten), or when it fails the data contracts (`validate`, which also compares every config with
    what the pipeline builds for the version); the contracts, the slowest check, run last. The Hub token is read from HF_TOKEN
    and never printed.
    """
    from medcalc_maintained.contracts import validate as contracts
    from medcalc_maintained.release import publish
    from medcalc_maintained.release.build import pipeline_tables

    try:
        project = Project.load()
        release_dir = Path(release_dir or project.release_build).resolve()
        with console.status("checking the release (manifest, target and data contracts)"):
            # the gate: run by publish after its manifest and target checks, before anything is written
            res = publish.publish(release_dir, target, lambda: contracts.validate_release(
                release_dir, expected=pipeline_tables(project, release_dir)), dry_run=dry_run, releases=project.releases_file)
    except publish.PublishRefused as exc:
        _fail(exc, code=1)
    except DataError as exc:
        _fail(exc)
    for note in res.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    head = "would" if res.dry_run else "did"
    for a in res.actions:
        console.print(f"{head}: {a}", highlight=False, soft_wrap=True)
    if res.dry_run:
        console.print("dry run: nothing was written", highlight=False)
    else:
        console.print(f"published {res.version} to {res.target} as commit {str(res.commit)[:12]} "
                      f"(tags {', '.join(res.tags)})", highlight=False, soft_wrap=True)


@release_app.command("freeze")
def freeze_cmd(
    version: str = typer.Argument(..., help="The published release, e.g. 2.2.0."),
    source: Path = typer.Option(..., "--from", help="What was published: the built release directory (or a checkout of its tag), or its release-tables directory data/releases/<version>."),
) -> None:
    """Freeze a published release: record, in params.release.published (data/released/published.json),
    the ledger records it carried (each by a fingerprint of its ledger data) and the evidence
    verifier's verdict on every recorded input it published.

    From then on `apply`, the release tables and `validate` refuse any record that claims this
    release without being one of them, differs from the one it published, or was decided after its
    date, and any published record the ledger lost; the release's derivations keep the verdicts it
    published whatever the verifier says later. Run it once, after `release publish`. Refuses to
    change an entry already frozen (exit 2); an identical one is left as it is.
    """
    from medcalc_maintained.ledger import LedgerError
    from medcalc_maintained.release.freeze import freeze

    try:
        project = Project.load()
        entry, new = freeze(project, version, source)
    except LedgerError as exc:
        fail_ledger(exc)
    except DataError as exc:
        _fail(exc)
    what = "froze" if new else "already frozen, unchanged:"
    console.print(f"{what} release {version} ({entry.date}): {len(entry.records)} record(s), "
                  f"{len(entry.verdicts)} input verdict(s) -> {project.published}", highlight=False)


@release_app.command("next-version")
def next_version_cmd(
    previous: Optional[Path] = typer.Option(None, "--previous", help="A built release of the latest version to compare with (default: its tables, from stage `release-tables` or built now)."),
) -> None:
    """Derive the next version from what changed since the latest release in releases.yaml.

    Compares the release state (schema, rows, calculators, label space, labels, card template) of
    the latest release with the working tree (every ledger record applied, released or not):
    MAJOR for a schema or label-space change, MINOR for label changes, PATCH for the card only.
    Exits 1 when nothing changed.
    """
    from medcalc_maintained.ledger import LedgerError
    from medcalc_maintained.release.build import next_release

    try:
        nxt = next_release(Project.load(), previous)
    except LedgerError as exc:
        fail_ledger(exc)
    except DataError as exc:
        _fail(exc)
    if nxt.version is None:
        console.print(f"nothing changed since {nxt.latest}")
        raise typer.Exit(1)
    console.print(f"next version: [bold]{nxt.version}[/] ({nxt.kind}) after {nxt.latest}")
    for r in nxt.reasons:
        console.print(f"  - {r}", highlight=False)


@release_app.command("list")
def list_cmd() -> None:
    """List the releases of releases.yaml with their tags."""
    from medcalc_maintained.core.versions import full_tag, short_tag
    from medcalc_maintained.release.plan import load_releases

    try:
        plan = load_releases(Project.load().releases_file)
    except DataError as exc:
        _fail(exc)
    t = Table(title=f"releases of {plan.repo_id}")
    for c in ("version", "date", "kind", "default rows", "ledger ref", "tags"):
        t.add_column(c)
    for r in plan.releases:
        t.add_row(r.version, r.date, r.kind, r.default_rows, r.ledger_ref or "-", f"{full_tag(r.version)}, {short_tag(r.version)}")
    console.print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(release_app, name="release")
