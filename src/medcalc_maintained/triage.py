"""Stage ``triage``: rank every row by how likely its label is wrong and route the top to physicians.

Physician time is the scarce resource, so the queue puts the rows with the strongest automated
evidence of a wrong label first and hands the top ``budget`` of them to reviewers whose specialty
matches the calculator's category. The evidence, per row:

``relabel``    the independent relabel label (issue 6) against the original v1.0 label. A row is a
               *relabel disagreement* when ``answers.rel_err(original, relabel) > threshold``
               (0.05, MedCalc-Bench's tolerance); an *abstention mismatch* (exactly one side is
               ``N/A``) is ranked highest, as in the published campaign. A row the relabel could not
               settle (``deferred``: no supermajority) is a hard case in itself.
``audit``      the audit's per-row flag (supermajority "likely error") and the share of runs that
               called the label wrong.
``recompute``  the deterministic recompute finding (``aggregation_mismatch``, ``implausible_input``,
               ``not_computable``).
``ledger``     a physician review that was *deferred* (the physician disagreed with the relabel):
               the row goes back to the top for a second reviewer, never the same one.

The priority is a weighted sum (weights in ``params.yaml``)::

    priority = w_flag · [rel_err > t] + w_disagree · rel_err · [rel_err > t] + w_na · [one side N/A]
             + w_audit_flag · flag + w_audit_votes · wrong_votes / runs
             + w_recompute[finding] + w_deferred · [relabel deferred] + w_second · [physician review deferred]

Ties are broken by split and uid, so the queue is deterministic. Rows whose maintained label already
comes from a source in ``skip_sources`` (default: a physician) are not routed again.

The metrics measure the ranking against the adjudicated changes of the maintained labels (rows
whose ``Label Status`` is ``corrected`` or ``abstain``): precision@k of the queue next to uniform
random sampling (expected precision = the base rate, and a seeded simulation with a 95% interval),
the same for the queue without the relabel evidence (the relabel of the offline pipeline replays the
campaign's own consensus labels, so that ablation is the non-circular figure), and errors found per
review within the budget.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from medcalc_maintained.core.answers import parse_answer, rel_err
from medcalc_maintained.core.io import DataError, write_atomic, write_text_atomic

ERROR_STATUSES = ("corrected", "abstain")
RECOMPUTE_FINDINGS = ("aggregation_mismatch", "implausible_input", "not_computable")

# The inputs written by the issue-6 stages (see their modules for the full schema).
RELABEL_COLUMNS = ("uid", "status", "label")          # + optional split, votes, backend, model
AUDIT_FLAG_COLUMNS = ("uid", "flagged", "votes_wrong", "runs")  # + optional split and other vote counts

QUEUE_COLUMNS = [
    "rank", "split", "uid", "calculator_id", "calculator", "category", "output_type", "priority",
    "relabel_status", "relabel_rel_err", "relabel_disagrees", "abstention_mismatch",
    "audit_flag", "audit_votes_wrong", "audit_runs", "recompute_finding", "deferred_reviews",
    "evidence", "label_source", "eligible", "in_budget", "specialty", "reviewer", "routing",
]

DEFAULT_WEIGHTS: dict[str, Any] = {
    "relabel_flag": 3.0,
    "relabel_disagreement": 1.0,
    "abstention_mismatch": 3.0,
    "audit_flag": 1.0,
    "audit_votes": 0.5,
    "relabel_deferred": 1.0,
    "second_review": 10.0,
    "recompute": {"aggregation_mismatch": 0.5, "implausible_input": 0.5, "not_computable": 0.25},
}


@dataclass(frozen=True)
class Reviewer:
    id: str
    role: str
    specialty: str | None

    def as_record(self) -> dict[str, Any]:
        return {"id": self.id, "role": self.role, "specialty": self.specialty}


@dataclass
class TriageConfig:
    """The ``triage:`` section of ``params.yaml``, checked."""

    weights: dict[str, Any] = field(default_factory=lambda: json.loads(json.dumps(DEFAULT_WEIGHTS)))
    threshold: float = 0.05
    budget: int = 50
    min_priority: float = 0.0
    skip_sources: tuple[str, ...] = ("physician",)
    specialty_by_category: dict[str, str] = field(default_factory=dict)
    reviewers: list[Reviewer] = field(default_factory=list)
    ks: tuple[int, ...] = (25, 50, 100)
    simulations: int = 10000
    seed: int = 0
    curve_max: int = 300

    @classmethod
    def from_params(cls, section: dict[str, Any], where: str = "params.yaml") -> "TriageConfig":
        weights = json.loads(json.dumps(DEFAULT_WEIGHTS))
        given = section.get("weights") or {}
        unknown = sorted(set(given) - set(weights))
        if unknown:
            raise DataError(where, f"unknown triage weight(s) {unknown}; known: {sorted(weights)}", field="triage.weights")
        for k, v in given.items():
            if k == "recompute":
                bad = sorted(set(v or {}) - set(RECOMPUTE_FINDINGS))
                if bad:
                    raise DataError(where, f"unknown recompute finding(s) {bad}; known: {list(RECOMPUTE_FINDINGS)}",
                                    field="triage.weights.recompute")
                weights["recompute"].update({f: _number(x, where, f"triage.weights.recompute.{f}")
                                             for f, x in (v or {}).items()})
            else:
                weights[k] = _number(v, where, f"triage.weights.{k}")
        reviewers = []
        seen: set[str] = set()
        for i, r in enumerate(section.get("reviewers") or []):
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
        metrics = section.get("metrics") or {}
        budget = int(section.get("budget", 50))
        if budget < 0:
            raise DataError(where, f"budget must be >= 0, not {budget}", field="triage.budget")
        return cls(
            weights=weights,
            threshold=float(section.get("relabel_threshold", 0.05)),
            budget=budget,
            min_priority=float(section.get("min_priority", 0.0)),
            skip_sources=tuple(section.get("skip_sources", ["physician"]) or ()),
            specialty_by_category={str(k): str(v) for k, v in (section.get("specialty_by_category") or {}).items()},
            reviewers=reviewers,
            ks=tuple(int(k) for k in metrics.get("k", [25, 50, 100])),
            simulations=int(metrics.get("simulations", 10000)),
            seed=int(metrics.get("seed", 0)),
            curve_max=int(metrics.get("curve_max", 300)),
        )

    def reviewer(self, rid: str) -> Reviewer:
        for r in self.reviewers:
            if r.id == rid:
                return r
        known = ", ".join(r.id for r in self.reviewers) or "none"
        raise DataError("params.yaml", f"unknown reviewer {rid!r} (known: {known})", field="triage.reviewers")


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


def _require(df: pd.DataFrame, cols: Iterable[str], path: str) -> None:
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


def relabel_evidence(instances: pd.DataFrame, relabel: pd.DataFrame, threshold: float,
                     path: str = "relabel labels") -> pd.DataFrame:
    """Per instance: relabel status, label, ``rel_err(original, relabel)``, disagreement and
    abstention mismatch. Rows the relabel did not cover get status ``missing``."""
    _require(relabel, RELABEL_COLUMNS, path)
    rl = _keyed(relabel, instances, path).set_index(["split", "uid"])
    out = []
    for r in instances[["split", "uid", "Output Type", "Ground Truth Answer"]].itertuples(index=False):
        key = (str(r[0]), int(r[1]))
        otype, original = str(r[2]), r[3]
        rec = {"split": key[0], "uid": key[1], "relabel_status": "missing", "relabel_label": None,
               "relabel_rel_err": np.nan, "relabel_disagrees": False, "abstention_mismatch": False}
        if key in rl.index:
            row = rl.loc[key]
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
        out.append(rec)
    return pd.DataFrame(out)


def audit_evidence(instances: pd.DataFrame, flags: pd.DataFrame, path: str = "audit flags") -> pd.DataFrame:
    """Per instance: the audit's likely-error flag, wrong votes and runs (0 runs when not audited)."""
    _require(flags, AUDIT_FLAG_COLUMNS, path)
    fl = _keyed(flags, instances, path)
    fl = fl[["split", "uid", "flagged", "votes_wrong", "runs"]].rename(
        columns={"flagged": "audit_flag", "votes_wrong": "audit_votes_wrong", "runs": "audit_runs"})
    out = instances[["split", "uid"]].merge(fl, on=["split", "uid"], how="left")
    out["audit_flag"] = out["audit_flag"].astype("boolean").fillna(False).astype(bool)
    out["audit_votes_wrong"] = out["audit_votes_wrong"].fillna(0).astype(int)
    out["audit_runs"] = out["audit_runs"].fillna(0).astype(int)
    return out


def deferred_reviews(records: list[Any]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Deferred physician records by row: ``[{reviewer, value, id}]`` (from ledger.Record objects)."""
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for rec in records:
        if rec.get("source") == "physician" and rec.get("decision") == "deferred":
            key = (str(rec["split"]), int(rec["uid"]))
            out.setdefault(key, []).append({"reviewer": (rec.get("reviewer") or {}).get("id"),
                                            "value": rec.get("new_value"), "id": rec.id})
    return out


def score(instances: pd.DataFrame, recompute: pd.DataFrame, relabel: pd.DataFrame, flags: pd.DataFrame,
          cfg: TriageConfig, deferred: dict[tuple[str, int], list[dict[str, Any]]] | None = None,
          *, relabel_path: str = "relabel labels", flags_path: str = "audit flags") -> pd.DataFrame:
    """Every instance with its evidence, priority and rank (1 = review first)."""
    w = cfg.weights
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
    deferred = deferred or {}
    df["deferred_reviews"] = [len(deferred.get((s, u), [])) for s, u in zip(df["split"], df["uid"])]

    err = df["relabel_rel_err"].fillna(0.0).astype(float)
    dis = df["relabel_disagrees"].astype(bool)
    share = np.where(df["audit_runs"] > 0, df["audit_votes_wrong"] / df["audit_runs"].clip(lower=1), 0.0)
    rec_w = df["recompute_finding"].map(lambda f: float(w["recompute"].get(f, 0.0)))
    df["priority"] = (
        w["relabel_flag"] * dis
        + w["relabel_disagreement"] * err * dis
        + w["abstention_mismatch"] * df["abstention_mismatch"].astype(bool)
        + w["audit_flag"] * df["audit_flag"].astype(bool)
        + w["audit_votes"] * share
        + rec_w
        + w["relabel_deferred"] * (df["relabel_status"] == "deferred")
        + w["second_review"] * (df["deferred_reviews"] > 0)
    ).astype(float).round(6)
    df["evidence"] = [_evidence(r) for r in df.to_dict("records")]
    df = df.sort_values(["priority", "split", "uid"], ascending=[False, True, True], kind="mergesort")
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


def route(queue: pd.DataFrame, maintained: pd.DataFrame | None, cfg: TriageConfig,
          deferred: dict[tuple[str, int], list[dict[str, Any]]] | None = None) -> pd.DataFrame:
    """Mark eligible rows, the first ``budget`` of them, and the reviewer of each.

    A row is eligible when its priority is above ``min_priority`` and its maintained label does not
    already come from a source in ``skip_sources``. Each routed row goes to the reviewer of its
    category's specialty with the fewest rows so far (never a reviewer who already deferred on it);
    a row with no such reviewer is marked and skipped, so the budget is spent on rows someone can
    review.
    """
    q = queue.copy()
    deferred = deferred or {}
    if maintained is not None:
        src = maintained.assign(split=maintained["split"].astype(str), uid=maintained["uid"].astype(int))
        src = src.set_index(["split", "uid"])["Label Source"].astype(str)
        q["label_source"] = [src.get((s, u), "missing") for s, u in zip(q["split"], q["uid"])]
    else:
        q["label_source"] = "unknown"
    q["eligible"] = (q["priority"] > cfg.min_priority) & ~q["label_source"].isin(cfg.skip_sources)
    load = {r.id: 0 for r in cfg.reviewers}
    in_budget, specialty, reviewer, routing = [], [], [], []
    used = 0
    for r in q.to_dict("records"):
        spec = cfg.specialty_by_category.get(str(r["category"]))
        specialty.append(spec or "")
        if not r["eligible"]:
            why = (f"label already from {r['label_source']}" if r["label_source"] in cfg.skip_sources
                   else "no evidence of an error")
            in_budget.append(False), reviewer.append(""), routing.append(why)
            continue
        if used >= cfg.budget:
            in_budget.append(False), reviewer.append(""), routing.append("outside the budget")
            continue
        exclude = {d["reviewer"] for d in deferred.get((r["split"], int(r["uid"])), [])}
        pool = [rv for rv in cfg.reviewers if spec and rv.specialty == spec and rv.id not in exclude]
        if not pool:
            why = (f"no reviewer for specialty {spec!r}" if spec else f"no specialty mapped for category {r['category']!r}")
            if exclude:
                why += f" other than {sorted(exclude)}"
            in_budget.append(False), reviewer.append(""), routing.append(why)
            continue
        pick = min(pool, key=lambda rv: load[rv.id])  # ties: order of params.yaml
        load[pick.id] += 1
        used += 1
        in_budget.append(True), reviewer.append(pick.id)
        routing.append("second review" if exclude else "routed")
    q["in_budget"] = in_budget
    q["specialty"] = specialty
    q["reviewer"] = reviewer
    q["routing"] = routing
    return q


# ---------------------------------------------------------------- metrics


def truth(queue: pd.DataFrame, maintained: pd.DataFrame) -> np.ndarray:
    """Per queue row (in queue order): is the maintained label an adjudicated change?"""
    st = maintained.assign(split=maintained["split"].astype(str), uid=maintained["uid"].astype(int))
    st = st.set_index(["split", "uid"])["Label Status"].astype(str)
    return np.array([st.get((s, u), "unverified") in ERROR_STATUSES for s, u in zip(queue["split"], queue["uid"])])


def precision_at(hits_in_order: np.ndarray, k: int) -> float:
    k = min(k, len(hits_in_order))
    return float(hits_in_order[:k].mean()) if k else float("nan")


def uniform_simulation(hits: np.ndarray, k: int, n: int, seed: int) -> dict[str, float]:
    """Precision of ``n`` seeded uniform samples of ``k`` rows without replacement."""
    rng = np.random.default_rng(seed)
    k = min(k, len(hits))
    keys = rng.random((n, len(hits)))
    idx = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < len(hits) else np.tile(np.arange(len(hits)), (n, 1))
    prec = hits[idx].mean(axis=1)
    lo, hi = np.percentile(prec, [2.5, 97.5])
    return {"mean": round(float(prec.mean()), 4), "ci95": [round(float(lo), 4), round(float(hi), 4)]}


def ablate_relabel(queue: pd.DataFrame, cfg: TriageConfig) -> pd.DataFrame:
    """The ranking recomputed with every relabel weight set to 0 (audit + recompute evidence only)."""
    w = cfg.weights
    q = queue.copy()
    dis = q["relabel_disagrees"].astype(bool)
    err = q["relabel_rel_err"].fillna(0.0).astype(float)
    relabel_part = (w["relabel_flag"] * dis + w["relabel_disagreement"] * err * dis
                    + w["abstention_mismatch"] * q["abstention_mismatch"].astype(bool)
                    + w["relabel_deferred"] * (q["relabel_status"] == "deferred"))
    q["priority"] = (q["priority"] - relabel_part).round(6)
    return q.sort_values(["priority", "split", "uid"], ascending=[False, True, True], kind="mergesort").reset_index(drop=True)


def metrics(queue: pd.DataFrame, maintained: pd.DataFrame, cfg: TriageConfig) -> tuple[dict[str, Any], pd.DataFrame]:
    """The metrics JSON and the cumulative errors-found curve (for ``dvc plots`` and the PNG)."""
    hits = truth(queue, maintained)
    ablated = ablate_relabel(queue, cfg)
    hits_ablated = truth(ablated, maintained)
    unverified = np.array([s == "unverified" for s in _status(queue, maintained)])
    n, errors = len(hits), int(hits.sum())
    base = errors / n if n else float("nan")
    pk: dict[str, Any] = {}
    for i, k in enumerate(cfg.ks):
        sim = uniform_simulation(hits, k, cfg.simulations, cfg.seed + i)
        pk[str(k)] = {
            "triage": round(precision_at(hits, k), 4),
            "triage_without_relabel": round(precision_at(hits_ablated, k), 4),
            "uniform_expected": round(base, 4),
            "uniform_simulated": sim["mean"],
            "uniform_ci95": sim["ci95"],
            "lift": round(precision_at(hits, k) / base, 2) if base else None,
            "unverified_in_top_k": int(unverified[:k].sum()),
        }
    routed = queue["in_budget"].to_numpy(dtype=bool)
    eligible = queue["eligible"].to_numpy(dtype=bool)
    # uniform sampling draws from every row not already settled by a skipped source (a physician)
    pool = ~queue["label_source"].isin(cfg.skip_sources).to_numpy(dtype=bool)
    found = int(hits[routed].sum())
    reviews = int(routed.sum())
    base_pool = float(hits[pool].mean()) if pool.any() else float("nan")
    per_reviewer = queue.loc[routed].groupby("reviewer").size().to_dict()
    out = {
        "rows": n,
        "truth": {"definition": "maintained Label Status in {corrected, abstain}", "errors": errors,
                  "unverified": int(unverified.sum())},
        "base_rate": round(base, 4),
        "budget": cfg.budget,
        "eligible": int(eligible.sum()),
        "routed": reviews,
        "per_reviewer": {str(k): int(v) for k, v in sorted(per_reviewer.items())},
        "no_reviewer": int(queue["routing"].str.startswith(("no reviewer", "no specialty")).sum()),
        "precision_at_k": pk,
        "errors_found_per_review": {
            "triage": round(found / reviews, 4) if reviews else None,
            "uniform": round(base_pool, 4) if pool.any() else None,
            "uniform_pool": int(pool.sum()),
            "errors_found": found,
            "reviews": reviews,
        },
        "uniform_simulations": cfg.simulations,
        "seed": cfg.seed,
    }
    m = min(cfg.curve_max, n)
    ks = np.arange(1, m + 1)
    curve = pd.DataFrame({
        "reviews": ks,
        "triage": np.cumsum(hits[:m]),
        "triage_without_relabel": np.cumsum(hits_ablated[:m]),
        "uniform_expected": np.round(ks * base, 3),
    })
    return out, curve


def _status(queue: pd.DataFrame, maintained: pd.DataFrame) -> list[str]:
    st = maintained.assign(split=maintained["split"].astype(str), uid=maintained["uid"].astype(int))
    st = st.set_index(["split", "uid"])["Label Status"].astype(str)
    return [st.get((s, u), "unverified") for s, u in zip(queue["split"], queue["uid"])]


def plot(curve: pd.DataFrame, summary: dict[str, Any], path: Path) -> Path:
    """Cumulative adjudicated errors found against the number of reviews: queue vs uniform."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    ax.plot(curve["reviews"], curve["triage"], label="triage queue", color="#1f5fa8", linewidth=2)
    ax.plot(curve["reviews"], curve["triage_without_relabel"], label="queue without relabel evidence",
            color="#d07a1a", linewidth=1.5, linestyle="--")
    ax.plot(curve["reviews"], curve["uniform_expected"], label=f"uniform sampling (base rate {summary['base_rate']:.3f})",
            color="#666666", linewidth=1.5, linestyle=":")
    for k in summary["precision_at_k"]:
        kk = int(k)
        if kk <= len(curve):
            ax.axvline(kk, color="#dddddd", linewidth=0.8, zorder=0)
    if summary.get("budget"):
        ax.axvline(summary["budget"], color="#b03030", linewidth=1, label=f"review budget ({summary['budget']})")
    ax.set_xlabel("rows reviewed, in queue order")
    ax.set_ylabel("adjudicated label changes found")
    ax.set_title("Triage: label errors found per physician review")
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    ax.grid(alpha=0.2)
    fig.tight_layout()
    target = Path(path)
    write_atomic(target, lambda p: fig.savefig(p, format="png", metadata={"Software": None}))
    plt.close(fig)
    return target


def write_outputs(queue: pd.DataFrame, summary: dict[str, Any], curve: pd.DataFrame, out_dir: Path) -> dict[str, Path]:
    out_dir = Path(out_dir)
    q = queue[QUEUE_COLUMNS].copy()
    q["relabel_rel_err"] = q["relabel_rel_err"].round(4)
    paths = {
        "queue": write_atomic(out_dir / "queue.csv", lambda p: q.to_csv(p, index=False)),
        "metrics": write_text_atomic(out_dir / "metrics.json", json.dumps(summary, indent=2) + "\n"),
        "curve": write_atomic(out_dir / "errors_found.csv", lambda p: curve.to_csv(p, index=False)),
    }
    paths["plot"] = plot(curve, summary, out_dir / "errors_found.png")
    return paths


def read_queue(path: Path) -> pd.DataFrame:
    """``queue.csv`` as written by the stage (reviewer and specialty as text)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "triage queue not found (run `medcalc-maintained triage` first)")
    q = pd.read_csv(path, dtype={"reviewer": "string", "specialty": "string", "split": "string"},
                    keep_default_na=False)
    _require(q, ["split", "uid", "in_budget", "reviewer"], str(path))
    q["in_budget"] = q["in_budget"].astype(str).str.lower().eq("true")
    q["uid"] = q["uid"].astype(int)
    return q


__all__ = ["TriageConfig", "Reviewer", "score", "route", "metrics", "write_outputs", "read_queue",
           "deferred_reviews", "relabel_evidence", "audit_evidence"]
