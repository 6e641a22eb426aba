"""Triage: rank every row by how likely its label is wrong and route the top rows to physicians.

Physician time is the scarce resource, so the queue puts the rows with the strongest automated
evidence of a wrong label first and hands the top ``budget`` of them to reviewers whose specialty
matches the calculator's category. The evidence, per row:

``relabel``    the independent relabel label against the original v1.0 label. A row is a
               *relabel disagreement* when ``answers.rel_err(original, relabel) > threshold``
               (``triage.relabel_threshold``); an *abstention mismatch* (exactly one side is
               ``N/A``) is ranked highest, as in the published campaign. A row the relabel could not
               settle (``deferred``: no supermajority) is a hard case in itself.
``audit``      the audit's per-row flag (supermajority "likely error") and the share of runs that
               called the label wrong.
``recompute``  the deterministic recompute finding (``aggregation_mismatch``, ``implausible_input``,
               ``not_computable``).
``ledger``     a physician review that was *deferred* (the physician disagreed with the relabel):
               the row goes back to the top for a second reviewer, never the same one.

The priority is a weighted sum (weights ``triage.weights``)::

    priority = w_flag · [rel_err > t] + w_disagree · rel_err · [rel_err > t] + w_na · [one side N/A]
             + w_audit_flag · flag + w_audit_votes · wrong_votes / runs
             + w_recompute[finding] + w_deferred · [relabel deferred] + w_second · [physician review deferred]

Ties are broken by split and uid, so the queue is deterministic. Rows whose maintained label already
comes from a source in ``triage.skip_sources`` are not routed again. The metrics of the ranking are
in :mod:`medcalc_maintained.planning.triage_metrics`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, cast

import numpy as np
import pandas as pd

from medcalc_maintained.core.answers import parse_answer, rel_err
from medcalc_maintained.core.csv_for_people import read_csv_for_people
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.rows import row_dicts

RECOMPUTE_FINDINGS = ("aggregation_mismatch", "implausible_input", "not_computable")
# the weights the priority uses (their values are parameters: triage.weights)
WEIGHTS = ("relabel_flag", "relabel_disagreement", "abstention_mismatch", "audit_flag", "audit_votes",
           "relabel_deferred", "second_review", "recompute")

# optional weights (absent: 0): per severity of a zero-LLM check finding (quality/checks), the
# recompute's own findings excluded (they are weighted by ``recompute``)
OPTIONAL_WEIGHTS = ("findings",)
FINDING_SEVERITIES = ("error", "definition", "info")

# The inputs written by the relabel and audit stages (see their modules for the full schema).
RELABEL_COLUMNS = ("uid", "status", "label")          # + optional split, votes, backend, model
AUDIT_FLAG_COLUMNS = ("uid", "flagged", "votes_wrong", "runs")  # + optional split and other vote counts

QUEUE_COLUMNS = [
    "rank", "split", "uid", "calculator_id", "calculator", "category", "output_type", "priority",
    "relabel_status", "relabel_rel_err", "relabel_disagrees", "abstention_mismatch",
    "audit_flag", "audit_votes_wrong", "audit_runs", "recompute_finding", "deferred_reviews",
    "evidence", "label_source", "eligible", "in_budget", "specialty", "reviewer", "routing",
]

Deferred = dict[tuple[str, int], list[dict[str, Any]]]


@dataclass(frozen=True)
class Reviewer:
    id: str
    role: str
    specialty: str | None

    def as_record(self) -> dict[str, Any]:
        return {"id": self.id, "role": self.role, "specialty": self.specialty}


@dataclass
class TriageConfig:
    """The ``triage`` parameters (``Project.section("triage")``), checked."""

    weights: dict[str, Any]
    threshold: float
    budget: int
    min_priority: float
    skip_sources: tuple[str, ...]
    specialty_by_category: dict[str, str]
    reviewers: list[Reviewer]
    ks: tuple[int, ...]
    simulations: int
    seed: int
    curve_max: int

    @classmethod
    def from_project(cls, project: Any) -> "TriageConfig":
        return cls.from_section(project.section("triage"), str(project.params_file))

    @classmethod
    def from_section(cls, section: dict[str, Any], where: str) -> "TriageConfig":
        """The config of a complete ``triage`` section (as :class:`~medcalc_maintained.project.Project`
        merges it: every key present); ``where`` names the params file in errors."""
        budget = int(section["budget"])
        if budget < 0:
            raise DataError(where, f"budget must be >= 0, not {budget}", field="triage.budget")
        metrics = section["metrics"]
        return cls(
            weights=_weights(section["weights"], where),
            threshold=float(section["relabel_threshold"]),
            budget=budget,
            min_priority=float(section["min_priority"]),
            skip_sources=tuple(section["skip_sources"] or ()),
            specialty_by_category={str(k): str(v) for k, v in (section["specialty_by_category"] or {}).items()},
            reviewers=_reviewers(section["reviewers"] or [], where),
            ks=tuple(int(k) for k in metrics["k"]),
            simulations=int(metrics["simulations"]),
            seed=int(metrics["seed"]),
            curve_max=int(metrics["curve_max"]),
        )

    def reviewer(self, rid: str) -> Reviewer:
        for r in self.reviewers:
            if r.id == rid:
                return r
        known = ", ".join(r.id for r in self.reviewers) or "none"
        raise DataError("params.yaml", f"unknown reviewer {rid!r} (known: {known})", field="triage.reviewers")


def _weights(given: dict[str, Any], where: str) -> dict[str, Any]:
    given = given or {}
    unknown = sorted(set(given) - set(WEIGHTS) - set(OPTIONAL_WEIGHTS))
    if unknown:
        raise DataError(where, f"unknown triage weight(s) {unknown}; known: {sorted(WEIGHTS)}", field="triage.weights")
    missing = [k for k in WEIGHTS if k not in given]
    if missing:
        raise DataError(where, f"missing triage weight(s) {missing}", field="triage.weights")
    weights: dict[str, Any] = {"findings": {}}
    for k, v in given.items():
        if k == "findings":
            bad = sorted(set(v or {}) - set(FINDING_SEVERITIES))
            if bad:
                raise DataError(where, f"unknown finding severity(ies) {bad}; known: {list(FINDING_SEVERITIES)}",
                                field="triage.weights.findings")
            weights["findings"] = {f: _number(x, where, f"triage.weights.findings.{f}") for f, x in (v or {}).items()}
            continue
        if k != "recompute":
            weights[k] = _number(v, where, f"triage.weights.{k}")
            continue
        bad = sorted(set(v or {}) - set(RECOMPUTE_FINDINGS))
        if bad:
            raise DataError(where, f"unknown recompute finding(s) {bad}; known: {list(RECOMPUTE_FINDINGS)}",
                            field="triage.weights.recompute")
        weights["recompute"] = {f: _number(x, where, f"triage.weights.recompute.{f}") for f, x in (v or {}).items()}
    return weights


def _reviewers(entries: list[Any], where: str) -> list[Reviewer]:
    reviewers = []
    seen: set[str] = set()
    for i, r in enumerate(entries):
        if not isinstance(r, dict) or not r.get("id") or not r.get("role"):
            raise DataError(where, f"reviewer #{i} needs an id and a role", field="triage.reviewers")
        rid = str(r["id"])
        if rid in seen:
            raise DataError(where, f"reviewer id {rid!r} is listed twice", field="triage.reviewers")
        if not _valid_id(rid):
            raise DataError(where, f"reviewer id {rid!r} may use letters, digits, '.', '_' and '-' only",
                            field="triage.reviewers")
        seen.add(rid)
        reviewers.append(Reviewer(rid, str(r["role"]), r.get("specialty")))
    return reviewers


def _valid_id(text: str) -> bool:
    """Reviewer ids become part of ledger record ids: letters, digits, '.', '_' and '-'."""
    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,40}", text) is not None


def _number(value: Any, where: str, name: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise DataError(where, f"{value!r} is not a number", field=name) from None
    if not math.isfinite(x):
        raise DataError(where, f"{value!r} is not a finite number", field=name)
    return x


def require_columns(df: pd.DataFrame, cols: Iterable[str], path: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise DataError(path, f"missing column(s) {missing}; has {list(df.columns)}")


def _keyed(df: pd.DataFrame, instances: pd.DataFrame, path: str) -> pd.DataFrame:
    """``df`` with a ``split`` column (inferred when the input has a single split) and unique keys."""
    df = df.copy()
    if "split" not in df.columns:
        splits = sorted(instances["split"].astype(str).unique())
        if len(splits) != 1:
            raise DataError(path, f"no 'split' column, and the instances have several splits {splits}")
        df["split"] = splits[0]
    df["split"] = df["split"].astype(str)
    df["uid"] = df["uid"].astype(int)
    dup = df.duplicated(["split", "uid"])
    if dup.any():
        first = df.loc[dup].iloc[0]
        raise DataError(path, "duplicate row", row=f"{first['split']} uid {int(first['uid'])}", field="uid")
    return df


def _relabel_row(rec: dict[str, Any], row: pd.Series, otype: str, original: Any, threshold: float, path: str) -> None:
    key = (rec["split"], rec["uid"])
    status = str(row["status"])
    rec["relabel_status"] = status
    if status == "labeled":
        label = row["label"]
        a = parse_answer(label, otype)
        if a.kind == "invalid":
            raise DataError(path, f"label {label!r} is not a valid {otype} answer ({a.reason})",
                            row=f"{key[0]} uid {key[1]}", field="label")
        o = parse_answer(original, otype)
        err = rel_err(o, a, otype)
        rec["relabel_label"] = str(label)
        rec["relabel_rel_err"] = err
        rec["relabel_disagrees"] = bool(err > threshold)
        rec["abstention_mismatch"] = bool(o.is_abstain != a.is_abstain)
    elif status != "deferred":
        raise DataError(path, f"status {status!r} is neither 'labeled' nor 'deferred'",
                        row=f"{key[0]} uid {key[1]}", field="status")


def relabel_evidence(instances: pd.DataFrame, relabel: pd.DataFrame, threshold: float,
                     path: str = "relabel labels") -> pd.DataFrame:
    """Per instance: relabel status, label, ``rel_err(original, relabel)``, disagreement and
    abstention mismatch. Rows the relabel did not cover get status ``missing``."""
    require_columns(relabel, RELABEL_COLUMNS, path)
    rl = _keyed(relabel, instances, path).set_index(["split", "uid"])
    out = []
    for r in instances[["split", "uid", "Output Type", "Ground Truth Answer"]].itertuples(index=False):
        key = (str(r[0]), int(r[1]))
        rec = {"split": key[0], "uid": key[1], "relabel_status": "missing", "relabel_label": None,
               "relabel_rel_err": np.nan, "relabel_disagrees": False, "abstention_mismatch": False}
        if key in rl.index:
            _relabel_row(rec, cast(pd.Series, rl.loc[key]), str(r[2]), r[3], threshold, path)  # keys unique (_keyed)
        out.append(rec)
    return pd.DataFrame(out)


def audit_evidence(instances: pd.DataFrame, flags: pd.DataFrame, path: str = "audit flags") -> pd.DataFrame:
    """Per instance: the audit's likely-error flag, wrong votes and runs (0 runs when not audited)."""
    require_columns(flags, AUDIT_FLAG_COLUMNS, path)
    fl = _keyed(flags, instances, path)
    fl = fl[["split", "uid", "flagged", "votes_wrong", "runs"]].rename(
        columns={"flagged": "audit_flag", "votes_wrong": "audit_votes_wrong", "runs": "audit_runs"})
    out = instances[["split", "uid"]].merge(fl, on=["split", "uid"], how="left")
    out["audit_flag"] = out["audit_flag"].astype("boolean").fillna(False).astype(bool)
    out["audit_votes_wrong"] = out["audit_votes_wrong"].fillna(0).astype(int)
    out["audit_runs"] = out["audit_runs"].fillna(0).astype(int)
    return out


def deferred_reviews(records: list[Any]) -> Deferred:
    """Deferred physician records by row: ``[{reviewer, value, id}]`` (from ledger.Record objects)."""
    out: Deferred = {}
    for rec in records:
        if rec.get("source") == "physician" and rec.get("decision") == "deferred":
            key = (str(rec["split"]), int(rec["uid"]))
            out.setdefault(key, []).append({"reviewer": (rec.get("reviewer") or {}).get("id"),
                                            "value": rec.get("new_value"), "id": rec.id})
    return out


def _evidence_table(instances: pd.DataFrame, recompute: pd.DataFrame, relabel: pd.DataFrame, flags: pd.DataFrame,
                    cfg: TriageConfig, deferred: Deferred, relabel_path: str, flags_path: str) -> pd.DataFrame:
    base = instances[["split", "uid", "calculator_id", "Calculator Name", "Category", "Output Type"]].rename(
        columns={"Calculator Name": "calculator", "Category": "category", "Output Type": "output_type"})
    base = base.assign(split=base["split"].astype(str), uid=base["uid"].astype(int))
    rl = relabel_evidence(instances, relabel, cfg.threshold, relabel_path)
    au = audit_evidence(instances, flags, flags_path)
    rc = recompute[["split", "uid", "finding"]].rename(columns={"finding": "recompute_finding"})
    rc = rc.assign(split=rc["split"].astype(str), uid=rc["uid"].astype(int))
    df = base.merge(rl, on=["split", "uid"], how="left").merge(au, on=["split", "uid"], how="left")
    df = df.merge(rc, on=["split", "uid"], how="left")
    df["recompute_finding"] = df["recompute_finding"].fillna("missing").astype(str)
    df["deferred_reviews"] = [len(deferred.get((s, u), [])) for s, u in zip(df["split"], df["uid"])]
    return df


def relabel_part(df: pd.DataFrame, w: dict[str, Any]) -> pd.Series:
    """The share of the priority that comes from the relabel evidence."""
    dis = df["relabel_disagrees"].astype(bool)
    err = df["relabel_rel_err"].fillna(0.0).astype(float)
    return (w["relabel_flag"] * dis + w["relabel_disagreement"] * err * dis
            + w["abstention_mismatch"] * df["abstention_mismatch"].astype(bool)
            + w["relabel_deferred"] * (df["relabel_status"] == "deferred"))


def sort_queue(df: pd.DataFrame) -> pd.DataFrame:
    """Highest priority first; ties by split and uid."""
    return df.sort_values(["priority", "split", "uid"], ascending=[False, True, True], kind="mergesort")


def findings_part(df: pd.DataFrame, findings: pd.DataFrame | None, w: dict[str, float]) -> tuple[pd.Series, list[str]]:
    """Priority from the zero-LLM check findings (``w`` per severity, once per row and severity; the
    recompute's own checks excluded) and the names of the checks that fired, per row of ``df``."""
    if findings is None or not len(findings):
        return pd.Series(0.0, index=df.index), [""] * len(df)
    f = findings[~findings["check"].str.startswith("recompute_")]
    keys = list(zip(f["split"].astype(str), f["uid"].astype(int)))
    sev: dict[tuple[str, int], set[str]] = {}
    names: dict[tuple[str, int], list[str]] = {}
    for k, s, c in zip(keys, f["severity"], f["check"]):
        sev.setdefault(k, set()).add(s)
        if c not in names.setdefault(k, []):
            names[k].append(c)
    rows = list(zip(df["split"], df["uid"]))
    part = [sum(float(w.get(s, 0.0)) for s in sev.get(k, ())) for k in rows]
    return pd.Series(part, index=df.index, dtype=float), [", ".join(names.get(k, [])) for k in rows]


def score(instances: pd.DataFrame, recompute: pd.DataFrame, relabel: pd.DataFrame, flags: pd.DataFrame,
          cfg: TriageConfig, deferred: Deferred | None = None,
          *, relabel_path: str = "relabel labels", flags_path: str = "audit flags",
          findings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every instance with its evidence, priority and rank (1 = review first)."""
    w = cfg.weights
    df = _evidence_table(instances, recompute, relabel, flags, cfg, deferred or {}, relabel_path, flags_path)
    check_w, check_names = findings_part(df, findings, w.get("findings") or {})
    share = np.where(df["audit_runs"] > 0, df["audit_votes_wrong"] / df["audit_runs"].clip(lower=1), 0.0)
    rec_w = df["recompute_finding"].map(lambda f: float(w["recompute"].get(f, 0.0)))
    df["priority"] = (
        w["relabel_flag"] * df["relabel_disagrees"].astype(bool)
        + w["relabel_disagreement"] * df["relabel_rel_err"].fillna(0.0).astype(float) * df["relabel_disagrees"].astype(bool)
        + w["abstention_mismatch"] * df["abstention_mismatch"].astype(bool)
        + w["audit_flag"] * df["audit_flag"].astype(bool)
        + w["audit_votes"] * share
        + rec_w
        + w["relabel_deferred"] * (df["relabel_status"] == "deferred")
        + w["second_review"] * (df["deferred_reviews"] > 0)
        + check_w
    ).astype(float).round(6)
    df["evidence"] = [_evidence(r) + (("; " if _evidence(r) else "") + f"checks: {c}" if c else "")
                      for r, c in zip(row_dicts(df), check_names)]
    df = sort_queue(df)
    df["rank"] = np.arange(1, len(df) + 1)
    return df.reset_index(drop=True)


def _evidence(r: dict[str, Any]) -> str:
    parts = []
    if r["deferred_reviews"]:
        parts.append(f"{r['deferred_reviews']} deferred physician review(s): second reviewer needed")
    if r["abstention_mismatch"]:
        parts.append("abstention mismatch with the relabel")
    elif r["relabel_disagrees"]:
        parts.append(f"relabel disagrees (rel_err {r['relabel_rel_err']:.3f})")
    if r["relabel_status"] == "deferred":
        parts.append("relabel deferred (no supermajority)")
    if r["audit_runs"]:
        parts.append(f"audit {int(r['audit_votes_wrong'])}/{int(r['audit_runs'])} runs say wrong"
                     + (" (flagged)" if r["audit_flag"] else ""))
    if r["recompute_finding"] in RECOMPUTE_FINDINGS:
        parts.append(f"recompute {r['recompute_finding']}")
    return "; ".join(parts)


def _label_sources(q: pd.DataFrame, maintained: pd.DataFrame | None) -> list[str] | str:
    if maintained is None:
        return "unknown"
    keyed = maintained.assign(split=maintained["split"].astype(str), uid=maintained["uid"].astype(int))
    src = keyed.set_index(["split", "uid"])["Label Source"].astype(str)
    return [src.get((s, u), "missing") for s, u in zip(q["split"], q["uid"])]


def _route_row(r: dict[str, Any], spec: str | None, cfg: TriageConfig, load: dict[str, int], used: int,
               deferred: Deferred) -> tuple[bool, str, str]:
    """``(in_budget, reviewer, routing)`` of one queue row (``load`` is updated on routing)."""
    if not r["eligible"]:
        why = (f"label already from {r['label_source']}" if r["label_source"] in cfg.skip_sources
               else "no evidence of an error")
        return False, "", why
    if used >= cfg.budget:
        return False, "", "outside the budget"
    exclude = {d["reviewer"] for d in deferred.get((r["split"], int(r["uid"])), [])}
    pool = [rv for rv in cfg.reviewers if spec and rv.specialty == spec and rv.id not in exclude]
    if not pool:
        why = (f"no reviewer for specialty {spec!r}" if spec else f"no specialty mapped for category {r['category']!r}")
        if exclude:
            why += f" other than {sorted(exclude)}"
        return False, "", why
    pick = min(pool, key=lambda rv: load[rv.id])  # ties: order of the reviewers parameter
    load[pick.id] += 1
    return True, pick.id, "second review" if exclude else "routed"


def route(queue: pd.DataFrame, maintained: pd.DataFrame | None, cfg: TriageConfig,
          deferred: Deferred | None = None) -> pd.DataFrame:
    """Mark eligible rows, the first ``budget`` of them, and the reviewer of each.

    A row is eligible when its priority is above ``min_priority`` and its maintained label does not
    already come from a source in ``skip_sources``, or when it is marked ``underived`` (a verified
    label that no recorded derivation reproduces). Each routed row goes to the reviewer of its
    category's specialty with the fewest rows so far (never a reviewer who already deferred on it);
    a row with no such reviewer is marked and skipped, so the budget is spent on rows someone can
    review.
    """
    q = queue.copy()
    deferred = deferred or {}
    q["label_source"] = _label_sources(q, maintained)
    q["eligible"] = (q["priority"] > cfg.min_priority) & ~q["label_source"].isin(cfg.skip_sources)
    if "underived" in q.columns:  # a verified label without a derivation goes back to a physician, whoever set it
        q["eligible"] = q["eligible"] | q["underived"].astype(bool)
    load = {r.id: 0 for r in cfg.reviewers}
    in_budget, specialty, reviewer, routing = [], [], [], []
    used = 0
    for r in row_dicts(q):
        spec = cfg.specialty_by_category.get(str(r["category"]))
        specialty.append(spec or "")
        ok, who, why = _route_row(r, spec, cfg, load, used, deferred)
        used += ok
        in_budget.append(ok)
        reviewer.append(who)
        routing.append(why)
    q["in_budget"] = in_budget
    q["specialty"] = specialty
    q["reviewer"] = reviewer
    q["routing"] = routing
    return q


__all__ = ["TriageConfig", "Reviewer", "score", "route", "deferred_reviews", "relabel_evidence", "audit_evidence",
           "relabel_part", "sort_queue", "QUEUE_COLUMNS", "RECOMPUTE_FINDINGS", "WEIGHTS"]


def read_queue(path: Path) -> pd.DataFrame:
    """``queue.csv`` as written by the stage (reviewer and specialty as text)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "triage queue not found (run `medcalc-maintained triage` first)")
    q = read_csv_for_people(path, dtype={"reviewer": "string", "specialty": "string", "split": "string"},
                    keep_default_na=False)
    require_columns(q, ["split", "uid", "in_budget", "reviewer"], str(path))
    q["in_budget"] = q["in_budget"].astype(str).str.lower().eq("true")
    q["uid"] = q["uid"].astype(int)
    return q
