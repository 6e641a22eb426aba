"""Stage ``grader-check``: every shipped grader's false-positive and false-negative rates on real
model outputs whose correct grade two readers decided by reading them (see
:mod:`medcalc_maintained.grading.grader_check` for the measurement).

Reads ``report.grader_check.outputs`` and the readings beside it (committed), and the ``default`` config
of release ``report.grader_check.release`` (release-tables): every output's label, limits and output type
must be that release's for its row, so the readers read against the labels a user grades with.
Writes to ``report.grader_check.out``: ``rates.csv`` (one row per grader and stratum), ``verdicts.csv``
(every output's reference grade and each grader's verdict), ``rates.png`` (the rates with their
intervals, per answer type), ``report.json`` (the readers' agreement, the strata, the rates, each
grader's share of gold answers right) and ``metrics.json`` (the outputs read, the readers' kappa and
``ours``'s overall false-positive and false-negative rates; every grader's rates are in ``rates.csv``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.atomic import replace_files, write_atomic, write_json
from medcalc_maintained.core.csv_for_people import write_csv_for_people
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.grading import grader_check as gc
from medcalc_maintained.grading.graders import GRADERS
from medcalc_maintained.project import Project
from medcalc_maintained.scoring.labels import release_labels
from medcalc_maintained.stages._metrics import METRICS

LABEL_FIELDS = {"label": "Ground Truth Answer", "lower": "Lower Limit", "upper": "Upper Limit",
                "output_type": "Output Type"}


def check_against_release(outputs: list[dict[str, Any]], release: pd.DataFrame, version: str, where: Path) -> None:
    """Every output names ``version`` and carries its row's label, limits and output type as the
    release has them."""
    by_uid = {int(r["uid"]): r for r in release.to_dict("records")}
    for n, o in enumerate(outputs, 1):
        if str(o["release"]) != version:
            raise DataError(where, f"line {n} ({o['id']}): field release {o['release']!r} is not "
                                   f"report.grader_check.release {version!r}")
        row = by_uid.get(int(o["uid"]))
        if row is None:
            raise DataError(where, f"line {n} ({o['id']}): uid {o['uid']} is not a row of release {version}'s "
                                   "default config")
        for field, col in LABEL_FIELDS.items():
            if str(o[field]) != str(row[col]):
                raise DataError(where, f"line {n} ({o['id']}): field {field} {o[field]!r} is not release {version}'s "
                                       f"{col} {row[col]!r}")


def run(project: Project, *, out: Path | None = None) -> tuple[dict[str, Any], Path]:
    p = project.section("report.grader_check")
    version = str(p["release"])
    outputs_path, readings = project.path(p["outputs"]), project.path(p["readings"])
    outputs = gc.read_outputs(outputs_path)
    release = release_labels(project, version, "default")
    check_against_release(outputs, release, version, outputs_path)
    ids = [o["id"] for o in outputs]
    a, b = (gc.read_reading(readings / f"{r}.csv", ids) for r in gc.READERS)
    adj_path = readings / "adjudication.csv"
    refs = gc.reference(ids, a, b, gc.read_table(adj_path, gc.ADJUDICATION_FIELDS), adj_path)
    graded = gc.verdicts(outputs, GRADERS)
    rates = gc.error_rates(outputs, refs, graded)
    gold = gc.gold_shares(release.to_dict("records"), GRADERS)
    grades_a, grades_b = [a[i]["grade"] for i in ids], [b[i]["grade"] for i in ids]
    report = {
        "release": version,
        "outputs": len(outputs),
        "models": dict(sorted(Counter(o["model"] for o in outputs).items())),
        "answer_types": {t: sum(o["answer_type"] == t for o in outputs) for t in gc.ANSWER_TYPES},
        "reference": {"correct": sum(r.grade == "correct" for r in refs),
                      "incorrect": sum(r.grade == "incorrect" for r in refs),
                      "forms": {f: sum(r.form == f for r in refs) for f in gc.FORMS}},
        "readers": {"grades_agreed": sum(r.grades_agreed for r in refs),
                    "readings_agreed": sum(r.agreed for r in refs),
                    "adjudicated": sum(not r.agreed for r in refs),
                    "kappa": gc.kappa(grades_a, grades_b)},
        "gold": gold,
        "rates": rates,
        # per grader, its false negatives by the form of the answer the readers read
        "false_negative_forms": {g: {f: sum(1 for r, m in zip(refs, marks) if r.grade == "correct" and not m
                                            and r.form == f) for f in gc.FORMS} for g, marks in graded.items()},
        "correct_by_type": {t: sum(1 for o, r in zip(outputs, refs) if r.grade == "correct" and o["answer_type"] == t)
                            for t in gc.ANSWER_TYPES},
        # how varied the set is: distinct output texts per model and answer type, and outputs that abstain
        "distinct_outputs": {m: {t: len({o["output"] for o in outputs if o["model"] == m and o["answer_type"] == t})
                                 for t in gc.ANSWER_TYPES} for m in sorted({o["model"] for o in outputs})},
        "abstaining_outputs": sum(a[i]["answer_read"].strip().upper() == b[i]["answer_read"].strip().upper() == "N/A"
                                  for i in ids),  # both readers read an abstention
    }
    target = out or project.path(p["out"]) / "report.json"
    frame = pd.DataFrame({"id": ids, "model": [o["model"] for o in outputs], "uid": [o["uid"] for o in outputs],
                          "answer_type": [o["answer_type"] for o in outputs],
                          "reference": [r.grade for r in refs], "form": [r.form for r in refs],
                          "adjudicated": [not r.agreed for r in refs],
                          **{g: ["correct" if m else "incorrect" for m in marks] for g, marks in graded.items()}})
    # every file or none: the directory's new files are swapped in together
    target.parent.mkdir(parents=True, exist_ok=True)
    replace_files(target.parent, {
        "rates.csv": lambda f: pd.DataFrame(rates).to_csv(f, index=False),
        "verdicts.csv": lambda f: write_csv_for_people(f, frame),
        "rates.png": lambda f: plot(rates, f),
        target.name: lambda f: write_json(f, report),
        METRICS: lambda f: write_json(f, headline(report)),
    })
    return report, target


def headline(report: dict[str, Any]) -> dict[str, Any]:
    """For ``dvc metrics show`` (one row beside the other stages'): the set's size, the readers' kappa
    and ``ours``'s overall false-positive and false-negative rates; every grader's are in ``rates.csv``."""
    ours = next(r for r in report["rates"] if r["stratum"] == "all" and r["grader"] == "ours")
    return {"outputs": report["outputs"], "kappa": report["readers"]["kappa"],
            "ours_fp_rate": None if ours["fp_rate"] is None else round(ours["fp_rate"], 4),
            "ours_fn_rate": None if ours["fn_rate"] is None else round(ours["fn_rate"], 4)}


def plot(rates: list[dict[str, Any]], path: Path) -> None:
    """Two panels (false positives, false negatives): per answer type and overall, one bar per
    grader with its Wilson 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    strata = [s for s in ("all", *gc.ANSWER_TYPES, "malformed") if any(r["stratum"] == s for r in rates)]
    graders = list(dict.fromkeys(r["grader"] for r in rates))
    fig, axes = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    width = 0.8 / max(len(graders), 1)
    for ax, key, title in ((axes[0], "fp", "false positives (graded correct, read incorrect)"),
                           (axes[1], "fn", "false negatives (graded incorrect, read correct)")):
        for j, g in enumerate(graders):
            xs, ys, lo, hi = [], [], [], []
            for i, s in enumerate(strata):
                r = next(x for x in rates if x["grader"] == g and x["stratum"] == s)
                if r[f"{key}_rate"] is None:
                    continue
                xs.append(i + (j - (len(graders) - 1) / 2) * width)
                ys.append(r[f"{key}_rate"])
                lo.append(max(0.0, r[f"{key}_rate"] - r[f"{key}_low"]))  # float noise at k = 0 or k = n
                hi.append(max(0.0, r[f"{key}_high"] - r[f"{key}_rate"]))
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=g)
        ax.set_title(title, fontsize=10)
        ax.set_ylim(0, 1)
        ax.set_ylabel("rate (Wilson 95%)")
    first = [next(x for x in rates if x["stratum"] == s) for s in strata]  # the counts are every grader's
    axes[1].set_xticks(range(len(strata)), [f"{s}\n{r['reference_incorrect']} read incorrect\n"
                                            f"{r['reference_correct']} read correct" for s, r in zip(strata, first)],
                       fontsize=8)
    axes[0].legend(ncol=len(graders), fontsize=8, loc="upper right")
    fig.tight_layout()
    write_atomic(path, lambda f: fig.savefig(f, format="png", dpi=100, metadata={"Software": None}))
    plt.close(fig)
