"""The card's account of how often each grader is wrong (placeholder ``grader_check``, releases from
``CARD_GRADERS_FROM``): stage ``grader-check``'s report as two tables, false positives and false
negatives per grader and answer type, with the set they were measured on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medcalc_maintained.core.errors import DataError

REPORT_KEYS = {"release", "outputs", "models", "answer_types", "reference", "readers", "gold", "rates",
               "false_negative_forms", "correct_by_type", "distinct_outputs", "abstaining_outputs"}
STRATA = ("all", "n_a", "date", "gestational_age", "integer", "decimal", "malformed")
STRATUM_NAMES = {"all": "all", "n_a": "N/A", "date": "date", "gestational_age": "gest. age",
                 "integer": "integer", "decimal": "decimal", "malformed": "no answer"}


def read(path: Path) -> dict[str, Any] | None:
    """Stage ``grader-check``'s ``report.json``; ``None`` when the stage has not run (a project copy
    that builds releases without it); a :class:`DataError` when it is not a report."""
    if not path.is_file():
        return None
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DataError(path, f"not JSON ({exc}): run `dvc repro grader-check`") from None
    missing = sorted(REPORT_KEYS - set(report)) if isinstance(report, dict) else sorted(REPORT_KEYS)
    if missing:
        raise DataError(path, f"not a grader-check report of this version (no {', '.join(missing)}): "
                              "run `dvc repro grader-check`")
    return report


def _cell(r: dict[str, Any], key: str) -> str:
    n = r["reference_incorrect" if key == "fp" else "reference_correct"]
    if not n:
        return "–"
    k = r["false_positives" if key == "fp" else "false_negatives"]
    return f"{k}/{n} ({100 * r[f'{key}_rate']:.1f}%, {100 * r[f'{key}_low']:.1f}–{100 * r[f'{key}_high']:.1f})"


def tables(report: dict[str, Any]) -> str:
    """The two tables: one row per grader, one column per stratum present, each cell
    ``errors/outputs (rate, Wilson 95% interval)``, and the gold column."""
    from medcalc_maintained.release.markdown import md_table

    present = [s for s in STRATA if any(r["stratum"] == s for r in report["rates"])]
    graders = list(dict.fromkeys(r["grader"] for r in report["rates"]))
    by = {(r["grader"], r["stratum"]): r for r in report["rates"]}
    out = []
    for key, title in (("fp", "False positives: graded correct, read incorrect (of the outputs read incorrect)"),
                       ("fn", "False negatives: graded incorrect, read correct (of the outputs read correct)")):
        # an output that commits to no answer is never correct: no false-negative column for it
        strata = [s for s in present if not (key == "fn" and s == "malformed")]
        rows = [[f"`{g}`", *(_cell(by[g, s], key) for s in strata)] for g in graders]
        out.append(f"{title}:\n\n" + md_table(["grader", *(STRATUM_NAMES[s] for s in strata)], rows,
                                               ["l", *("r" for _ in strata)]))
    return "\n\n".join(out)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def text(report: dict[str, Any] | None, version: str) -> str:
    """The card's paragraph and tables for release ``version`` (a sentence saying so when the stage
    has not run)."""
    if report is None:
        return ("No measurement of the graders was made for this build (stage `grader-check` has not "
                "run for it).")
    r, ref, rel = report["readers"], report["reference"], report["release"]
    models = ", ".join(f"`{m}` ({n})" for m, n in report["models"].items())
    kinds = ", ".join(f"{STRATUM_NAMES[t]} {n}" for t, n in report["answer_types"].items())
    gold = "; ".join(f"`{g}` {v['correct']:,}/{v['rows']:,}" for g, v in report["gold"].items())
    same = "" if rel == version else f" (release {rel}'s labels, which this release's `default` config shares)"
    agreed = (f"They agreed on {r['grades_agreed']} of {report['outputs']} grades (Cohen's kappa {r['kappa']}) and "
              f"on {r['readings_agreed']} of the forms; "
              + (f"the {_count(r['adjudicated'], 'output', 'outputs')} on which they differed were adjudicated. "
                 if r["adjudicated"] else "none needed adjudication. "))
    return (
        f"{report['outputs']} real outputs of {_count(len(report['models']), 'model', 'models')}, {models}, on rows "
        f"of release {rel}'s `default` config ({kinds}) were each read against the row's label{same} by two "
        "readers (independent instances of an LLM reading agent, not people), who decided whether the output "
        "gives the right answer under the definition above without seeing any grader's verdict. "
        + agreed
        + f"{ref['correct']} outputs are correct, {ref['incorrect']} incorrect, and {ref['forms']['none']} commit to "
        "no answer at all. Every grader against those grades (`inspect` and `lm-eval`: each tool's stock "
        f"matcher on the `<answer>` tag, as a task written with it would grade):\n\n{tables(report)}\n\n"
        f"Gold answers (each row of release {rel}'s `default` config answered with its own label, as JSON for "
        f"`opencompass`) graded right: {gold}. {limits(report)} The set, the readings and the protocol are in "
        "the repository (`data/grader_check/`, `docs/grader-check.md`)."
    )


def limits(report: dict[str, Any]) -> str:
    """What the set cannot say: how varied it is, the answer types without a correct output (no
    false-negative rate), and where `ours`'s false negatives come from."""
    none = [STRATUM_NAMES[t] for t, n in report["correct_by_type"].items() if n == 0]
    distinct = sum(sum(per.values()) for per in report["distinct_outputs"].values())
    text = (f"The set is narrow: its {report['outputs']} outputs are {distinct} distinct texts (counted per model "
            "and answer type; small models repeat themselves: the same guess, the question's example date), "
            f"{_count(report['abstaining_outputs'], 'output abstains', 'outputs abstain')}, and "
            f"{_count(report['reference']['correct'], 'output is', 'outputs are')} correct, so the "
            "false-negative rates rest on few outputs (their intervals, not their points, are the result)")
    text += f"; no {' or '.join(none)} output is correct, so those have none." if none else "."
    fn = report["false_negative_forms"]["ours"]
    forms = {"tagged": "in an `<answer>` tag", "stated": "in prose without the tag the prompt asks for"}
    where = ", ".join(f"{n} {forms[f]}" for f, n in fn.items() if n and f in forms)
    if where:
        text += f" Of the correct answers `ours` misses {sum(fn.values())}: {where}."
    return text
