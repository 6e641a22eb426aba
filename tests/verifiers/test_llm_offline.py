"""The offline defaults: ``audit --backend rules`` and ``relabel --backend replay`` (the published
consensus, or a file of recorded replies), run through the CLI."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app

runner = CliRunner()


def cli(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def _cockcroft_rows(instances: pd.DataFrame) -> pd.DataFrame:
    """Four variants of test row 1 (Cockcroft-Gault, male, 87 y, 48 kg, creatinine 1.4 mg/dL):
    CrCl = (140 - 87) * 48 / (1.4 * 72) = 2544 / 100.8 = 25.238 mL/min."""
    base = instances[instances["uid"] == 1].iloc[0].to_dict()
    ent = json.loads(base["entities"])
    rows = []

    def add(uid, label, lower, upper, entities):
        r = dict(base, uid=uid, **{"Ground Truth Answer": label, "Lower Limit": lower, "Upper Limit": upper})
        r["entities"] = json.dumps(entities)
        rows.append(r)

    add(9001, "25.238", "23.9761", "26.4999", ent)                    # reproduces: yes
    add(9002, "40", "38", "42", ent)                                  # 25.238 is outside [38, 42]: no
    add(9003, "0.589", "0.5596", "0.6185", {**ent, "creatinine": [60.0, "mg/dL"]})  # 2544/4320 = 0.589, but 60 mg/dL is implausible: no
    add(9004, "25.238", "23.9761", "26.4999", {k: v for k, v in ent.items() if k != "creatinine"})  # cannot recompute: abstain
    return pd.DataFrame(rows)


def test_rules_audit_votes_once_per_row(project, instances, tmp_path):
    src = tmp_path / "synthetic.parquet"
    _cockcroft_rows(instances).to_parquet(src, index=False)
    r = cli("audit", "--backend", "rules", "--instances", str(src), "--out", str(tmp_path / "a"))
    assert r.exit_code == 0, r.output
    assert "one run per row" in r.output
    v = pd.read_parquet(tmp_path / "a" / "verdicts.parquet").set_index("uid")
    f = pd.read_parquet(tmp_path / "a" / "flags.parquet").set_index("uid")
    assert v["run"].tolist() == [0, 0, 0, 0]  # runs=1, recorded honestly
    assert v["verdict"].to_dict() == {9001: "yes", 9002: "no", 9003: "no", 9004: "abstain"}
    assert f["flagged"].to_dict() == {9001: False, 9002: True, 9003: True, 9004: False}
    assert (f["runs"] == 1).all() and (f["required"] == 1).all()
    assert "25.238" in f.loc[9002, "reason"] and "40" in f.loc[9002, "reason"]
    assert "creatinine" in f.loc[9003, "reason"].lower() and "implausible" in f.loc[9003, "reason"].lower()
    assert "creatinine" in v.loc[9004, "critique"]
    assert f.loc[9001, "rule"].startswith("deterministic")
    assert (v["backend"] == "rules").all() and v["prompt_sha256"].str.len().eq(64).all()
    info = json.loads((tmp_path / "a" / "run.json").read_text())
    assert info["flagged"] == 2 and info["input_tokens"] == 0 and info["verdicts"] == {"yes": 1, "no": 2, "abstain": 1}
    # no wall-clock or per-invocation field in the outputs; the time goes to the printed log
    assert not {"latency_s", "cached_at", "source"} & set(v.columns)
    assert not {"made", "from_cache", "cost_usd_this_run", "elapsed_s"} & set(info)
    assert "time:" in r.output


def test_rules_audit_on_the_real_split(project, tmp_path):
    r = cli("audit", "--backend", "rules", "--instances", str(project.instances_path), "--out", str(tmp_path / "a"))
    assert r.exit_code == 0, r.output
    f = pd.read_parquet(tmp_path / "a" / "flags.parquet").set_index("uid")
    v = pd.read_parquet(tmp_path / "a" / "verdicts.parquet").set_index("uid")
    assert len(f) == 1047 and len(v) == 1047 and (v["run"] == 0).all()
    assert set(v["verdict"]) <= {"yes", "no", "abstain"}
    assert f["flagged"].to_dict() == (v["verdict"] == "no").to_dict()
    # worked by hand from the rows' Relevant Entities:
    # uid 1, Cockcroft-Gault: (140 - 87) * 48 / (1.4 * 72) = 25.238, the label: correct
    assert v.loc[1, "verdict"] == "yes" and not f.loc[1, "flagged"]
    # uid 853, GCS: eyes open spontaneously 4 + oriented 5 + obeys commands 6 = 15, the label says 20
    # uid 851, GCS: 4 + confused 4 + 6 = 14, the label says 18
    for uid in (853, 851):
        assert v.loc[uid, "verdict"] == "no" and f.loc[uid, "flagged"]
    # uid 592 (SIRS) has a white blood cell count of 9440 per litre: an implausible input
    assert f.loc[592, "flagged"] and "White blood cell count" in f.loc[592, "reason"]
    # uid 856 (GCS): the verbal response is "not testable": no score can be computed
    assert v.loc[856, "verdict"] == "abstain" and not f.loc[856, "flagged"]


def test_relabel_replays_the_published_consensus(project, tmp_path):
    out = tmp_path / "r"
    r = cli("relabel", "--instances", str(project.instances_path), "--out", str(out))
    assert r.exit_code == 0, r.output
    lab = pd.read_parquet(out / "labels.parquet").set_index("uid")
    assert len(lab) == 1047
    assert (lab["status"] == "labeled").sum() == 887 and (lab["status"] == "deferred").sum() == 160
    assert (lab["backend"] == "replay").all() and (lab["model"] == "gemini-2.5-pro (published consensus)").all()
    labeled = lab[lab["status"] == "labeled"]
    assert (labeled["votes"] == 1).all() and (labeled["runs"] == 1).all() and (labeled["required"] == 1).all()
    deferred = lab[lab["status"] == "deferred"]
    assert (deferred["runs"] == 0).all() and deferred["label"].isna().all()
    # the published workbook, read as a spreadsheet: 887 rows with a consensus y_new, 66 of them N/A
    final = pd.read_excel(project.params["campaign"]["final"], keep_default_na=False)
    assert set(labeled.index) == set(final["uid"].astype(int))
    assert (labeled["label"] == "N/A").sum() == 66 == (final["y_new"].astype(str).str.strip() == "N/A").sum()
    # gestational age rows keep v1.0's form: y_new 99 days -> 14 weeks 1 day
    assert lab.loc[1029, "label"] == "('14 weeks', '1 days')"
    # date rows: the workbook's datetime 2014-09-12 -> 09/12/2014
    assert lab.loc[928, "label"] == "09/12/2014"
    info = json.loads((out / "run.json").read_text())
    assert set(info["replayed"]) == {"y_new_and_sampled_MD_evals.xlsx", "y_final_MD_evals_incorporated.xlsx"}


def test_relabel_replays_a_recorded_file(project, tmp_path):
    f = tmp_path / "recorded.jsonl"
    script = {1: ["12", "12", "12", "12", "13"], 2: ["12", "12", "13", "13", "N/A"], 3: ["N/A"] * 5}
    with f.open("w") as fh:
        for uid, answers in script.items():
            for run, a in enumerate(answers):
                fh.write(json.dumps({"uid": uid, "run": run, "text": f"work...\n<answer>{a}</answer>",
                                     "model": "gemini-2.5-pro"}) + "\n")
    out = tmp_path / "r"
    r = cli("relabel", "--backend", "replay", "--replay-file", str(f), "--instances", str(project.instances_path),
            "--limit", "4", "--out", str(out))
    assert r.exit_code == 0, r.output
    lab = pd.read_parquet(out / "labels.parquet").set_index("uid")
    assert lab.loc[1, ["status", "label", "votes", "runs", "required"]].tolist() == ["labeled", "12", 4, 5, 4]
    assert lab.loc[2, "status"] == "deferred" and lab.loc[2, "votes"] == 2
    assert lab.loc[3, ["status", "label", "label_kind"]].tolist() == ["labeled", "N/A", "abstain"]
    assert lab.loc[4, "status"] == "deferred" and lab.loc[4, "runs"] == 0  # not in the file
    votes = pd.read_parquet(out / "votes.parquet")
    assert len(votes) == 15 and (votes["model"] == "gemini-2.5-pro").all()


def test_audit_replays_recorded_verdicts(project, tmp_path):
    f = tmp_path / "verdicts.csv"
    lines = ["uid,run,text"]
    for uid, votes in {1: "nnnny", 2: "nnnyy", 3: "n"}.items():
        for run, v in enumerate(votes):
            verdict = {"n": "no", "y": "yes"}[v]
            lines.append(f'{uid},{run},"<critique>run {run}</critique> <verdict>**{verdict.upper()}**</verdict>"')
    f.write_text("\n".join(lines) + "\n")
    out = tmp_path / "a"
    r = cli("audit", "--backend", "replay", "--replay-file", str(f), "--instances", str(project.instances_path),
            "--limit", "3", "--out", str(out))
    assert r.exit_code == 0, r.output
    fl = pd.read_parquet(out / "flags.parquet").set_index("uid")
    # 4 of 5 no -> flagged; 3 of 5 -> not; a single recorded run needs its one vote (ceil(1 * 4/5) = 1)
    assert fl["flagged"].to_dict() == {1: True, 2: False, 3: True}
    assert fl["required"].to_dict() == {1: 4, 2: 4, 3: 1}
    assert fl.loc[1, "reason"] == "run 0"


def test_replay_file_problems_name_file_row_and_field(project, tmp_path):
    f = tmp_path / "dup.csv"
    f.write_text("uid,run,text\n1,0,<answer>1</answer>\n1,0,<answer>2</answer>\n")
    out = tmp_path / "r"
    r = cli("relabel", "--backend", "replay", "--replay-file", str(f), "--instances", str(project.instances_path),
            "--out", str(out))
    assert r.exit_code == 2
    assert "dup.csv, row 2, field 'run'" in r.output and "duplicate" in r.output
    assert not out.exists()
    g = tmp_path / "cols.jsonl"
    g.write_text(json.dumps({"uid": 1, "text": "x"}) + "\n")
    r = cli("relabel", "--backend", "replay", "--replay-file", str(g), "--instances", str(project.instances_path))
    assert r.exit_code == 2 and "missing column(s) run" in r.output


def test_audit_replay_without_file_and_batch_offline_are_refused(project):
    r = cli("audit", "--backend", "replay", "--instances", str(project.instances_path))
    assert r.exit_code == 2 and "--replay-file" in r.output
    r = cli("audit", "--backend", "rules", "--batch", "--instances", str(project.instances_path))
    assert r.exit_code == 2 and "batch mode" in r.output
    r = cli("relabel", "--backend", "rules", "--instances", str(project.instances_path))
    assert r.exit_code == 2 and "cannot produce" in r.output
    r = cli("audit", "--limit", "0", "--backend", "rules", "--instances", str(project.instances_path))
    assert r.exit_code == 2 and "--limit" in r.output


def test_bad_params_are_reported_with_the_field(project):
    project.set("audit", engine={"concurrency": "many"})
    r = cli("audit", "--backend", "rules", "--instances", str(project.instances_path))
    assert r.exit_code == 2
    assert "params.yaml, field 'audit.engine.concurrency'" in r.output


@pytest.mark.parametrize("stage", ["audit", "relabel"])
def test_gemini_needs_an_api_key_but_dry_run_does_not(project, monkeypatch, stage):
    monkeypatch.delenv("GEMINI_API_KEY")
    r = cli(stage, "--backend", "gemini", "--instances", str(project.instances_path), "--limit", "3")
    assert r.exit_code == 2 and "GEMINI_API_KEY" in r.output
    r = cli(stage, "--backend", "gemini", "--instances", str(project.instances_path), "--dry-run")
    assert r.exit_code == 0, r.output
    assert "5,235" in r.output and "dry run: no call made" in r.output
    assert not (project.root / "out").exists()
