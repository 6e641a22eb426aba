"""``regrade``'s re-graded results as Every Eval Ever (EEE) instance-level logs: ``eee/<label set>.jsonl``.

EEE (every-eval-ever on the package index) stores per-item results with converters from lm-eval,
Inspect and HELM, but no dataset revision: scores on different label versions would mix. Each file
written here is one label set graded by one grader, one ``InstanceLevelEvaluationLog`` per scored
row (schema :data:`SCHEMA_VERSION`): ``sample_id`` our ``uid``, ``input.raw`` the row's user turn
(``grading/prompts.py``), ``input.reference`` the label, ``output.raw`` the model's output,
``answer_attribution`` the answer our one rule extracts, ``evaluation`` the grade; and ``metadata``
what EEE has no field for: the release and its tag, the **content hash of the labels**
(:func:`medcalc_maintained.scoring.labels.labels_sha256`), the grader, the row's label, limits and
output type, the answer's status. ``regrade`` reads such a file back (``harnesses/eee_harness``)
and reproduces its score exactly. The files are checked by EEE's own models in the slow test
(``tests/e2e/harnesses/test_regrade_harnesses.py``, ``tests/e2e/harnesses/test_harness_real_model.py``), never by a copy of its schema.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pandas as pd

from medcalc_maintained.core.answers import graded_answer
from medcalc_maintained.core.versions import full_tag
from medcalc_maintained.grading.prompts import build_prompt

SCHEMA_VERSION = "0.3.0"  # the EEE instance-level schema these logs follow (every-eval-ever 0.3.0)
EVALUATION_NAME = "medcalc_maintained"  # regrade reads files of this name as results of our task
EXTRACTION = "the last <answer>...</answer> of the output, else the whole output (medcalc_maintained core/answers.py)"


def file_name(label_set: str) -> str:
    """The file of one label set: ``v2.3.0 [ours]`` -> ``v2.3.0_ours.jsonl``."""
    return re.sub(r"[^A-Za-z0-9.\-]+", "_", label_set).strip("_") + ".jsonl"


def instance_logs(graded: pd.DataFrame, label_set: str, *, grader: str, version: str | None, labels_sha256: str,
                  outputs: dict[int, str], prompts: dict[int, tuple[str, str]], model_id: str,
                  limits: dict[int, tuple[str, str]]) -> list[dict[str, Any]]:
    """The logs of the rows ``graded`` holds for ``label_set`` (``evaluate``'s graded table).
    ``prompts``: uid -> (note, question); ``limits``: uid -> (lower, upper) of the label set."""
    rows = graded[graded["label_set"] == label_set].sort_values("uid")
    evaluation_id = f"medcalc-maintained/{file_name(label_set)[:-6]}/{labels_sha256[:12]}"
    release: dict[str, Any] = {"release": version, "release_tag": full_tag(version) if version else None}
    logs = []
    for r in rows.to_dict("records"):
        uid = int(r["uid"])
        note, question = prompts[uid]
        raw = build_prompt(note, question)[1]["content"]
        label = str(r["label"])
        lower, upper = limits[uid]
        meta: dict[str, Any] = {"uid": uid, **release, "labels_sha256": labels_sha256, "label_set": label_set,
                                "grader": grader, "label": label, "lower_limit": lower, "upper_limit": upper,
                                "output_type": str(r["output_type"]), "status": str(r["status"]),
                                "parsed": str(r["parsed"])}
        logs.append({
            "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": model_id,
            "evaluation_name": f"{EVALUATION_NAME} {label_set}", "evaluation_result_id": "correct",
            "sample_id": str(uid),
            "sample_hash": hashlib.sha256(json.dumps({"raw": raw, "reference": label}, sort_keys=True)
                                          .encode()).hexdigest(),
            "interaction_type": "single_turn",
            "input": {"raw": raw, "reference": [label]},
            "output": {"raw": [outputs[uid]]},
            "answer_attribution": [{"turn_idx": 0, "source": "output.raw", "extracted_value": graded_answer(outputs[uid]),
                                    "extraction_method": EXTRACTION, "is_terminal": True}],
            "evaluation": {"score": 1.0 if r["correct"] else 0.0, "is_correct": bool(r["correct"])},
            "metadata": meta,
        })
    return logs


def to_jsonl(logs: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(log, ensure_ascii=False, allow_nan=False) + "\n" for log in logs)
