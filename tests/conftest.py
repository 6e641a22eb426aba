"""Shared fixtures: where the project, the pulled upstream data and ../shared are.

The session fixtures that compute on the real data (``real_instances``, ``real_recompute``,
``campaign_table``, ``campaign_records``, ``real_maintained``, the maintained frame of
``pipeline_project``) are computed once per run, not once per xdist worker: the first worker to need
one pickles it under the run's temporary root and the other loads it (``_shared``). The read-only
project directories that run pipeline stages (``repro_project``, ``tables_project``) are likewise
built once per run in that root (tests/support/once_per_run.py).
"""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.support.once_per_run import shared_dir
from tests.support.paths import ROOT, SHARED


def _shared(tmp_path_factory, name: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, once for all the xdist workers of this run (the run's temporary root holds the
    pickle, under a file lock); without xdist, computed here."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return compute()
    from filelock import FileLock

    path = tmp_path_factory.getbasetemp().parent / f"shared-{name}.pickle"
    with FileLock(f"{path}.lock"):
        if path.is_file():
            return pickle.loads(path.read_bytes())
        value = compute()
        path.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        return value


def upstream_file(rel: str) -> Path:
    """An upstream file: the DVC-pulled copy under data/upstream, else ../shared/data."""
    for base in (ROOT / "data" / "upstream", SHARED / "data"):
        p = base / rel
        if p.is_file():
            return p
    pytest.skip(f"upstream file {rel} not available (run `make data`)")


@pytest.fixture(scope="session")
def v1_test_csv() -> Path:
    return upstream_file("medcalc-bench/v1.0/test_data.csv")


@pytest.fixture(scope="session")
def old_test_csv() -> Path:
    return upstream_file("medcalc-bench/2024-06/test_data.csv")


@pytest.fixture(scope="session")
def campaign_dir() -> Path:
    return upstream_file("validate-medcalc-labels/medcalc_v1_corrected.csv").parent


# ----------------------------------------------------------------------------------------------
# One run of the real pipeline's first stages, shared by the whole session. Treat these as
# read-only: a test that changes a frame or a file works on its own copy (`project_root`).


@pytest.fixture(scope="session")
def campaign_workbooks(campaign_dir) -> tuple[Path, Path]:
    """(sampled, final): the published phase-3 workbooks."""
    phase3 = campaign_dir / "phase3"
    return phase3 / "y_new_and_sampled_MD_evals.xlsx", phase3 / "y_final_MD_evals_incorporated.xlsx"


@pytest.fixture(scope="session")
def real_instances(v1_test_csv, tmp_path_factory):
    """The v1.0 test split ingested once (1,047 rows)."""
    from medcalc_maintained.stages.ingest import ingest

    return _shared(tmp_path_factory, "real_instances", lambda: ingest([("test", v1_test_csv)]).instances)


@pytest.fixture(scope="session")
def real_recompute(real_instances, tmp_path_factory):
    from medcalc_maintained.quality.recompute import recompute

    return _shared(tmp_path_factory, "real_recompute", lambda: recompute(real_instances))


@pytest.fixture(scope="session")
def campaign_table(campaign_workbooks, tmp_path_factory):
    from medcalc_maintained.ledger import campaign

    return _shared(tmp_path_factory, "campaign_table", lambda: campaign.read_workbooks(*campaign_workbooks))


@pytest.fixture(scope="session")
def campaign_records(real_instances, real_recompute, campaign_table, campaign_workbooks, tmp_path_factory) -> list[dict]:
    """The 887 records of the published audit, as `import-campaign` makes them."""
    from medcalc_maintained.ledger import campaign

    sampled, final = campaign_workbooks
    records, unreadable = _shared(tmp_path_factory, "campaign_records", lambda: campaign.build_records(
        campaign_table, real_instances, real_recompute, decided_at="2025-12-22", release="2.0.0",
        id_prefix="audit2025", workbook_names=(sampled.name, final.name)))
    assert unreadable == []
    return records


@pytest.fixture(scope="session")
def campaign_ledger(campaign_records, tmp_path_factory) -> Path:
    """The campaign records written as a ledger file."""
    from medcalc_maintained import ledger

    path = tmp_path_factory.mktemp("campaign") / "audit-2025.yaml"
    path.write_text(ledger.dump(campaign_records, path), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def policy_ledger(campaign_records, real_instances, tmp_path_factory) -> Path:
    """The policy records of release 2.1.0 (stage ``harmonize``) for the campaign records."""
    from medcalc_maintained import ledger
    from medcalc_maintained.ledger import harmonize

    records = harmonize.policy_records(campaign_records, real_instances, release="2.1.0", id_prefix="policy2026",
                                       decided_at="2026-11-24")
    path = tmp_path_factory.mktemp("harmonize") / "policy-2.1.0.yaml"
    path.write_text(ledger.dump(records, path), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def evidence_ledger(tmp_path_factory) -> Path:
    """The evidence reverts of release 2.2.0 as stage ``harmonize`` writes them: as 2.2.0 published them
    (``data/released/evidence-2.2.0.yaml``, ``harmonize.evidence_published``), whatever today's verifier says."""
    path = tmp_path_factory.mktemp("harmonize-evidence") / "evidence-2.2.0.yaml"
    shutil.copy(ROOT / "data" / "released" / "evidence-2.2.0.yaml", path)
    return path


@pytest.fixture(scope="session")
def real_maintained(real_instances, campaign_ledger, tmp_path_factory):
    """Maintained labels: the campaign ledger applied to the v1.0 instances (the frame names no ledger
    path, so every worker's ledger file, the same bytes, gives the same frame: computed once per run)."""
    from medcalc_maintained.ledger.apply import build

    return _shared(tmp_path_factory, "real_maintained", lambda: build(real_instances, [campaign_ledger]))


@pytest.fixture(scope="session")
def pipeline_project(tmp_path_factory, real_instances, real_recompute, campaign_ledger, policy_ledger,
                     evidence_ledger) -> Path:
    """A project root holding the real outputs of ingest, recompute, import-campaign and apply,
    with this checkout's params.yaml, expectations, releases.yaml and card. Read-only.

    Lighter than ``dvc repro``: the campaign records carry no check findings (no ``findings.parquet``)
    and ``data/corrections`` is empty, so its release 2.1.0 lacks the hand-written derivation records
    and is not the committed one (:func:`repro_project` is)."""
    root = tmp_path_factory.mktemp("pipeline-project")
    for name in ("params.yaml", "releases.yaml", "dataset_card.md"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "expectations", root / "expectations")
    # stage errata's committed outputs: every release from 2.4.1 ships them (conformance/)
    shutil.copytree(ROOT / "data" / "errata", root / "data" / "errata", ignore=shutil.ignore_patterns(".gitignore"))
    # the real model's outputs whose step-wise breakdown the card shows from 2.4.2 (release.steps_demo)
    (root / "data" / "steps_demo").mkdir(parents=True)
    shutil.copy(ROOT / "data" / "steps_demo" / "lm-eval-outputs.jsonl", root / "data" / "steps_demo")
    from medcalc_maintained.ledger.apply import build

    # the maintained labels as stage apply makes them from this ledger (campaign + policy records), once per run
    maintained = _shared(tmp_path_factory, "pipeline_maintained",
                         lambda: build(real_instances, [campaign_ledger, policy_ledger, evidence_ledger]))
    for rel, frame in (("data/interim/instances.parquet", real_instances),
                       ("data/audit/recompute.parquet", real_recompute),
                       ("data/maintained/instances.parquet", maintained)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(root / rel, index=False)
    (root / "data" / "campaign").mkdir(parents=True)
    shutil.copy(campaign_ledger, root / "data" / "campaign" / "audit-2025.yaml")
    (root / "data" / "harmonize").mkdir(parents=True)
    shutil.copy(policy_ledger, root / "data" / "harmonize" / "policy-2.1.0.yaml")
    shutil.copy(evidence_ledger, root / "data" / "harmonize" / "evidence-2.2.0.yaml")
    (root / "data" / "corrections").mkdir()
    return root


@pytest.fixture
def project_root(pipeline_project, tmp_path) -> Path:
    """A writable copy of :func:`pipeline_project` for one test."""
    return shutil.copytree(pipeline_project, tmp_path / "project")


@pytest.fixture(scope="session")
def tables_project(pipeline_project, tmp_path_factory) -> Path:
    """:func:`pipeline_project` with stage ``release-tables`` run on it, as ``dvc repro`` leaves a
    project: what reads a release by version (``evaluate --against 2.0.0``, ``lookup_instance``,
    stages ``compare``, ``evaluate-example``, ``triage-simulate``) needs, since a reader never
    applies the ledger. Read-only; built once per run (tests/support/once_per_run.py)."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import release_tables

    def build(root: Path) -> None:
        shutil.copytree(pipeline_project, root)
        release_tables.run(Project.load(root))

    return shared_dir(tmp_path_factory, "tables-project", build)


@pytest.fixture
def tables_root(tables_project, tmp_path) -> Path:
    """A writable copy of :func:`tables_project` for one test."""
    return shutil.copytree(tables_project, tmp_path / "project")


UPSTREAM_INPUTS = ("medcalc-bench/v1.0/test_data.csv", "validate-medcalc-labels/phase3/y_new_and_sampled_MD_evals.xlsx",
                   "validate-medcalc-labels/phase3/y_final_MD_evals_incorporated.xlsx")


@pytest.fixture(scope="session")
def repro_project(tmp_path_factory) -> Path:
    """A project root as ``dvc repro`` makes it, up to stage certify: this checkout's params.yaml,
    releases.yaml, card, expectations and hand-written ledger (``data/corrections``), the upstream
    inputs, and the stages ingest, recompute, import-campaign, harmonize, apply and certify run on them.
    Its releases are the committed ones (tests/e2e/pipeline/test_repro_project.py). Read-only; built once
    per run (tests/support/once_per_run.py)."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import apply, certify, harmonize, import_campaign, ingest, recompute

    def build(root: Path) -> None:
        root.mkdir(parents=True)
        for name in ("params.yaml", "releases.yaml", "dataset_card.md"):
            shutil.copy(ROOT / name, root / name)
        shutil.copytree(ROOT / "expectations", root / "expectations")
        shutil.copytree(ROOT / "data" / "corrections", root / "data" / "corrections")
        shutil.copytree(ROOT / "data" / "released", root / "data" / "released")
        for rel in UPSTREAM_INPUTS:
            dst = root / "data" / "upstream" / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(upstream_file(rel), dst)
        project = Project.load(root)
        assert not ingest.run(project).too_many, "ingest quarantined more rows than ingest.max_quarantine"
        recompute.run(project)
        import_campaign.run(project)
        harmonize.run(project)
        apply.run(project)
        certify.run(project)  # what a release from 2.3.0 on reads for its rows' `Evidence`

    return shared_dir(tmp_path_factory, "repro-project", build)


@pytest.fixture(scope="session")
def published_releases(tmp_path_factory, request) -> Path:
    """A copy of :func:`repro_project` with releases 1.0.0, 2.0.0 and 2.1.0 built into
    ``build/v<version>`` and published to ``mirrors/datasets/org/medcalc-maintained`` (a bare git
    repository olah serves). Read-only; built once per run, across xdist workers too
    (tests/support/release_support.published_project)."""
    from tests.support.release_support import published_project

    return published_project(tmp_path_factory, request)
