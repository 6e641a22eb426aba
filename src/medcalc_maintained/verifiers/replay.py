"""Backend ``replay``: recorded replies instead of calls.

Two sources:

* :class:`RecordedReplay` — a file of recorded replies keyed by ``(uid, run)``: ``.jsonl``,
  ``.json`` (a list of objects), ``.csv`` or ``.parquet`` with columns ``uid``, ``run`` and ``text``
  (the raw reply, with its ``<verdict>``/``<answer>`` tag), optionally ``model``,
  ``input_tokens`` and ``output_tokens``. Each recorded run is one vote.
* :class:`PublishedConsensus` — the offline default of ``relabel``: the consensus labels ``y_new``
  of the published phase-3 workbook (the campaign's 4-of-5 supermajority of Gemini 2.5 Pro runs),
  read through :func:`medcalc_maintained.ledger.campaign.read_workbooks`. Each is recorded as ONE
  consensus vote (the per-run replies were not published); rows without a consensus in the
  workbook (160 of the 1,047 test rows) have no vote and are deferred.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.labels import write_label
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.ledger.campaign import read_workbooks
from medcalc_maintained.verifiers.base import Backend, Completion, Task

CONSENSUS_MODEL = "gemini-2.5-pro (published consensus)"


class _Replay(Backend):
    name = "replay"
    cacheable = False

    def __init__(self) -> None:
        self.records: dict[tuple[int, int], dict[str, Any]] = {}
        self.runs: dict[int, list[int]] = {}

    def _index(self) -> None:
        self.runs = {}
        for uid, run in sorted(self.records):
            self.runs.setdefault(uid, []).append(run)

    def runs_for(self, uid: int, requested: int) -> int:
        return len(self.run_indices(uid, requested))

    def run_indices(self, uid: int, requested: int) -> list[int]:
        runs = self.runs.get(int(uid), [])
        return runs[:1] if self.consensus else runs[:requested]

    async def generate(self, task: Task) -> Completion:
        rec = self.records.get((task.uid, task.run))
        if rec is None:  # run_indices only lists recorded runs
            raise KeyError(f"no recorded reply for uid {task.uid} run {task.run}")
        return Completion(text=rec["text"], input_tokens=int(rec.get("input_tokens") or 0),
                          output_tokens=int(rec.get("output_tokens") or 0),
                          model_version=str(rec.get("model") or self.model), finish_reason="replayed")


class RecordedReplay(_Replay):
    """Replies recorded in a file, keyed by (uid, run)."""

    def __init__(self, path: Path | str):
        super().__init__()
        self.path = Path(path)
        df = _read_table(self.path)
        missing = [c for c in ("uid", "run", "text") if c not in df.columns]
        if missing:
            raise DataError(self.path, f"missing column(s) {', '.join(missing)} (need uid, run, text)")
        for i, row in enumerate(row_dicts(df), start=1):
            try:
                uid, run = int(row["uid"]), int(row["run"])
            except (TypeError, ValueError):
                raise DataError(self.path, "uid and run must be integers", row=i, field="uid/run") from None
            if run < 0:
                raise DataError(self.path, "run must be >= 0", row=i, field="run")
            if (uid, run) in self.records:
                raise DataError(self.path, f"duplicate record for uid {uid} run {run}", row=i, field="run")
            text = row["text"]
            if not isinstance(text, str):
                raise DataError(self.path, "text must be a string (the recorded reply)", row=i, field="text")
            self.records[(uid, run)] = {k: v for k, v in row.items() if not (isinstance(v, float) and pd.isna(v))}
        models = {str(r.get("model")) for r in self.records.values() if r.get("model")}
        self.model = models.pop() if len(models) == 1 else f"recorded ({self.path.name})"
        self._index()


def _read_table(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(path, "replay file not found")
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            return pd.read_parquet(path)
        if suffix == ".csv":
            return pd.read_csv(path, keep_default_na=False, dtype={"text": str})
        if suffix == ".jsonl":
            rows = []
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise DataError(path, f"not JSON: {exc.msg}", row=i) from None
            return pd.DataFrame(rows)
        if suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, list):
                raise DataError(path, "expected a JSON list of {uid, run, text} objects")
            return pd.DataFrame(data)
    except (OSError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(path, f"cannot read: {exc}") from None
    raise DataError(path, f"unsupported replay file type {suffix!r} (use .jsonl, .json, .csv or .parquet)")


class PublishedConsensus(_Replay):
    """``y_new`` of the phase-3 workbook, one consensus vote per audited row."""

    model = CONSENSUS_MODEL
    consensus = True

    def __init__(self, sampled: Path | str, final: Path | str, instances: pd.DataFrame):
        super().__init__()
        self.sources = (Path(sampled), Path(final))
        camp = read_workbooks(Path(sampled), Path(final))
        inst = instances[instances["split"] == "test"].set_index("uid")
        for row in camp.to_dict("records"):
            uid = int(row["uid"])
            if uid not in inst.index:
                raise DataError(sampled, "uid is not a v1.0 test row", row=uid, field="uid")
            otype = str(inst.loc[uid, "Output Type"])
            value = parse_answer(row["y_new"], otype)
            if not value.is_valid:
                raise DataError(final, f"y_new {row['y_new']!r} is not a valid {otype} answer: {value.reason}",
                                row=uid, field="y_new")
            text = write_label(value, otype, inst.loc[uid, "Ground Truth Answer"])
            self.records[(uid, 0)] = {
                "text": f"<answer>{text}</answer>",
                "model": CONSENSUS_MODEL,
            }
        self._index()
