"""`evaluate --steps` and `regrade --steps` on the real release tables (2.4.0's config `inputs`): the same
outputs give the same step-wise numbers through both commands; a release without certified inputs is
refused by name. The per-row rules are tested in tests/grading/test_steps.py."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from medcalc_maintained.cli import app
from tests.scoring.test_evaluate_graders import runner
from tests.support.paths import ROOT

RIGHT = {"sex": "Male", "age": [87, "years"], "weight": [48, "kg"], "height": [163, "cm"],
         "creatinine": [1.4, "mg/dL"]}


def _out(inputs, answer: str) -> str:
    return f"<inputs>{json.dumps(inputs)}</inputs>\n<answer>{answer}</answer>"


def test_evaluate_and_regrade_give_the_same_steps_of_real_rows(tables_root, tmp_path, monkeypatch):
    """Cockcroft-Gault uid 1 (87-year-old man, 48 kg, 163 cm, creatinine 1.4 mg/dL: 25.238 mL/min) answered
    right, with a misread weight carried through (45 kg: 53 x 45 / 100.8 = 23.66), with right inputs and
    the creatinine left out of the arithmetic (53 x 48 / 72 = 35.3), and without a block."""
    monkeypatch.setenv("MEDCALC_ROOT", str(tables_root))
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.tables import load_config

    inputs = load_config(Project.load(tables_root), "2.4.0", "inputs")
    assert sorted(inputs.loc[inputs["uid"] == 1, "name"]) == sorted(RIGHT)
    preds = tmp_path / "preds.jsonl"
    outs = {}
    for variant, text in (("right", _out(RIGHT, "25.24")), ("extraction", _out({**RIGHT, "weight": [45, "kg"]}, "23.66")),
                          ("arithmetic", _out(RIGHT, "35.3")), ("format", "CrCl is about 25 <answer>30</answer>")):
        preds.write_text(json.dumps({"uid": 1, "output": text}) + "\n")
        ev = tmp_path / f"ev-{variant}"
        res = runner.invoke(app, ["evaluate", str(preds), "--against", "2.4.0", "--steps", "--out", str(ev),
                                  "--n-boot", "200"])
        assert res.exit_code == 0, res.output
        rg = tmp_path / f"rg-{variant}"
        res = runner.invoke(app, ["regrade", str(preds), "--format", "jsonl", "--against", "2.4.0", "--steps",
                                  "--out", str(rg), "--n-boot", "200"])
        assert res.exit_code == 0, res.output
        a, b = (pd.read_csv(d / "steps.csv", dtype=str, keep_default_na=False) for d in (ev, rg))
        pd.testing.assert_frame_equal(a, b)
        assert json.loads((ev / "evaluation.json").read_text())["steps"] == \
            json.loads((rg / "evaluation.json").read_text())["steps"]
        outs[variant] = a.iloc[0]
    assert {k: r["error_class"] for k, r in outs.items()} == {"right": "right", "extraction": "extraction",
                                                              "arithmetic": "arithmetic", "format": "format"}
    assert outs["format"]["block"] == "absent" and outs["arithmetic"]["calculator_value"] == "25.238"
    wrong = pd.read_csv(tmp_path / "ev-extraction" / "steps_inputs.csv").set_index("input")["status"]
    assert wrong["weight"] == "wrong" and (wrong.drop("weight") == "correct").all()
    assert (tmp_path / "ev-right" / "steps.png").stat().st_size > 0


def test_steps_need_a_release_with_certified_inputs(tables_root, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDCALC_ROOT", str(tables_root))
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"uid": 1, "output": _out(RIGHT, "25.24")}) + "\n")
    res = runner.invoke(app, ["evaluate", str(preds), "--against", "2.3.2", "--steps", "--out", str(tmp_path / "ev")])
    assert res.exit_code != 0
    assert "--steps needs a label set with certified inputs" in " ".join(res.output.split())
    assert not (tmp_path / "ev").exists()


def _documented_steps() -> dict[str, int]:
    """The table of docs/evaluating.md between the steps-demo markers: {row label: count}."""
    text = (ROOT / "docs" / "evaluating.md").read_text(encoding="utf-8")
    block = text.split("<!-- steps-demo:")[1].split("<!-- /steps-demo -->")[0]
    rows = [line.strip("|").split("|") for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    return {label.strip(): int(n) for label, n in rows[1:]}


def test_the_real_models_documented_breakdown_is_what_evaluate_steps_gives(tmp_path, monkeypatch):
    """data/steps_demo holds a real model's lm-eval outputs on the first 55 rows of 2.4.1's mini; the table
    of docs/evaluating.md is what `evaluate --steps` makes of them against the pipeline's 2.4.1 (the docs
    say so)."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.tables import load_config

    release = ROOT / "data" / "releases" / "2.4.1"
    missing = [str(release / f"{c}.parquet") for c in ("mini", "default", "inputs")
               if not (release / f"{c}.parquet").is_file()]
    if missing:
        pytest.skip(f"pipeline outputs absent (run `dvc repro`): {', '.join(missing)}")
    monkeypatch.setenv("MEDCALC_ROOT", str(ROOT))  # evaluate reads the release there and writes only to --out
    outputs = ROOT / "data" / "steps_demo" / "lm-eval-outputs.jsonl"
    uids = [json.loads(line)["uid"] for line in outputs.read_text(encoding="utf-8").splitlines()]
    mini = load_config(Project.load(ROOT), "2.4.1", "mini")
    assert uids == [int(u) for u in mini["Row Number"].head(55)]  # what `--limit 55` takes, in its order
    res = runner.invoke(app, ["evaluate", str(outputs), "--against", "2.4.1", "--steps", "--out", str(tmp_path / "ev"),
                              "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    s = json.loads((tmp_path / "ev" / "evaluation.json").read_text())["steps"]["v2.4.1"]
    c = s["classes"]
    assert _documented_steps() == {
        "right": c["right"], "right, with a readable `<inputs>` block": s["right_with_readable_inputs"],
        "right from wrong inputs": s["right_from_wrong_inputs"], "wrong: extraction": c["extraction"],
        "wrong: arithmetic": c["arithmetic"], "wrong: both": c["both"], "wrong: format": c["format"],
        "wrong: N/A given or withheld": c["abstention"], "wrong: unjudged": c["unjudged"]}
    assert s["rows"] + s["rows_without_certified_inputs"] == len(uids)
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert (f"{c['right']} answers right, the {s['right_with_readable_inputs']} with a readable block both from wrong "
            f"inputs; {c['extraction']} wrong from extraction, {c['arithmetic']} from arithmetic, {c['both']} from "
            f"both, {c['format']} format, {c['abstention']} on N/A rows") in readme
    assert s["right_from_wrong_inputs"] == s["right_with_readable_inputs"]  # "both from wrong inputs"


def test_the_card_shows_the_documented_breakdown():
    """The card of the pipeline's latest release (2.4.2 on, build/release) carries the same table as
    docs/evaluating.md: the committed outputs graded against the release being built give what
    `evaluate --steps` gives against 2.4.1 (the labels and certified inputs they share)."""
    from medcalc_maintained.core.versions import rules
    from medcalc_maintained.release.layout import read_manifest

    build = ROOT / "build" / "release"
    if not (build / "manifest.json").is_file():
        pytest.skip(f"pipeline outputs absent (run `dvc repro`): {build / 'manifest.json'}")
    version = read_manifest(build)["version"]
    assert rules(version).card_steps, f"the latest release {version} should show the breakdown"
    card = (build / "README.md").read_text(encoding="utf-8")
    block = card.split("**How a model got there.**")[1].split("\n\n")
    table = next(part for part in block if part.startswith("| answers ("))
    rows = [line.strip("|").split("|") for line in table.splitlines()[2:]]
    assert {label.strip(): int(n) for label, n in rows} == _documented_steps()
    assert "54 step-graded rows of 55; 1 has no certified input" in table.splitlines()[0]
    assert f"--against {version} --steps" in " ".join(card.split())
