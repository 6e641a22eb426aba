"""`regrade` and Every Eval Ever (EEE) instance-level files (issue 48, item 1), on real v1.0 rows:
regrade writes ``eee/<label set>.jsonl`` carrying the release tag and the labels' content hash; it
reads such files back, and files shaped as EEE's converters write them (rows named by their prompt,
no uid), reproducing the recorded score; and it refuses what it cannot take, naming file and line.
The round trips through EEE's own package and converters are in
tests/e2e/harnesses/test_regrade_harnesses.py and test_harness_real_model.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from medcalc_maintained.grading.prompts import SYSTEM_PROMPT
from medcalc_maintained.scoring.labels import labels_sha256
from tests.scoring import test_regrade as base

cli, real = base.cli, base.real  # the module fixture of real rows

UIDS = (1, 5, 26, 201, 300)


def outputs(real) -> dict[int, str]:
    up = real["up"]
    return {1: "<answer>N/A</answer>", 5: f"worked out.\n<answer>{up.at[5, 'Ground Truth Answer']}</answer>",
            26: "<answer>-987654</answer>", 201: f"<answer>{up.at[201, 'Ground Truth Answer']}</answer>",
            300: "The score is high."}


def regrade(real, tmp_path, *files: Path, name: str = "rg"):
    out = tmp_path / name
    res = cli("regrade", *map(str, files), "--against", f"v1={real['v1']}", "--against", f"v2={real['v2']}",
              "--out", str(out))
    return res, out


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_labels_hash_is_the_documented_digest_and_ignores_row_order():
    frame = pd.DataFrame({"uid": [7, 3], "Ground Truth Answer": ["N/A", "12.5"], "Lower Limit": ["N/A", "11.875"],
                          "Upper Limit": ["N/A", "13.125"], "Output Type": ["decimal", "decimal"], "other": ["x", "y"]})
    text = "3\t12.5\t11.875\t13.125\tdecimal\n7\tN/A\tN/A\tN/A\tdecimal\n"
    assert labels_sha256(frame) == hashlib.sha256(text.encode()).hexdigest()
    assert labels_sha256(frame.iloc[::-1]) == labels_sha256(frame)
    assert labels_sha256(frame.assign(**{"Upper Limit": ["N/A", "13.2"]})) != labels_sha256(frame)


def test_regrade_writes_eee_files_with_the_release_tag_and_the_labels_hash(real, tmp_path):
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"uid": u, "output": o}) + "\n" for u, o in outputs(real).items()))
    res, out = regrade(real, tmp_path, preds)
    assert res.exit_code == 0, res.output
    graded = pd.read_csv(out / "graded.csv", keep_default_na=False)
    summary = json.loads((out / "regrade.json").read_text())["eee"]
    for name, version in (("v1", "1.0.0"), ("v2", "2.0.0")):
        logs = jsonl(out / "eee" / f"{name}.jsonl")
        default = pd.read_parquet(real[name] / "data" / "default" / "test-00000-of-00001.parquet")
        digest = labels_sha256(default.rename(columns={"Row Number": "uid"}))
        mine = graded[graded["label_set"] == name].set_index("uid")
        assert [int(x["sample_id"]) for x in logs] == sorted(mine.index)  # v2 leaves 26 out: unverified
        for log in logs:
            uid = int(log["sample_id"])
            meta = log["metadata"]
            assert (meta["release"], meta["release_tag"], meta["labels_sha256"], meta["grader"]) == \
                (version, f"v{version}", digest, "ours")
            assert log["output"]["raw"] == [outputs(real)[uid]]
            assert log["evaluation"]["is_correct"] == bool(mine.loc[uid, "correct"]) and \
                log["evaluation"]["score"] == float(mine.loc[uid, "correct"])
            assert log["input"]["reference"] == [str(mine.loc[uid, "label"])] and meta["uid"] == uid
            assert log["input"]["raw"].startswith("Patient note:\n" + real["up"].at[uid, "Patient Note"].strip())
        assert summary[f"eee/{name}.jsonl"]["labels_sha256"] == digest
    v1, v2 = (labels_sha256(pd.read_parquet(real[n] / "data" / "default" / "test-00000-of-00001.parquet")
                            .rename(columns={"Row Number": "uid"})) for n in ("v1", "v2"))
    assert v1 != v2  # two label versions never share a hash
    # uid 1: N/A is wrong under v1, right under v2 (its label is N/A there)
    by = {n: {int(x["sample_id"]): x for x in jsonl(out / "eee" / f"{n}.jsonl")} for n in ("v1", "v2")}
    assert (by["v1"][1]["evaluation"]["is_correct"], by["v2"][1]["evaluation"]["is_correct"]) == (False, True)


def test_our_eee_file_read_back_reproduces_its_score(real, tmp_path):
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"uid": u, "output": o}) + "\n" for u, o in outputs(real).items()))
    res, first = regrade(real, tmp_path, preds)
    assert res.exit_code == 0, res.output
    res, again = regrade(real, tmp_path, first / "eee" / "v2.jsonl", name="again")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "reproduced Every Eval Ever correct 0.5 (2/4) exactly" in text, text  # 1 (N/A) and 201 of 1, 5, 201, 300
    assert (again / "eee" / "v2.jsonl").read_bytes() == (first / "eee" / "v2.jsonl").read_bytes()
    # v1 again, on the rows v2's file holds (26 is unverified in v2): the same lines
    assert jsonl(again / "eee" / "v1.jsonl") == [x for x in jsonl(first / "eee" / "v1.jsonl") if x["sample_id"] != "26"]


def converted(real, uids, verdicts, label_of=None) -> list[dict]:
    """EEE lines as its lm-eval converter writes them: the chat-rendered prompt, lm-eval's doc index as
    sample_id, the target as reference, one metric's verdict; no uid anywhere."""
    up = real["up"]
    lines = []
    for i, (uid, ok) in enumerate(zip(uids, verdicts)):
        user = f"Patient note:\n{up.at[uid, 'Patient Note'].strip()}\n\nQuestion: {up.at[uid, 'Question'].strip()}"
        raw = f"<|im_start|>system\n{SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
        label = (label_of or {}).get(uid, up.at[uid, "Ground Truth Answer"])
        lines.append({"schema_version": "0.3.0", "evaluation_id": "medcalc_maintained_mini/m/1", "model_id": "org/m",
                      "evaluation_name": "medcalc_maintained_mini", "evaluation_result_id": "acc", "sample_id": str(i),
                      "interaction_type": "single_turn", "input": {"raw": raw, "reference": [label]},
                      "output": {"raw": [outputs(real)[uid]]},
                      "evaluation": {"score": float(ok), "is_correct": ok}, "metadata": {"filter": "none"}})
    return lines


def write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_a_converted_file_is_identified_by_note_and_question_and_reproduced(real, tmp_path):
    # under v1's labels: 5 and 201 right; 1 (N/A), 26 (wrong number) and 300 (unparsable) wrong
    lines = converted(real, [1, 5, 26, 201, 300], [False, True, False, True, False])
    samples = write_lines(tmp_path / "0b2c_samples.jsonl", lines)
    (tmp_path / "0b2c.json").write_text(json.dumps({"evaluation_results": [
        {"evaluation_name": "medcalc_maintained_mini", "evaluation_result_id": "acc", "score_details": {"score": 0.4}}]}))
    res, out = regrade(real, tmp_path, samples)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "reproduced Every Eval Ever acc 0.4 (2/5) exactly" in text, text
    regrade_json = json.loads((out / "regrade.json").read_text())
    assert regrade_json["inputs"][0]["recorded_from"].startswith("0b2c.json: evaluation_results")
    assert {int(x["sample_id"]) for x in jsonl(out / "eee" / "v1.jsonl")} == {1, 5, 26, 201, 300}
    assert {x["model_id"] for x in jsonl(out / "eee" / "v1.jsonl")} == {"org/m"}
    # a verdict the rule does not give is named, not hidden
    lines[1]["evaluation"] = {"score": 0.0, "is_correct": False}
    res, _ = regrade(real, tmp_path, write_lines(tmp_path / "x_samples.jsonl", lines), name="rg2")
    assert res.exit_code == 0 and "NOT reproduced" in res.output


@pytest.mark.parametrize("spoil, message", [
    (lambda x: x[2]["input"].update(raw="Patient note:\nA cat.\n\nQuestion: How old?"),
     "line 3: no uid or Row Number, no Calculator ID + Note ID, and no note and question"),
    (lambda x: x[1].update(evaluation_id="another"), "instances of several evaluation_ids"),
    (lambda x: x[0]["output"].update(raw=["a", "b"]), "line 1: 2 outputs for one sample"),
    (lambda x: x[0]["evaluation"].update(is_correct=1), "line 1: evaluation.is_correct must be true or false"),
    (lambda x: x[0].pop("output"), "line 1: missing output.raw"),
])
def test_what_regrade_cannot_take_from_an_eee_file_is_refused_and_nothing_written(real, tmp_path, spoil, message):
    lines = converted(real, [1, 5, 26], [False, True, False])
    spoil(lines)
    res, out = regrade(real, tmp_path, write_lines(tmp_path / "s_samples.jsonl", lines))
    assert res.exit_code == 2 and message in " ".join(res.output.split()), res.output
    assert not out.exists()


def test_a_prompt_recorded_as_json_chat_messages_is_read_by_its_user_turn(real, tmp_path):
    # lm-eval without a chat template of the model records the messages as JSON; EEE keeps that text
    lines = converted(real, [5, 201, 300], [True, True, False])
    for line in lines:
        user = line["input"]["raw"].split("<|im_start|>user\n", 1)[1].split("<|im_end|>", 1)[0]
        line["input"]["raw"] = json.dumps([{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}])
    res, out = regrade(real, tmp_path, write_lines(tmp_path / "j_samples.jsonl", lines))
    assert res.exit_code == 0, res.output
    assert "reproduced Every Eval Ever acc 0.6667 (2/3) exactly" in " ".join(res.output.split())
    assert [x["sample_id"] for x in jsonl(out / "eee" / "v1.jsonl")] == ["5", "201", "300"]
