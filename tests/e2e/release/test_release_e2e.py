"""End to end: build releases 1.0.0 to 2.2.0 from the real upstream data, publish them to a git
repository, serve that repository with a local Hugging Face Hub mirror (olah, offline) and load it
with `datasets.load_dataset(..., revision=...)` through HF_ENDPOINT.

The project used here is the session's ``published_releases`` (conftest.py): a copy of the shared
``repro_project`` fixture (the real releases.yaml, dataset_card.md, params.yaml, expectations/ and
hand-written ledger, with the stages ingest, recompute, import-campaign, harmonize and apply run on
the upstream files as `dvc repro` runs them, so its releases are the committed ones:
tests/e2e/pipeline/test_repro_project.py) with the three releases built and published. It is read-only, built
once per run and shared with tests/e2e/harnesses/test_harnesses.py (across xdist workers too); a test that
changes the project or the repository works on its own copy in its tmp_path.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.core.answers import same_value
from medcalc_maintained.release.state import derive_bump
from tests.support.hub_mirror import git, load_through_hub, olah
from tests.support.release_support import RELEASES

runner = CliRunner()
REPO_ID = "org/medcalc-maintained"


def cli(root: Path, *args: str):
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})


def snapshot(path: Path) -> dict[str, str]:
    """Every file under ``path`` with the sha256 of its bytes (a repository's complete state)."""
    if not path.exists():
        return {}
    return {p.relative_to(path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def project(published_releases) -> Path:
    """The project root holding the three builds and the published repository; read-only (shared with
    tests/e2e/harnesses/test_harnesses.py, and under xdist with the other worker: release_support.published_project)."""
    return published_releases


@pytest.fixture(scope="module")
def builds(project) -> dict[str, Path]:
    return {version: project / "build" / f"v{version}" for version in RELEASES}


@pytest.fixture(scope="module")
def published(project) -> Path:
    # olah serves a local mirror from <mirrors>/<repo type>/<org>/<name>
    return project / "mirrors" / "datasets" / "org" / "medcalc-maintained"


def test_two_builds_are_byte_identical(project, builds, tmp_path):
    again = tmp_path / "again"
    r = cli(project, "release", "build", "--out", str(again), "--version", "2.0.0")
    assert r.exit_code == 0, r.output
    assert snapshot(again) == snapshot(builds["2.0.0"])
    assert len(snapshot(again)) == 10  # README, CHANGELOG, manifest, croissant.json, releases.json, 5 parquet files


def test_release_layout_and_counts(project, builds, v1_test_csv):
    v2 = builds["2.0.0"]
    man = json.loads((v2 / "manifest.json").read_text())
    assert man["version"] == "2.0.0" and man["rows"]["default"] == {"test": 887}
    assert man["rows"]["full"] == {"test": 1047} and man["rows"]["original"] == {"test": 1047}
    for rel, digest in man["files"].items():
        assert hashlib.sha256((v2 / rel).read_bytes()).hexdigest() == digest
    # no pandas/arrow timestamps, no absolute paths of this machine in any file
    for p in v2.rglob("*"):
        if p.is_file():
            assert str(v2.parent).encode() not in p.read_bytes(), p
    front = (v2 / "README.md").read_text().split("---\n")[1]
    assert "license: cc-by-sa-4.0" in front and "version: 2.0.0" in front
    for cfg in ("default", "full", "original", "corrections", "mini"):
        assert f"config_name: {cfg}" in front
    # 1.0.0 has no ledger record: the same five configs, corrections and mini without rows, every
    # row upstream and unverified
    v1 = builds["1.0.0"]
    assert pq.read_table(v1 / "data" / "corrections" / "test-00000-of-00001.parquet").num_rows == 0
    assert pq.read_table(v1 / "data" / "mini" / "test-00000-of-00001.parquet").num_rows == 0
    assert "config_name: corrections" in (v1 / "README.md").read_text()
    upstream = pd.read_csv(v1_test_csv, dtype=str, keep_default_na=False)
    full = pq.read_table(v1 / "data" / "full" / "test-00000-of-00001.parquet").to_pandas()
    assert (full["Label Status"] == "unverified").all()
    assert full["Row Number"].tolist() == upstream["Row Number"].astype(int).tolist()
    assert full["Ground Truth Answer"].tolist() == upstream["Ground Truth Answer"].tolist()
    # 1.0.0 -> 2.0.0 is derived as a major release: N/A enters the decimal and integer label space
    kind, reasons = derive_bump(json.loads((v1 / "manifest.json").read_text())["state"], man["state"])
    assert kind == "major"
    assert "label space of decimal outputs: +['abstain'] -[]" in reasons
    # the changelog of 2.0.0 lists the label changes; uid 3 went from 25.017 to 9 (physician)
    log = (v2 / "CHANGELOG.md").read_text()
    assert "## 2.0.0 (2026-11-22, major)" in log and "## 1.0.0 (2026-11-22, major)" in log
    # (the error type is the one import-campaign recorded in the ledger, from the recompute audit)
    records = yaml.safe_load((project / "data" / "campaign" / "audit-2025.yaml").read_text())["corrections"]
    (uid3,) = [r for r in records if int(r["uid"]) == 3]
    etype = uid3["error_type"]
    assert f"| 3 | Creatinine Clearance (Cockcroft-Gault Equation) | 25.017 → 9 | L3 | unverified → corrected | {etype} | " in log
    assert "### Label changes (279)" in log


@pytest.fixture(scope="module")
def hub(project, published, tmp_path_factory):
    """olah on 127.0.0.1, offline, serving the published git repository as a local mirror (its own
    files in a directory of this module)."""
    with olah(tmp_path_factory.mktemp("olah"), REPO_ID, "v2.0", mirrors=project / "mirrors") as url:
        yield url


def test_load_dataset_revisions_through_local_hub(hub, published, tmp_path, v1_test_csv, campaign_dir):
    assert set(git(published, "tag", "-l").split()) == {"v1.0.0", "v1.0", "v2.0.0", "v2.0", "v2.1.0", "v2.1", "v2.2.0",
                                                         "v2.2"}
    assert git(published, "rev-list", "--count", "main") == "4"  # one commit per release
    got = load_through_hub(hub, tmp_path / "hf-home", [("default", "v2.0"), ("default", "v1.0"), ("full", "v2.0.0"),
                                                       ("default", "v2.1"), ("full", "v2.1"), ("default", "v2.2.0"),
                                                       ("full", "v2.2.0")])

    v2 = got["default@v2.0"]
    assert len(v2) == 887
    assert set(v2["Label Status"]) == {"confirmed", "corrected", "abstain"}
    # the maintained labels are the audit's published corrected labels (887 rows, by Unique ID)
    published_labels = pd.read_csv(campaign_dir / "medcalc_v1_corrected.csv", dtype=str, keep_default_na=False)
    want = dict(zip(published_labels["Unique ID"].astype(int), published_labels["Ground Truth Answer"]))
    assert sorted(v2["Row Number"].astype(int)) == sorted(want)
    otype = dict(zip(v2["Row Number"].astype(int), v2["Output Type"]))
    mismatched = [u for u, lab in zip(v2["Row Number"].astype(int), v2["Ground Truth Answer"])
                  if not same_value(lab, want[u], otype[u])]
    assert mismatched == []
    assert (v2["Ground Truth Answer"] == "N/A").sum() == 69
    by_uid = v2.set_index(v2["Row Number"].astype(int))
    assert by_uid.at[3, "Ground Truth Answer"] == "9" and by_uid.at[3, "Label Status"] == "corrected"

    v1 = got["default@v1.0"]
    upstream = pd.read_csv(v1_test_csv, dtype=str, keep_default_na=False)
    assert len(v1) == 1047
    assert v1["Row Number"].tolist() == upstream["Row Number"].astype(int).tolist()
    assert v1["Calculator ID"].tolist() == upstream["Calculator ID"].astype(int).tolist()
    assert v1["Ground Truth Answer"].tolist() == upstream["Ground Truth Answer"].tolist()
    assert v1.set_index("Row Number").at[3, "Ground Truth Answer"] == "25.017"
    assert set(v1["Label Status"]) == {"unverified"}

    full = got["full@v2.0.0"]
    assert len(full) == 1047 and (full["Label Status"] == "unverified").sum() == 160
    assert "Derivation" not in full.columns  # 2.0.0 loads as it was published

    # 2.1.0: the harmonized labels (MME under the declared CDC 2022 factors is v1.0's value again),
    # confirmed labels are upstream's text, and full carries each verified row's derivation
    v21 = got["default@v2.1"].set_index("Row Number")
    upstream_by_uid = upstream.set_index(upstream["Row Number"].astype(int))["Ground Truth Answer"]
    assert len(v21) == 887 and v21.at[997, "Ground Truth Answer"] == upstream_by_uid[997] == "290"
    confirmed = v21[v21["Label Status"] == "confirmed"]
    assert (confirmed["Ground Truth Answer"] != upstream_by_uid[confirmed.index]).sum() == 0
    full21 = got["full@v2.1"]
    verified = full21[full21["Label Status"] != "unverified"]
    assert verified["Derivation"].notna().all() and full21["Derivation"][full21["Label Status"] == "unverified"].isna().all()

    # 2.2.0: the labels the evidence review corrected, and derivations that rest on verifier-accepted inputs only
    v22 = got["default@v2.2.0"].set_index("Row Number")
    assert {u: v22.at[u, "Ground Truth Answer"] for u in (891, 902, 905, 427, 146, 152)} == \
        {891: "13", 902: "10", 905: "9", 427: "6", 146: "N/A", 152: "N/A"}
    full22 = got["full@v2.2.0"].set_index("Row Number")
    assert full22.at[127, "Derivation Status"] == "unexplained" and full21.set_index("Row Number").at[127, "Derivation Status"] \
        == "inputs-recorded"  # the temperature read as a heart rate is withdrawn, the label kept
    for raw in full22["Derivation"][full22["Label Status"] != "unverified"]:
        doc = json.loads(raw)
        assert all(i["verdict"]["supports"] for i in doc["inputs"]) or doc["status"] in ("unexplained", "override")


def test_publishing_an_existing_tag_fails_and_leaves_repo_unchanged(project, builds, published, tmp_path):
    before = snapshot(published)
    r = cli(project, "release", "publish", "--release-dir", str(builds["2.0.0"]), "--target", f"file://{published}")
    assert r.exit_code == 1
    assert "tag v2.0.0 already exists" in r.output
    assert snapshot(published) == before
    # a release whose earlier release is not published yet: refused, nothing created
    fresh = tmp_path / "older-first.git"
    r = cli(project, "release", "publish", "--release-dir", str(builds["2.0.0"]), "--target", f"file://{fresh}")
    assert r.exit_code == 1 and "release 1.0.0 of releases.yaml is not published" in " ".join(r.output.split())
    assert not fresh.exists()


def test_dry_run_writes_nothing(project, builds, tmp_path):
    target = tmp_path / "dry.git"
    r = cli(project, "release", "publish", "--release-dir", str(builds["1.0.0"]), "--target", f"file://{target}", "--dry-run")
    assert r.exit_code == 0, r.output
    assert "would: create tag v1.0.0" in r.output and "would: create tag v1.0" in r.output
    assert not target.exists()


def test_failed_validation_publishes_nothing(project, builds, tmp_path):
    target = tmp_path / "never.git"
    # 1. a parquet file whose bytes no longer match the manifest
    broken = tmp_path / "broken"
    shutil.copytree(builds["2.0.0"], broken)
    f = broken / "data" / "default" / "test-00000-of-00001.parquet"
    f.write_bytes(f.read_bytes() + b"\0")
    r = cli(project, "release", "publish", "--release-dir", str(broken), "--target", f"file://{target}")
    assert r.exit_code == 1 and "validation failed" in r.output
    assert not target.exists()
    # 2. a release whose manifest is consistent but whose data break a contract (duplicate uid); 1.0.0,
    # which passes the target's checks on an empty target, so that the contracts (checked last) refuse it
    dup = tmp_path / "dup"
    shutil.copytree(builds["1.0.0"], dup)
    full = dup / "data" / "full" / "test-00000-of-00001.parquet"
    table = pq.read_table(full)
    pq.write_table(pa_concat(table, table.slice(0, 1)), full)
    man = json.loads((dup / "manifest.json").read_text())
    man["files"]["data/full/test-00000-of-00001.parquet"] = hashlib.sha256(full.read_bytes()).hexdigest()
    (dup / "manifest.json").write_text(json.dumps(man))
    r = cli(project, "release", "publish", "--release-dir", str(dup), "--target", f"file://{target}")
    assert r.exit_code == 1 and "contract" in r.output, r.output
    assert not target.exists()


def pa_concat(a, b):
    import pyarrow as pa

    return pa.concat_tables([a, b])


def test_patch_release_gets_no_short_tag(project, builds, published, tmp_path, v1_test_csv, campaign_dir):
    """A card-only change after 2.2.0 is derived as a patch; publishing 2.2.1 creates v2.2.1 and
    leaves v2.2 on the first release of the 2.2 line. It publishes onto a copy of the repository
    that already holds 1.0.0 to 2.2.0 (the ``published`` fixture, left untouched), from a copy of the
    project as it was before 2.3.0: without 2.3.0's records, its entry and its frozen history."""
    copy = tmp_path / "proj"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns("build", "mirrors", "*.git", "olah*"))
    for ledger in (copy / "data" / "corrections").glob("*.yaml"):  # the card is the only change: no later record
        text = ledger.read_text(encoding="utf-8")
        if "unreleased" in text or "release: 2.3.0" in text:
            ledger.unlink()
    releases = copy / "releases.yaml"
    text = releases.read_text(encoding="utf-8")
    releases.write_text(text[:text.index("  - version: 2.3.0")], encoding="utf-8")
    published_history = copy / "data" / "released" / "published.json"
    if published_history.is_file():
        history = json.loads(published_history.read_text(encoding="utf-8"))
        history["releases"].pop("2.3.0", None)
        published_history.write_text(json.dumps(history, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert cli(copy, "apply").exit_code == 0  # the maintained labels of that ledger
    card = copy / "dataset_card.md"
    card.write_text(card.read_text().replace("## Intended use", "## Intended use and scope"))
    r = cli(copy, "release", "next-version", "--previous", str(builds["2.2.0"]))
    assert r.exit_code == 0, r.output
    # the next release of this code states every verified row's evidence (EVIDENCE_ROWS_FROM 2.3.0): a minor one;
    # a patch of the 2.2 line is built without it, and the card is then its only change
    assert "next version: 2.3.0 (minor)" in r.output and "adds column(s) Evidence Status, Evidence" in r.output
    releases.write_text(releases.read_text() + (
        '  - version: 2.2.1\n    date: "2026-11-28"\n    kind: patch\n    default_rows: verified\n'
        "    description: Card wording only.\n"))
    out = copy / "build" / "v2.2.1"
    assert cli(copy, "release", "build", "--out", str(out)).exit_code == 0
    repo = tmp_path / "patch.git"
    shutil.copytree(published, repo)
    assert set(git(repo, "tag", "-l").split()) == {"v1.0.0", "v1.0", "v2.0.0", "v2.0", "v2.1.0", "v2.1", "v2.2.0", "v2.2"}
    r = cli(copy, "release", "publish", "--release-dir", str(out), "--target", f"file://{repo}")
    assert r.exit_code == 0, r.output
    assert git(repo, "rev-parse", "v2.2^{commit}") == git(repo, "rev-parse", "v2.2.0^{commit}")
    assert git(repo, "rev-parse", "v2.2.1^{commit}") == git(repo, "rev-parse", "main")
    assert git(repo, "rev-parse", "v2.2.1^{commit}") != git(repo, "rev-parse", "v2.2^{commit}")
    # same labels in both: the card, the manifest, and the verdicts of today's evidence verifier differ
    # (2.2.0 keeps the verdicts it published, data/released/published.json; 2.2.1 is verified today:
    # its explanations and derivations, never its labels)
    changed = set(git(repo, "diff", "--name-only", "v2.2.0", "v2.2.1").split())
    # croissant: version, description, and the feed's sha256; the feed: the entry of 2.2.1
    annotated = {f"data/{c}/test-00000-of-00001.parquet" for c in ("default", "full", "mini")}
    assert changed == {"README.md", "CHANGELOG.md", "manifest.json", "croissant.json", "releases.json", *annotated}
    entry = json.loads((out / "releases.json").read_text())["releases"][-1]
    assert entry["version"] == "2.2.1" and entry["tags"] == ["v2.2.1"] and entry["comparable"] is True
    assert {c: d["class"] for c, d in entry["configs"].items()} == {
        "default": "labels-unchanged", "full": "labels-unchanged", "mini": "labels-unchanged",
        "original": "identical", "corrections": "identical"}


def test_hub_target_refuses_an_existing_tag_without_printing_the_token(hub, project, builds, tmp_path):
    secret = "hf_not_a_real_token_3f9a1c"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_ENDPOINT=hub, HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="0", HF_TOKEN=secret,
               MEDCALC_ROOT=str(project))
    exe = str(Path(sys.executable).parent / "medcalc-maintained")
    outputs = []
    for repo, words in (("org/medcalc-maintained", "tag v2.0.0 already exists"),
                        ("org/not-mirrored", "cannot list the tags")):
        proc = subprocess.run([exe, "release", "publish", "--release-dir", str(builds["2.0.0"]),
                               "--target", f"hf://{repo}", "--dry-run"], env=env, capture_output=True, text=True,
                              timeout=600)
        out = proc.stdout + proc.stderr
        outputs.append(out)
        assert proc.returncode == 1 and words in " ".join(out.split()), out
    assert all(secret not in out for out in outputs)


LOAD_FEATURES = """
import json, sys
import datasets
out = {}
for config, rev, streaming in json.loads(sys.argv[1]):
    ds = datasets.load_dataset("org/medcalc-maintained", config, revision=rev, split="test", streaming=streaming)
    rows = list(ds) if streaming else ds.to_pandas().to_dict("records")
    out[f"{config}@{rev}"] = {"features": {k: v.dtype for k, v in ds.features.items()}, "rows": len(rows),
                              "uids": sorted(int(r["Row Number"]) for r in rows if "Row Number" in r)}
print(json.dumps(out))
"""


def card_front(release: Path) -> dict:
    return yaml.safe_load((release / "README.md").read_text().split("---\n")[1])


def test_every_config_loads_with_the_declared_features_through_the_hub(hub, builds, tmp_path):
    """Every config of both releases through the local Hub mirror, with the card's dataset_info
    features; the empty ones (corrections and mini of 1.0.0) stream with no rows."""
    requests, declared = [], {}
    for version, rev in (("1.0.0", "v1.0"), ("2.0.0", "v2.0")):
        for info in card_front(builds[version])["dataset_info"]:
            (split,) = info["splits"]
            requests.append((info["config_name"], rev, split["num_examples"] == 0))
            declared[f"{info['config_name']}@{rev}"] = (
                {f["name"]: f["dtype"] for f in info["features"]}, split["num_examples"])
    assert len(requests) == 10
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_ENDPOINT=hub, HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="0", HF_DATASETS_OFFLINE="0",
               HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1", HF_DATASETS_DISABLE_PROGRESS_BARS="1")
    proc = subprocess.run([sys.executable, "-c", LOAD_FEATURES, json.dumps(requests)], env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for key, (features, rows) in declared.items():
        assert got[key]["features"] == features, key
        assert got[key]["rows"] == rows, key
    assert got["default@v2.0"]["features"]["Row Number"] == "int64"
    assert got["default@v2.0"]["features"]["Calculator ID"] == "int64"
    # mini of 2.0: 10 rows per calculator or all verified rows of a smaller one, every calculator
    mini = pq.read_table(builds["2.0.0"] / "data" / "mini" / "test-00000-of-00001.parquet").to_pandas()
    assert got["mini@v2.0"]["uids"] == sorted(mini["Row Number"].tolist())
    default = pq.read_table(builds["2.0.0"] / "data" / "default" / "test-00000-of-00001.parquet").to_pandas()
    per_calc = mini.groupby("Calculator ID").size()
    avail = default.groupby("Calculator ID").size()
    assert set(per_calc.index) == set(avail.index) and len(per_calc) == 55
    assert (per_calc == avail.clip(upper=10)).all()
    print(f"mini@v2.0: {len(mini)} rows; rows per calculator: {per_calc.value_counts().sort_index().to_dict()}")


def test_croissant_of_every_release_is_valid(builds):
    mlc = pytest.importorskip("mlcroissant")
    for version, release in builds.items():
        ds = mlc.Dataset(jsonld=str(release / "croissant.json"))
        assert not ds.metadata.ctx.issues.errors and not ds.metadata.ctx.issues.warnings, version
        doc = json.loads((release / "croissant.json").read_text())
        for key in ("rai:dataCollection", "rai:dataAnnotationProtocol", "rai:dataLimitations"):
            assert doc[key], key
        man = json.loads((release / "manifest.json").read_text())
        assert man["files"]["croissant.json"] == hashlib.sha256((release / "croissant.json").read_bytes()).hexdigest()
        records = list(ds.records("default"))
        assert len(records) == sum(man["rows"]["default"].values())
    front = card_front(builds["2.0.0"])
    for key in ("source_datasets", "annotations_creators", "task_ids", "task_categories"):
        assert front[key], key
    body = (builds["2.0.0"] / "README.md").read_text()
    assert "[CHANGELOG.md](CHANGELOG.md)" in body and "@misc{medcalc_maintained" in body
