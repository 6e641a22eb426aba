"""Helpers of the LLM-stage tests: test params with fast engine settings, a throw-away project
root, and a scripted responder for the local Gemini server (tests/support/fake_gemini.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from typer.testing import CliRunner

from medcalc_maintained.cli import app

SEED = 1000  # gemini.seed of the test params: run i sends SEED + i

FAST_ENGINE = {"concurrency": 8, "rate_limit_rpm": None, "retries": 8, "malformed_retries": 2,
               "backoff_initial_s": 0.01, "backoff_max_s": 0.05}
FAST_BATCH = {"poll_interval_s": 0.05, "max_wait_s": 30, "max_requests_per_job": 1000,
              "max_bytes_per_job": 15_000_000, "rounds": 3}


def stage_params(stage: str, **over: Any) -> dict[str, Any]:
    tools = ["google_search"] if stage == "audit" else ["google_search", "code_execution"]
    p: dict[str, Any] = {
        "backend": "rules" if stage == "audit" else "replay", "out": f"stage-out/{stage}", "split": "test", "runs": 5, "threshold": 4,
        "cache_dir": "cache",
        "gemini": {"model": "gemini-test", "thinking_budget": 256, "temperature": 1.0, "seed": SEED,
                   "tools": tools, "timeout_s": 1, "base_url": None},
        "engine": dict(FAST_ENGINE), "batch": dict(FAST_BATCH),
    }
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(p.get(k), dict):
            p[k] = {**p[k], **v}
        else:
            p[k] = v
    return p


@dataclass
class LLMProject:
    root: Path
    instances_path: Path
    params: dict[str, Any] = field(default_factory=dict)

    def write_params(self) -> None:
        (self.root / "params.yaml").write_text(yaml.safe_dump(self.params, sort_keys=False))

    def set(self, stage: str, **over: Any) -> None:
        self.params[stage] = stage_params(stage, **over)
        self.write_params()


def unique_prompt_rows(instances: pd.DataFrame, n: int, start: int = 0) -> pd.DataFrame:
    """``n`` test rows (from position ``start``) whose note + question is not shared by another row."""
    df = instances[instances["split"] == "test"].sort_values("uid")
    df = df[~df.duplicated(["Patient Note", "Question"], keep=False)]
    return df.iloc[start:start + n].reset_index(drop=True)


class Script:
    """Scripted replies: ``answers[uid][run]`` -> reply text, found from the request's user text
    (which quotes the row's note and question) and its seed (``SEED + run``)."""

    def __init__(self, rows: pd.DataFrame, stage: str, answers: dict[int, list[str]]):
        # a request belongs to the row whose note and question it quotes (found without the
        # prompt renderer under test)
        self.rows = [(str(r["Patient Note"]).strip(), str(r["Question"]).strip(), int(r["uid"]))
                     for r in rows.to_dict("records")]
        self.stage = stage
        self.answers = answers
        self.requests: list[dict[str, Any]] = []

    def uid_run(self, req: dict[str, Any]) -> tuple[int, int]:
        from tests.support.fake_gemini import request_seed, request_texts

        user = request_texts(req)[1]
        found = [uid for note, question, uid in self.rows if note in user and question in user]
        assert len(found) == 1, f"request matches rows {found}"
        return found[0], int(request_seed(req)) - SEED

    def __call__(self, req: dict[str, Any]) -> str:
        self.requests.append(req)
        uid, run = self.uid_run(req)
        return self.answers[uid][run]


def log_counts(output: str) -> dict[str, int]:
    """The per-invocation counts of a command's printed log line ``calls: N made, M from the
    cache, R retries, K malformed replies, U unparseable; ...; cost this run $X``."""
    import re

    text = " ".join(output.split())  # the console wraps long lines
    m = re.search(r"calls: (\d+) made, (\d+) from the cache, (\d+) retries, (\d+) malformed replies, "
                  r"(\d+) unparseable.*?cost this run \$([\d.,]+)", text)
    assert m, output
    made, cached, retries, malformed, unparseable = (int(x) for x in m.groups()[:5])
    return {"made": made, "from_cache": cached, "retries": retries, "malformed_replies": malformed,
            "unparseable_votes": unparseable, "cost_cents": round(100 * float(m.group(6).replace(",", "")))}


# ---------------------------------------------------------------- the LLM stages through the CLI

runner = CliRunner()


def cli(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def rows_file(tmp_path, rows: pd.DataFrame):
    p = tmp_path / "rows.parquet"
    rows.to_parquet(p, index=False)
    return p


def relabel(project, path, *extra):
    return cli("relabel", "--backend", "gemini", "--instances", str(path), "--out", str(project.root / "out"), *extra)


def audit(project, path, *extra):
    return cli("audit", "--backend", "gemini", "--instances", str(path), "--out", str(project.root / "out"), *extra)


def labels(project) -> pd.DataFrame:
    return pd.read_parquet(project.root / "out" / "labels.parquet").set_index("uid")
