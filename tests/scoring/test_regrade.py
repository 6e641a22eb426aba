"""`regrade` on the files that need no harness run: MedCalc-Bench's own run.py output made here from
real upstream v1.0 rows, evaluate's predictions (JSONL and CSV), and every refusal (unknown format,
missing key, a row not in the release, an ambiguous or foreign row, a row given twice, a truncated
Inspect log, slow): exit 2 naming file and line, nothing written. The harness logs (lm-eval, Inspect,
HELM, verifiers) are in tests/e2e/harnesses/test_regrade_harnesses.py (slow)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.core.readers import sha256_file
from medcalc_maintained.project import Project
from medcalc_maintained.scoring.evaluate import evaluate
from medcalc_maintained.scoring.labels import resolve_against

runner = CliRunner()
UPSTREAM_COLS = ["Row Number", "Calculator ID", "Calculator Name", "Category", "Output Type", "Note ID", "Note Type",
                 "Patient Note", "Question", "Ground Truth Answer", "Lower Limit", "Upper Limit"]
WRONG = "-987654"  # parsable, and near no label
# upstream's run.py: the error text it writes as LLM Answer when check_correctness raises
RAISED = "invalid syntax (<string>, line 1)"


def write_release(root: Path, version: str, rows: pd.DataFrame, default: pd.DataFrame) -> Path:
    """A built release directory (full and default configs, manifest with the sha256 of each file)."""
    files = {}
    for name, frame in (("full", rows), ("default", default)):
        part = root / "data" / name / "test-00000-of-00001.parquet"
        part.parent.mkdir(parents=True)
        frame.to_parquet(part, index=False)
        files[part.relative_to(root).as_posix()] = sha256_file(part)
    (root / "manifest.json").write_text(json.dumps({"version": version, "files": files}))
    return root


@pytest.fixture(scope="module")
def real(tmp_path_factory, v1_test_csv):
    """Two releases of the real 1,047 v1.0 rows: ``v1`` (upstream's labels, every row) and ``v2``, where
    uid 201 (integer) is relabelled +1, uid 1 (decimal) is N/A and uid 26 is unverified (not in default)."""
    base = tmp_path_factory.mktemp("regrade-real")
    up = pd.read_csv(v1_test_csv, dtype=str, keep_default_na=False)[UPSTREAM_COLS]
    up["Row Number"] = up["Row Number"].astype("int64")
    up["Calculator ID"] = up["Calculator ID"].astype("int64")
    v1 = up.assign(**{"Label Status": "unverified"})
    v2 = up.assign(**{"Label Status": "confirmed"}).set_index("Row Number", drop=False)
    new = str(int(v2.at[201, "Ground Truth Answer"]) + 1)
    v2.loc[201, ["Ground Truth Answer", "Lower Limit", "Upper Limit", "Label Status"]] = [new, new, new, "corrected"]
    v2.loc[1, ["Ground Truth Answer", "Lower Limit", "Upper Limit", "Label Status"]] = ["N/A", "N/A", "N/A", "abstain"]
    v2.loc[26, "Label Status"] = "unverified"
    v2 = v2.reset_index(drop=True)
    return {"up": up.set_index("Row Number", drop=False),
            "v1": write_release(base / "v1", "1.0.0", v1, v1),
            "v2": write_release(base / "v2", "2.0.0", v2, v2[v2["Label Status"] != "unverified"])}


def run_py_line(row: pd.Series, answer: str, result: str) -> dict:
    """One line as MedCalc-Bench's evaluation/run.py writes it (Calculator ID and Note ID as text)."""
    return {"Row Number": int(row["Row Number"]), "Calculator Name": row["Calculator Name"],
            "Calculator ID": str(row["Calculator ID"]), "Category": row["Category"], "Note ID": row["Note ID"],
            "Patient Note": row["Patient Note"], "Question": row["Question"], "LLM Answer": answer,
            "LLM Explanation": "N/A", "Ground Truth Answer": row["Ground Truth Answer"],
            "Ground Truth Explanation": "", "Result": result}


def right_answer(row: pd.Series) -> str:
    """What run.py extracts from a right answer: the label, a gestational age as (weeks, days)."""
    if str(row["Calculator ID"]) == "69":
        return "({}, {})".format(*re.findall(r"\d+", row["Ground Truth Answer"]))
    return row["Ground Truth Answer"]


@pytest.fixture
def upstream_results(real, tmp_path):
    """run.py output on 44 real rows (every 25th, a date and a gestational-age row): by position, the
    right answer (Correct), a wrong number or, on date rows, the error text run.py writes (Incorrect),
    N/A (upstream found no answer: Incorrect), and the right answer again (Correct)."""
    up = real["up"]
    uids = sorted({*range(1, 1048, 25), 928, 1029})
    lines, correct = [], 0
    for i, uid in enumerate(uids):
        row = up.loc[uid]
        kind = i % 4
        if kind in (0, 3):
            lines.append(run_py_line(row, right_answer(row), "Correct"))
            correct += 1
        elif kind == 1:
            lines.append(run_py_line(row, RAISED if row["Output Type"] == "date" else WRONG, "Incorrect"))
        else:
            lines.append(run_py_line(row, "N/A", "Incorrect"))
    path = tmp_path / "OpenAI_GPT-4_zero_shot.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path, lines, correct


def cli(*args: str):
    return runner.invoke(app, list(args))


def test_upstream_run_py_output_is_reproduced_then_rescored(real, upstream_results, tmp_path):
    path, lines, correct = upstream_results
    assert {201, 1, 26} <= {x["Row Number"] for x in lines}  # the rows v2 changes are among them
    out = tmp_path / "out"
    r = cli("regrade", str(path), "--against", f"v1={real['v1']}", "--against", f"v2={real['v2']}", "--out", str(out))
    assert r.exit_code == 0, r.output
    n = len(lines)
    share = f"{correct / n:.4f}".rstrip("0")
    assert f"reproduced MedCalc-Bench run.py Result {share} ({correct}/{n}) exactly" in " ".join(r.output.split())
    rep = json.loads((out / "regrade.json").read_text())
    (repro,) = rep["reproduction"]
    assert (repro["exact"], repro["n"], repro["recorded_correct"], repro["rule"]) == (True, n, correct, "upstream")
    assert repro["derived_limits"] == 0  # every recorded label is v1.0's, so its limits are the release's
    # default graders: ours and the harness's own rule; with two versions, labels and grading are separated
    assert rep["graders"] == ["ours", "upstream"] and (out / "decomposition.csv").is_file()
    # the re-score is evaluate on the same outputs (run.py's N/A read as no answer)
    preds = {x["Row Number"]: "" if x["LLM Answer"] == "N/A" else x["LLM Answer"] for x in lines}
    project = Project.load()
    params = project.section("compare.evaluate")
    sources = resolve_against(project, [f"v1={real['v1']}", f"v2={real['v2']}"])
    direct = evaluate(preds, sources, n_boot=params["n_boot"], seed=params["seed"], graders=["ours", "upstream"])
    got = json.loads((out / "evaluation.json").read_text())
    assert got["accuracy"] == json.loads(direct.accuracy.to_json(orient="records"))
    assert got["decomposition"] == json.loads(direct.decomposition.to_json(orient="records"))
    graded = pd.read_csv(out / "graded.csv", dtype=str, keep_default_na=False).set_index(["label_set", "uid"])
    # hand-checked rows: uid 201 (answered with v1.0's label) is right under v1 and wrong once v2 relabels it;
    # uid 1 answered right under v1 is wrong under its v2 label N/A; uid 26 is not scored under v2 (unverified)
    results = {x["Row Number"]: x["Result"] for x in lines}
    assert results[201] == results[1] == "Correct"
    for uid in ("201", "1"):
        assert graded.loc[("v1 [ours]", uid), "status"] == "correct" != graded.loc[("v2 [ours]", uid), "status"]
    assert ("v2 [ours]", "26") not in graded.index and ("v1 [ours]", "26") in graded.index
    # tag compliance: run.py keeps no output text, so no tag is counted; N/A and the error text are unparsable
    comp = pd.read_csv(out / "compliance.csv", keep_default_na=False)
    everything = comp[comp["scope"] == "all outputs"].iloc[0]
    unparsable = sum(1 for x in lines if x["LLM Answer"] in ("N/A", RAISED))
    assert everything["tagged"] == "" and everything["parsable"] == n - unparsable
    assert "tag compliance over 44 outputs: n/a with an <answer> tag" in " ".join(r.output.split())


def test_a_recorded_verdict_that_does_not_reproduce_is_named(real, upstream_results, tmp_path):
    path, lines, correct = upstream_results
    i = next(i for i, x in enumerate(lines) if x["LLM Answer"] == WRONG)
    lines[i]["Result"] = "Correct"  # a wrong answer the file says was right
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = cli("regrade", str(path), "--against", str(real["v1"]), "--out", str(tmp_path / "out"))
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "NOT reproduced" in text and f"gives {correct}/{len(lines)}" in text
    assert f"uid {lines[i]['Row Number']}: recorded correct, regraded wrong (answer '{WRONG}'" in text
    diff = pd.read_csv(tmp_path / "out" / "reproduction.csv")
    assert diff["uid"].tolist() == [lines[i]["Row Number"]]


def test_rows_identified_by_calculator_and_note_when_no_row_number(real, upstream_results, tmp_path):
    path, lines, correct = upstream_results
    for x in lines:
        x["Row Number"] = None
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = cli("regrade", str(path), "--against", str(real["v1"]), "--out", str(tmp_path / "out"))
    assert r.exit_code == 0, r.output
    assert f"({correct}/{len(lines)}) exactly" in " ".join(r.output.split())


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_plain_predictions_rescore_exactly_as_evaluate(real, tmp_path, fmt):
    up = real["up"]
    outputs = {1: "<answer>25.238</answer>", 76: f"<answer>{up.at[76, 'Ground Truth Answer']}</answer>",
               51: f"The score is {up.at[51, 'Ground Truth Answer']}.", 26: "<answer>N/A</answer>",
               101: f"<answer>{WRONG}</answer>", 928: f"<answer>{up.at[928, 'Ground Truth Answer']}</answer>"}
    preds = tmp_path / f"p.{fmt}"
    if fmt == "jsonl":
        preds.write_text("".join(json.dumps({"uid": u, "output": o}) + "\n" for u, o in outputs.items()))
    else:
        pd.DataFrame({"uid": list(outputs), "output": list(outputs.values())}).to_csv(preds, index=False)
    against = ["--against", f"v1={real['v1']}", "--against", f"v2={real['v2']}"]
    ev = cli("evaluate", str(preds), *against, "--out", str(tmp_path / "ev"))
    rg = cli("regrade", str(preds), *against, "--out", str(tmp_path / "rg"))
    assert ev.exit_code == 0 and rg.exit_code == 0, (ev.output, rg.output)
    assert "nothing to reproduce" in rg.output
    for name in ("evaluation.json", "graded.csv", "per_calculator.csv", "per_status.csv", "flips.csv", "skipped.csv",
                 "abstention.csv"):
        assert (tmp_path / "rg" / name).read_bytes() == (tmp_path / "ev" / name).read_bytes(), name
    comp = pd.read_csv(tmp_path / "rg" / "compliance.csv", keep_default_na=False).set_index(["scope", "name"])
    # 5 of 6 tagged; "The score is N." is unparsable untagged text; N/A is parsable (an abstention)
    assert comp.loc[("all outputs", ""), ["tagged", "parsable"]].tolist() == [5, 5]
    assert comp.loc[("label set", "v2"), "outputs"] == 5  # uid 26 is unverified in v2: not scored
    # --force replaces only an earlier regrade; without it a non-empty --out is refused
    again = cli("regrade", str(preds), *against, "--out", str(tmp_path / "rg"))
    assert again.exit_code == 2 and "not empty" in again.output
    assert cli("regrade", str(preds), *against, "--out", str(tmp_path / "rg"), "--force").exit_code == 0
    forced = cli("regrade", str(preds), *against, "--out", str(tmp_path / "ev"), "--force")
    assert forced.exit_code == 2 and "not an earlier output of `regrade`" in " ".join(forced.output.split())


def refused(real, tmp_path, *files: Path, fmt: str | None = None) -> str:
    out = tmp_path / "never"
    r = cli("regrade", *map(str, files), "--against", str(real["v1"]), "--out", str(out),
            *(["--format", fmt] if fmt else []))
    assert r.exit_code == 2, r.output
    assert not out.exists()  # nothing written, not even the directory
    return " ".join(r.output.split())


def test_refusals_name_file_and_line(real, upstream_results, tmp_path):
    path, lines, _ = upstream_results
    odd = tmp_path / "odd.jsonl"
    odd.write_text(json.dumps({"id": 1, "text": "4"}) + "\n")
    assert f"{odd}, line 1: unknown results format" in refused(real, tmp_path, odd)
    assert "--format" in refused(real, tmp_path, odd, fmt="nonsense")
    no_uid = tmp_path / "no_uid.csv"
    no_uid.write_text("row,output\n1,4\n")
    assert f"{no_uid}, line 1: header ['row', 'output'] has no 'uid' column" in refused(real, tmp_path, no_uid)
    outside = tmp_path / "outside.jsonl"
    outside.write_text(json.dumps({"uid": 1, "output": "1"}) + "\n" + json.dumps({"uid": 5000, "output": "1"}) + "\n")
    assert f"{outside}, line 2: uid 5000 is not a row of v1 (1047 rows, uid 1..1047)" in refused(real, tmp_path, outside)
    # a line of run.py's output without its answer
    broken = tmp_path / "broken.jsonl"
    del lines[1]["LLM Answer"]
    broken.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert f"{broken}, line 2: missing key(s) ['LLM Answer']" in refused(real, tmp_path, broken)


def test_foreign_ambiguous_and_repeated_rows_are_refused(real, upstream_results, tmp_path):
    path, lines, _ = upstream_results
    up = real["up"]
    # Row Number 1 with the Calculator ID + Note ID of row 26: rows renumbered (another upstream version)
    amb = tmp_path / "amb.jsonl"
    amb.write_text(json.dumps({**lines[0], "Calculator ID": str(up.at[26, "Calculator ID"]),
                               "Note ID": up.at[26, "Note ID"]}) + "\n")
    assert f"{amb}, line 1: ambiguous row: Row Number 1 and Calculator ID" in refused(real, tmp_path, amb)
    # Row Number 1 with a calculator it is not
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(json.dumps({**lines[0], "Calculator ID": "99", "Note ID": "made-up"}) + "\n")
    text = refused(real, tmp_path, foreign)
    assert f"{foreign}, line 1: recorded Calculator ID '99', but Row Number 1 of v1 is Calculator ID '2'" in text
    # the note of another row under row 1's identity
    edited = tmp_path / "edited.jsonl"
    edited.write_text(json.dumps({**lines[0], "Patient Note": up.at[26, "Patient Note"]}) + "\n")
    assert "the recorded Patient Note is not the note of Row Number 1" in refused(real, tmp_path, edited)
    # one row in two files
    twice = tmp_path / "twice.jsonl"
    twice.write_text(json.dumps(lines[0]) + "\n")
    assert f"{twice}, line 1: uid 1 is given twice (also {path}, line 1)" in refused(real, tmp_path, path, twice)


def test_a_file_saved_into_out_during_the_run_is_kept(real, tmp_path):
    """`regrade --out rg --force` over an earlier regrade, step by step: ``out`` is checked before the
    work; a file the user saves into it meanwhile keeps it from being replaced at the swap (issue 46:
    it was deleted with the old set)."""
    from medcalc_maintained.core.errors import OutRefused
    from medcalc_maintained.harnesses.registry import read_results
    from medcalc_maintained.scoring import regrade as rg

    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"uid": 1, "output": "<answer>25.238</answer>"}) + "\n")
    out, against = tmp_path / "rg", [str(real["v1"])]
    assert cli("regrade", str(preds), "--against", against[0], "--out", str(out)).exit_code == 0
    rg.check_out(out, force=True)  # an earlier regrade: --force replaces it
    report = rg.regrade_results([read_results(preds)], resolve_against(Project.load(), against), n_boot=100, seed=1)
    (out / "notes.md").write_text("mine")
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert Path("eee/v1.jsonl") in before  # its EEE file too
    with pytest.raises(OutRefused, match=r"is not an earlier output of `regrade` \(holds 1 entry .*'notes.md'"):
        rg.write_regrade(report, out, force=True)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl", "rg"]  # no scratch folder left
