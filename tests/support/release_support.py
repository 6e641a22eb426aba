"""Helpers of the tests that build a release in a writable copy of the shared pipeline project, and
a small release table written in the test (:func:`release_rows`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import yaml
from typer.testing import CliRunner

from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from medcalc_maintained.release.tables import DEFAULT_COLUMNS, typed_frame
from tests.support.once_per_run import shared_dir
from tests.support.paths import ROOT

runner = CliRunner()


def cli(root: Path, *args: str):
    """The CLI run in project ``root`` (MEDCALC_ROOT)."""
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})


def built_copy(tmp_path_factory, pipeline_project: Path, version: str, name: str) -> tuple[Path, Path]:
    """(project root, release directory): a copy of ``pipeline_project`` with release ``version``
    built into ``build/v<version>``."""
    root = tmp_path_factory.mktemp(name) / "project"
    shutil.copytree(pipeline_project, root)
    out = root / "build" / f"v{version}"
    r = cli(root, "release", "build", "--out", str(out), "--version", version)
    assert r.exit_code == 0, r.output
    return root, out


RELEASES = ("1.0.0", "2.0.0", "2.1.0", "2.2.0")


def _build_and_publish(repro_project: Path, root: Path) -> None:
    """A copy of ``repro_project`` in ``root`` with its release tables written and every release of
    :data:`RELEASES` built into
    ``build/v<version>`` and published, in order, to the bare repository olah serves as a local
    mirror (``mirrors/datasets/org/medcalc-maintained``)."""
    shutil.copytree(repro_project, root)
    # the stored release tables, as `dvc repro` leaves them: what reads a release by version
    # (`evaluate`/`regrade --against v1.0`) never applies the ledger itself
    r = cli(root, "release", "tables")
    assert r.exit_code == 0, r.output
    repo = root / "mirrors" / "datasets" / "org" / "medcalc-maintained"
    for version in RELEASES:
        out = root / "build" / f"v{version}"
        r = cli(root, "release", "build", "--out", str(out), "--version", version)
        assert r.exit_code == 0, r.output
        r = cli(root, "release", "publish", "--release-dir", str(out), "--target", f"file://{repo}")
        assert r.exit_code == 0, r.output


def published_project(tmp_path_factory, request) -> Path:
    """The project root of :func:`_build_and_publish`, read-only: built once per pytest run, across xdist
    workers too (:func:`tests.support.once_per_run.shared_dir`). ``repro_project`` is only set up when this
    process builds."""
    return shared_dir(tmp_path_factory, "published-releases",
                      lambda root: _build_and_publish(request.getfixturevalue("repro_project"), root))


def release_rows(spec: list[tuple[int, int, str]]) -> pd.DataFrame:
    """A small default-layout release table: (Row Number, Calculator ID, Label Status) per row, the
    row number as its label and ``x`` in every other column."""
    rows = []
    for uid, cid, status in spec:
        row = {c: "x" for c in DEFAULT_COLUMNS}
        row.update({"Row Number": uid, "Calculator ID": cid, "Label Status": status, "Ground Truth Answer": str(uid)})
        rows.append(row)
    return typed_frame(pd.DataFrame(rows, columns=DEFAULT_COLUMNS))


# ---------------------------------------------------------------- a small project for the release commands

def write_releases(path: Path, entries: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"releases": entries}, sort_keys=False))
    return path


def entry(version, kind, date="2026-01-01", **kw):
    return {"version": version, "date": date, "kind": kind, "description": "d", **kw}


def rec(**kw) -> dict:
    base = {"id": "T-0001", "uid": 1, "split": "test", "release": "2.0.0", "old_value": "25.238", "new_value": "30",
            "decision": "accepted", "label_status": "corrected", "error_type": "extraction",
            "rationale": "Weight from an earlier admission.", "evidence": ["note"], "source": "physician",
            "reviewer": {"id": "md-1", "role": "physician", "specialty": "nephrology"}, "blinded": True,
            "decided_at": "2026-01-15"}
    base.update(kw)
    if base["release"] is None:  # unreleased: no release field
        del base["release"]
    return base


def make_project(root: Path, instances: pd.DataFrame, records: list[dict]) -> Path:
    (root / "data" / "interim").mkdir(parents=True)
    instances.to_parquet(root / "data" / "interim" / "instances.parquet", index=False)
    (root / "data" / "corrections").mkdir(parents=True)
    (root / "data" / "corrections" / "batch.yaml").write_text(ledger.dump(records, root), encoding="utf-8")
    (root / "params.yaml").write_text(yaml.safe_dump({"apply": {"ledger": ["data/corrections"], "out": "data/maintained"}}))
    shutil.copy(ROOT / "dataset_card.md", root / "dataset_card.md")
    write_releases(root / "releases.yaml", [entry("1.0.0", "major", default_rows="all"), entry("2.0.0", "major")])
    return root


def invoke(root: Path, *args: str):
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})
