"""Release mechanics on small cases: version derivation, releases.yaml checks, `propose`, and
building an older release from the ledger pinned at a git ref.

The end-to-end tests of this subject; the fast ones are in tests/release/test_release.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.project import Project
from medcalc_maintained.release.plan import load_releases
from medcalc_maintained.release.table_builder import build_tables
from tests.support.release_support import invoke, rec, runner


def test_draft_of_the_real_project_with_only_a_proposal_is_a_draft_of_the_latest_release(project_root, tmp_path):
    """The issue's case: on the real ledger a contributor's proposal changes no label, so the draft
    stays at the latest release of releases.yaml (2.3.2, which already states every verified row's
    evidence); it is still a draft (publish refuses it) and it lists the proposal without applying it."""
    latest = load_releases(project_root / "releases.yaml").latest.version
    r = invoke(project_root, "propose", "--uid", "862", "--new-value", "N/A", "--error-type", "unanswerable",
               "--rationale", "Eye response not testable after surgery.", "--reviewer-id", "gh-1", "--date", "2026-03-02")
    assert r.exit_code == 0, r.output
    (proposal,) = yaml.safe_load((project_root / "data" / "corrections" / "2026-03-proposals.yaml").read_text())["corrections"]
    out = tmp_path / "preview"
    r = invoke(project_root, "release", "build", "--draft", "--out", str(out))
    assert r.exit_code == 0, r.output
    assert f"nothing changed since {latest}" in " ".join(r.output.split())
    assert "Proposed (deferred, not in this release): 1 record(s)" in r.output
    man = yaml.safe_load((out / "manifest.json").read_text())
    assert man["draft"] is True and man["version"] == latest
    log = (out / "CHANGELOG.md").read_text()
    head = log[:log.index(f"## {latest}")]
    assert "### Proposed (deferred, not in this release) (1)" in head
    assert f"| {proposal['id']} | 862 | " in head and f"| {proposal['old_value']} → N/A |" in head
    full = pd.read_parquet(out / "data" / "full" / "test-00000-of-00001.parquet").set_index("uid")
    assert full.loc[862, "Ground Truth Answer"] == proposal["old_value"]
    r = invoke(project_root, "release", "publish", "--release-dir", str(out), "--target", f"file://{tmp_path / 'r.git'}")
    assert r.exit_code == 1 and "draft" in r.output


def snapshot(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def count_applications(monkeypatch) -> list[str]:
    """Wrap ledger.apply.check_and_apply; the list gets the `upto` of every call."""
    from medcalc_maintained.ledger import apply as apply_module

    calls: list[str] = []
    real = apply_module.check_and_apply

    def counting(*args, **kw):
        calls.append(kw.get("upto"))
        return real(*args, **kw)

    monkeypatch.setattr(apply_module, "check_and_apply", counting)
    return calls


def test_release_tables_apply_the_ledger_at_most_once_per_release(project_root, monkeypatch):
    from medcalc_maintained.stages import release as release_stage
    from medcalc_maintained.stages import release_tables

    project = Project.load(project_root)
    calls = count_applications(monkeypatch)
    written = release_tables.run(project)  # in this process (the default), where the wrapper counts
    assert sorted(written) == ["1.0.0", "2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.3.1", "2.3.2", "2.4.0", "2.4.1", "2.4.2"]
    assert sorted(calls) == ["1.0.0", "2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.3.1", "2.3.2", "2.4.0", "2.4.1", "2.4.2"]  # one per release
    for v in ("1.0.0", "2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.3.1", "2.3.2", "2.4.0", "2.4.1", "2.4.2"):
        for config in ("default", "full", "original", "corrections"):
            assert project.release_table(v, config).is_file()
    # building from the stage's tables applies no ledger record at all
    calls.clear()
    release_stage.run(project, out=project_root / "built", version="2.0.0")
    assert calls == []


def test_build_from_tables_is_identical_to_the_build_on_the_fly(project_root, tmp_path):
    from medcalc_maintained.release.tables import load_config
    from medcalc_maintained.stages import release as release_stage
    from medcalc_maintained.stages import release_tables

    project = Project.load(project_root)
    fly = {v: release_stage.run(project, out=tmp_path / f"fly-{v}", version=v) for v in ("1.0.0", "2.0.0", "2.4.2")}
    fly_full = build_tables(project, load_releases(project.releases_file).get("2.0.0")).combined("full")
    assert not project.release_tables.exists()
    release_tables.run(project)
    for v in ("1.0.0", "2.0.0"):
        res = release_stage.run(project, out=tmp_path / f"tab-{v}", version=v)
        assert snapshot(tmp_path / f"tab-{v}") == snapshot(tmp_path / f"fly-{v}")
        assert res.files == fly[v].files and res.state == fly[v].state and res.rows == fly[v].rows
    # with no version and no output directory: the latest release (2.4.2) in params.release.out
    res = release_stage.run(project)
    assert res.out == project.release_build
    assert snapshot(project.release_build) == snapshot(tmp_path / "fly-2.4.2")
    assert res.files == fly["2.4.2"].files and res.state == fly["2.4.2"].state and res.rows == fly["2.4.2"].rows
    # load_config reads from the stage's file the same frame the builder makes
    stored = load_config(project, "2.0.0")
    pd.testing.assert_frame_equal(stored, fly_full)
    assert len(stored) == 1047 and (stored["Label Status"] != "unverified").sum() == 887
    default = load_config(project, "v1.0.0", "default")
    assert len(default) == 1047 and {"split", "uid"} <= set(default.columns)


def test_a_reader_refuses_missing_or_stale_tables_and_never_applies_the_ledger(project_root, monkeypatch):
    """Without the stage's files, and after a ledger change, a reader (``load_config``, ``evaluate
    --against VERSION``) refuses naming the release's state.json and the command that refreshes
    the tables; it applies no ledger record. After ``release-tables`` it reads the new label."""
    from medcalc_maintained.release.tables import load_config
    from medcalc_maintained.stages import release_tables

    project = Project.load(project_root)
    state_file = project.release_tables / "2.0.0" / "state.json"
    calls = count_applications(monkeypatch)
    with pytest.raises(DataError, match=r"the release tables of 2\.0\.0 are missing; run `dvc repro release-tables`") as exc:
        load_config(project, "v2.0.0", "default")
    assert exc.value.path == str(state_file) and calls == []
    preds = project_root / "preds.jsonl"
    preds.write_text('{"uid": 1, "output": "<answer>1</answer>"}\n', encoding="utf-8")
    monkeypatch.setenv("MEDCALC_ROOT", str(project_root))
    res = runner.invoke(app, ["evaluate", str(preds), "--against", "2.0.0", "--out", str(project_root / "ev")])
    assert res.exit_code == 2 and "dvc repro release-tables" in res.output and calls == []
    assert not (project_root / "ev").exists()

    release_tables.run(project)
    calls.clear()
    full = load_config(project, "2.0.0")
    assert calls == [] and len(full) == 1047
    open_rows = full[(full["Label Status"] == "unverified") & (full["Output Type"] == "integer")]
    uid, label = int(open_rows["uid"].iloc[0]), str(open_rows["Ground Truth Answer"].iloc[0])
    new = str(int(label) + 1)
    (project.ledger_dir / "extra.yaml").write_text(ledger.dump(
        [rec(id="T-0009", uid=uid, release="2.0.0", old_value=label, new_value=new)], project.ledger_dir))
    with pytest.raises(DataError, match=r"the release tables of 2\.0\.0 are stale: .*the ledger files.*; run "
                                        r"`dvc repro release-tables`"):
        load_config(project, "2.0.0")
    assert calls == []
    release_tables.run(project)
    hit = load_config(project, "2.0.0").set_index("uid")
    assert hit.at[uid, "Ground Truth Answer"] == new
