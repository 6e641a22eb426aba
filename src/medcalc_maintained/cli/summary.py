"""``medcalc-maintained summary``: what the pipeline produced, read from its outputs on disk.

Each section reads one stage's output and is skipped (with a note) when that output is absent.
"""

from __future__ import annotations

from typing import Callable

import pandas as pd
from rich.console import Console
from rich.table import Table

from medcalc_maintained.project import Project
from medcalc_maintained.release.layout import MANIFEST

Section = Callable[[Project, Console], bool]
SECTIONS: list[tuple[str, Section]] = []


def section(title: str) -> Callable[[Section], Section]:
    def deco(fn: Section) -> Section:
        SECTIONS.append((title, fn))
        return fn

    return deco


@section("ingest")
def _ingest(project: Project, console: Console) -> bool:
    p = project.instances
    if not p.exists():
        return False
    df = pd.read_parquet(p, columns=["split", "calculator_id", "output_type"])
    q = project.quarantine
    nq = len(pd.read_csv(q)) if q.exists() else 0
    t = Table(title="ingested upstream instances")
    for c in ("split", "rows", "calculators", "decimal", "integer", "date", "quarantined"):
        t.add_column(c, justify="right" if c != "split" else "left")
    for split, g in df.groupby("split"):
        ot = g["output_type"].value_counts()
        t.add_row(str(split), str(len(g)), str(g["calculator_id"].nunique()),
                  *(str(int(ot.get(k, 0))) for k in ("decimal", "integer", "date")), str(nq))
    console.print(t)
    return True


def print_summary(project: Project, console: Console | None = None) -> int:
    console = console or Console()
    shown = 0
    for title, fn in SECTIONS:
        if fn(project, console):
            shown += 1
        else:
            console.print(f"[dim]{title}: no output yet (run `dvc repro`)[/]")
    return shown


@section("recompute")
def _recompute(project: Project, console: Console) -> bool:
    import json

    p = project.recompute_summary
    if not p.exists():
        return False
    s = json.loads(p.read_text())
    d = s.get("detector") or {}
    console.print(
        f"recompute audit: {s['computable']}/{s['rows']} rows computable ({100 * s['computable_rate']:.1f}%), "
        f"{100 * s['agreement_rate']:.1f}% reproduce the v1.0 label; findings {s['findings']}"
    )
    low = [c for c in s["per_calculator"] if (c["agreement_rate"] or 0) < 0.8]
    if low:
        console.print("  calculators below 80% agreement: " + ", ".join(
            f"{c['calculator']} ({100 * (c['agreement_rate'] or 0):.0f}%)" for c in low))
    if d:
        console.print(f"  as a detector of changed labels: precision {d['precision']}, recall {d['recall']} "
                      f"({d['true_positives']} of {d['diverging']} changed rows flagged)")
    return True


@section("maintained labels")
def _maintained(project: Project, console: Console) -> bool:
    p = project.maintained
    if not p.exists():
        return False
    df = pd.read_parquet(p, columns=["split", "Label Status", "Label Source", "Error Type"])
    t = Table(title="maintained labels: status by source")
    statuses = ["corrected", "abstain", "confirmed", "unverified"]
    t.add_column("source")
    for s in statuses + ["total"]:
        t.add_column(s, justify="right")
    for src, g in df.groupby("Label Source"):
        vc = g["Label Status"].value_counts()
        t.add_row(str(src), *(str(int(vc.get(s, 0))) for s in statuses), str(len(g)))
    vc = df["Label Status"].value_counts()
    t.add_row("[bold]all[/]", *(f"[bold]{int(vc.get(s, 0))}[/]" for s in statuses), f"[bold]{len(df)}[/]")
    console.print(t)
    et = df.loc[df["Error Type"].astype(str) != "", "Error Type"].value_counts()
    if len(et):
        console.print("changed labels by error type: " + ", ".join(f"{k} {v}" for k, v in et.items()))
    return True


@section("evidence")
def _evidence(project: Project, console: Console) -> bool:
    import json

    path = project.path(project.param("certify.out")) / "summary.json"
    if not path.exists():
        return False
    v = json.loads(path.read_text(encoding="utf-8"))["verified"]
    t = Table(title=f"every input of the {v['rows']} verified labels read against its note (stage certify)")
    for c in ("every input certified", "an input contradicted", "an input not addressed"):
        t.add_column(c, justify="right")
    t.add_row(*(f"{v[k]['rows']} ({v[k]['share']:.1%})" for k in ("certified", "contradicted", "not_addressed")))
    console.print(t)
    return True


@section("physician agreement")
def _agreement(project: Project, console: Console) -> bool:
    import json

    p = project.physician_agreement
    if not p.exists():
        return False
    rep = json.loads(p.read_text())
    t = Table(title=f"agreement with {rep['rows']} blinded physician labels")
    for c in ("labels", "agree", "95% CI", "sMAPE %", "95% CI"):
        t.add_column(c, justify="left" if c == "labels" else "right")
    for name, s in rep["label_sets"].items():
        t.add_row(name, f"{s['agree']}/{s['rows']}", f"[{s['agree_ci95'][0]:.0f}, {s['agree_ci95'][1]:.0f}]",
                  f"{s['smape']:.1f}", f"[{s['smape_ci95'][0]:.1f}, {s['smape_ci95'][1]:.1f}]")
    console.print(t)
    return True


@section("triage")
def _triage(project: Project, console: Console) -> bool:
    import json

    p = project.triage_dir / "summary.json"
    if not p.exists():
        return False
    m = json.loads(p.read_text())
    e = m["errors_found_per_review"]
    console.print(f"triage queue: {m['rows']} rows ranked, {m['eligible']} eligible (evidence of an error, "
                  f"no physician label yet), {m['routed']} routed to physicians (budget {m['budget']}"
                  + (f", {m['no_reviewer']} without a reviewer of their specialty" if m.get("no_reviewer") else "") + ")")
    t = Table(title=f"triage precision@k vs uniform sampling ({m['truth']['errors']} adjudicated label changes, "
                    f"base rate {m['base_rate']:.3f})")
    for c in ("k", "queue", "queue without relabel", "uniform (simulated 95% CI)", "lift"):
        t.add_column(c, justify="right")
    for k, v in m["precision_at_k"].items():
        t.add_row(k, f"{v['triage']:.3f}", f"{v['triage_without_relabel']:.3f}",
                  f"{v['uniform_simulated']:.3f} [{v['uniform_ci95'][0]:.3f}, {v['uniform_ci95'][1]:.3f}]",
                  f"{v['lift']:.1f}x" if v.get("lift") is not None else "-")
    console.print(t)
    if e.get("reviews"):
        console.print(f"  errors found per review inside the budget: {e['triage']:.2f} ({e['errors_found']}/{e['reviews']}) "
                      f"vs {e['uniform']:.2f} for uniform sampling of the {e['uniform_pool']} unreviewed rows")
    return True


@section("release")
def _release(project: Project, console: Console) -> bool:
    import json

    p = project.release_build / MANIFEST
    if not p.exists():
        return False
    m = json.loads(p.read_text())
    rows = m.get("rows", {})
    parts = ", ".join(f"{cfg} {sum(by.values())}" for cfg, by in rows.items())
    console.print(f"release {m['version']} ({m['kind']}, {m['date']}, tag {m['tag']}) in build/release: "
                  f"rows per config: {parts}; {len(m.get('files', {})) + 1} files with sha256 in manifest.json")
    return True


@section("audit and relabel")
def _audit_relabel(project: Project, console: Console) -> bool:
    import json

    shown = False
    audit_dir, relabel_dir = project.llm_out("audit"), project.llm_out("relabel")
    flags_path = audit_dir / "flags.parquet"
    if flags_path.exists():
        f = pd.read_parquet(flags_path, columns=["flagged", "runs", "backend", "model"])
        info = json.loads((audit_dir / "run.json").read_text()) if (audit_dir / "run.json").exists() else {}
        backend = f["backend"].iloc[0] if len(f) else "?"
        model = f["model"].iloc[0] if len(f) else "?"
        console.print(f"audit ({backend}, {model}): {int(f['flagged'].sum())} of {len(f)} rows flagged likely error "
                      f"({100 * f['flagged'].mean():.1f}%), {int(f['runs'].sum())} votes; rule: {info.get('rule', '?')}")
        shown = True
    labels_path = relabel_dir / "labels.parquet"
    if labels_path.exists():
        lab = pd.read_parquet(labels_path, columns=["status", "label_kind", "backend", "model"])
        st = lab["status"].value_counts()
        backend = lab["backend"].iloc[0] if len(lab) else "?"
        model = lab["model"].iloc[0] if len(lab) else "?"
        console.print(f"relabel ({backend}, {model}): {int(st.get('labeled', 0))} labeled "
                      f"({int((lab['label_kind'] == 'abstain').sum())} of them N/A), "
                      f"{int(st.get('deferred', 0))} deferred of {len(lab)} rows")
        shown = True
    return shown


@section("clinical severity of the changes")
def _severity(project: Project, console: Console) -> bool:
    import json

    m = project.release_build / MANIFEST
    if not m.exists():
        return False
    version = json.loads(m.read_text())["version"]
    path = project.release_table(version, "full")
    if not path.exists():
        return False
    full = pd.read_parquet(path, columns=["Label Status", "Change Severity"])
    changed = full[full["Label Status"].isin(["corrected", "abstain"])]
    levels = changed["Change Severity"].value_counts()
    console.print(f"release {version}: {len(changed)} changed labels by clinical severity - "
                  + ", ".join(f"{lv} {int(levels.get(lv, 0))}" for lv in ("L0", "L1", "L2", "L3"))
                  + " (L2: crosses a decision band, L3: changes treatment or disposition)")
    return True


@section("review allocation")
def _allocation(project: Project, console: Console) -> bool:
    import json

    p = project.triage_simulate_dir / "summary.json"
    if not p.exists():
        return False
    m = json.loads(p.read_text())
    cal, est, replay = m["calibration"], m["model"]["unverified_total"], m["replay"]
    console.print(f"error model: held-out Brier {cal['brier']:.4f} (base rate alone {cal['brier_base_rate']:.4f}) on "
                  f"{cal['rows']} adjudicated rows; estimated wrong among {est['rows']} unverified rows "
                  f"{100 * est['mean']:.0f}% [{100 * est['ci95'][0]:.0f}, {100 * est['ci95'][1]:.0f}]")
    for measure, what in (("errors", "most errors found"), ("harm", "most severity-weighted harm found"),
                          ("estimation", "best per-calculator error rates")):
        wins = replay["winner"][measure]
        console.print(f"  replay, {what}: " + ", ".join(f"{k} reviews: {v}" for k, v in wins.items()))
    return True


@section("stage times")
def _stage_times(project: Project, console: Console) -> bool:
    """The seconds of each stage of the last ``medcalc-maintained repro`` (``make run``), slowest first."""
    from medcalc_maintained.devtools.stage_times import read_times

    doc = read_times(project.stage_times)
    if doc is None:
        return False
    stages = sorted(doc["stages"], key=lambda s: -s["seconds"])
    ran = [s for s in stages if s["ran"]]
    t = Table(title=f"stage times of the last `{doc['command']}` ({doc['total_seconds']:.1f} s in all, "
                    f"exit {doc['exit_code']}, {doc['finished_at']})")
    t.add_column("stage")
    t.add_column("seconds", justify="right")
    t.add_column("share", justify="right")
    for s in ran:
        t.add_row(s["stage"], f"{s['seconds']:.1f}", f"{100 * s['seconds'] / max(doc['total_seconds'], 0.01):.0f}%")
    if len(ran) < len(stages):
        t.add_row(f"{len(stages) - len(ran)} unchanged (skipped)", f"{sum(s['seconds'] for s in stages if not s['ran']):.1f}", "")
    console.print(t)
    return True
