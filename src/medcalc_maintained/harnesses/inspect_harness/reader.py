"""An Inspect log (``.eval`` or ``.json``), read with ``inspect_ai.log.read_eval_log`` (the extra
``inspect``): per sample ``id`` (= ``Row Number``), ``output.completion``, the score and the grading
columns in ``metadata``; the recorded score is the log's ``accuracy``. Rule: ``ours`` (our scorer's)."""

from __future__ import annotations

from pathlib import Path

from medcalc_maintained.core.errors import DataError, shown
from medcalc_maintained.core.readers import check_size
from medcalc_maintained.core.zip_bounds import ZipBounds, check_unpacked, open_bounded
from medcalc_maintained.harnesses.results import Harness, Results, row_from_record, verdict_of

INSPECT_SCORER = "medcalc_scorer"
# What a log may weigh, checked before a byte is read (inspect-ai unpacks a log whole). An Inspect
# .eval log of 519 rows (mini, one-line outputs) measured 2.9 MB, 567 members, 12.4 MB unpacked, its
# largest member summaries.json 1.9 MB (the largest sample 42 KB), compressed at most 11:1 (zstd); for
# 1,047 rows about 5.8 MB, 1,100 members, 25 MB unpacked. A .json log is the unpacked log in one file:
# bounded as the .eval's unpacked total. Hostile-file bounds with headroom, not tuning knobs.
INSPECT_LOG = ZipBounds("an Inspect log", max_bytes=128 << 20, max_unpacked=256 << 20, max_member=64 << 20,
                        max_members=20_000, max_ratio=100)


def _inspect_log(path: Path):
    """The log read with inspect-ai, once its size (a .eval: its members, their sizes and compression
    ratios, and what each really unpacks to) is within :data:`INSPECT_LOG`."""
    if path.suffix.lower() == ".eval":
        with open_bounded(path, INSPECT_LOG, "not a readable Inspect log") as zf:
            check_unpacked(path, zf)
    else:
        check_size(path, INSPECT_LOG.max_unpacked, "an Inspect log (JSON)")
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise DataError(path, "reading an Inspect log needs inspect-ai (pip install -e '.[inspect]')") from None
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # a damaged zip, JSON or schema: inspect raises several types
        raise DataError(path, f"not a readable Inspect log ({type(exc).__name__}: {shown(str(exc), 200)})") from None


def _inspect_scorer(log, path: Path) -> tuple[str, float | None]:
    """The scorer with an ``accuracy`` metric (ours first) and the accuracy the log recorded."""
    scores = list(log.results.scores) if log.results else []
    with_acc = [s for s in scores if "accuracy" in s.metrics]
    chosen = next((s for s in with_acc if s.name == INSPECT_SCORER), with_acc[0] if with_acc else None)
    if chosen is None:
        names = [s.name for s in scores]
        raise DataError(path, f"the log records no scorer with an accuracy metric (scorers: {names or 'none'})")
    return chosen.name, float(chosen.metrics["accuracy"].value)


def read(path: Path, max_line_bytes: int | None, harness: Harness) -> Results:
    """An Inspect log (``.eval`` or ``.json``), read with inspect-ai; the harness's rule only when the
    log was scored by our scorer."""
    log = _inspect_log(path)  # bounded before inspect-ai is imported
    from inspect_ai.scorer import value_to_float

    scorer, recorded = _inspect_scorer(log, path)
    if not log.samples:
        raise DataError(path, "the log holds no samples (was it written with log_samples=False?)")
    to_float, rows = value_to_float(), []
    for s in log.samples:
        where = f"{path}, sample {s.id} (epoch {s.epoch})"
        score = (s.scores or {}).get(scorer)
        verdict = None if score is None else verdict_of(to_float(score.value), where, scorer)
        meta = dict(s.metadata or {})
        meta.setdefault("Row Number", s.id)
        meta.setdefault("Ground Truth Answer", s.target if isinstance(s.target, str) else None)
        rows.append(row_from_record(meta, where, s.output.completion if s.output else "", verdict))
    notes = [] if log.status == "success" else [f"{path.name}: the log's status is {log.status!r}"]
    return harness.results(path, rows, metric=f"{scorer} accuracy",
                           rule=harness.grader if scorer == INSPECT_SCORER else None, recorded=recorded,
                           recorded_from=f"the log's results: {scorer} accuracy", notes=notes)
