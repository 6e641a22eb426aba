"""`regrade` on the files that need no harness run: MedCalc-Bench's own run.py output made here from
real upstream v1.0 rows, evaluate's predictions (JSONL and CSV), and every refusal (unknown format,
missing key, a row not in the release, an ambiguous or foreign row, a row given twice, a truncated
Inspect log, slow): exit 2 naming file and line, nothing written. The harness logs (lm-eval, Inspect,
HELM, verifiers) are in tests/e2e/harnesses/test_regrade_harnesses.py (slow).

The end-to-end tests of this subject; the fast ones are in tests/scoring/test_regrade.py."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.scoring import test_regrade as fast_tests
from tests.scoring.test_regrade import cli, refused

# shared with the fast tests
real = fast_tests.real


# inspect-ai's import and a mock eval: ~10 s
def test_inspect_log_reproduced_and_truncated_log_refused(real, tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    from medcalc_maintained.harnesses.inspect_task import medcalc_scorer, to_sample

    rows = pd.read_parquet(real["v2"] / "data" / "default" / "test-00000-of-00001.parquet").head(12)
    samples = MemoryDataset([to_sample(r) for r in rows.to_dict("records")])
    by_prompt = {s.input[-1].content: int(s.id) for s in samples}
    labels = dict(zip(rows["Row Number"].astype(int), rows["Ground Truth Answer"]))

    def answer(messages, tools, tool_choice, config):
        uid = by_prompt[messages[-1].text]
        out = ModelOutput.from_content(model="mockllm", content=f"<answer>{labels[uid]}</answer>" if uid % 3 else "?")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    (log,) = inspect_eval(Task(dataset=samples, solver=generate(), scorer=medcalc_scorer()),
                          model=get_model("mockllm/model", custom_outputs=answer), log_dir=str(tmp_path / "logs"),
                          display="none")
    right = sum(1 for u in labels if u % 3)
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(right / 12)
    (eval_file,) = (tmp_path / "logs").glob("*.eval")
    r = cli("regrade", str(eval_file), "--against", str(real["v2"]), "--out", str(tmp_path / "out"))
    assert r.exit_code == 0, r.output
    assert f"({right}/12) exactly" in " ".join(r.output.split())
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(eval_file.read_bytes()[: eval_file.stat().st_size // 2])
    assert f"{truncated}: not a readable Inspect log" in refused(real, tmp_path, truncated)
