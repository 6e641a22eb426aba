"""Row-level facts the data contracts assert on.

Great Expectations evaluates the suites in ``expectations/``; the checks that need MedCalc-specific
semantics (does an answer parse for its output type, are the limits the ±5% band, does a ledger
record's ``old_value`` match the label at its base release, does a note state its own answer) are
computed here once, as boolean columns of a *contract view*, so that every suite stays a list of
plain, reviewable built-in expectations over named facts. Each function returns a new DataFrame.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from functools import lru_cache
from typing import Any, Mapping, cast

import pandas as pd

from medcalc_maintained.calculators.policy import known_version
from medcalc_maintained.calculators.ranges import label_problem
from medcalc_maintained.core.answers import Answer, band, labels_agree, parse_answer, same_value
from medcalc_maintained.core.labels import fit_problem, label_style
from medcalc_maintained.core.rows import entities_or_empty, row_dicts
from medcalc_maintained.core.versions import UNRELEASED
from medcalc_maintained.core.versions import release_key as _release_key
from medcalc_maintained.ledger import rules
from medcalc_maintained.ledger.apply import APPLIED, replay, replayed_value

REL_TOL = 1e-6


def _num(a: Answer) -> float | None:
    return a.number if a.is_number else None


def _day_count(a: Answer) -> float:
    """A date or a gestational age (2024-06 types it ``date``) as a number that orders it."""
    return float(a.date.toordinal()) if a.kind == "date" else a.number


def answer_facts(otype: str, answer: str, lower: str, upper: str, style: str | None = None) -> dict[str, bool]:
    """``answer_parses`` (the label fits its row: :func:`core.labels.fit_problem`), ``within_limits``,
    ``limits_rule_ok`` for one row whose labels are written in ``style``."""
    a, lo, hi = (parse_answer(x, otype) for x in (answer, lower, upper))
    parses = fit_problem(a, otype, style) is None
    if a.is_abstain:
        ok = lo.is_abstain and hi.is_abstain
        return {"answer_parses": parses, "within_limits": ok, "limits_rule_ok": ok}
    if not parses or not lo.is_valid or not hi.is_valid or lo.is_abstain or hi.is_abstain:
        return {"answer_parses": parses, "within_limits": False, "limits_rule_ok": False}
    if otype == "date":
        if len({a.kind, lo.kind, hi.kind}) > 1:  # a date beside weeks and days: no order between them
            return {"answer_parses": True, "within_limits": False, "limits_rule_ok": False}
        d, dlo, dhi = _day_count(a), _day_count(lo), _day_count(hi)
        return {"answer_parses": True, "within_limits": dlo <= d <= dhi, "limits_rule_ok": dlo == d == dhi}
    x, low, high = a.number, _num(lo), _num(hi)
    within = low is not None and high is not None and min(low, high) - 1e-9 <= x <= max(low, high) + 1e-9
    if otype == "decimal" and a.kind != "gestational_age":
        bl, bh = band(x)
        rule = (low is not None and high is not None and math.isclose(low, bl, rel_tol=REL_TOL, abs_tol=1e-9)
                and math.isclose(high, bh, rel_tol=REL_TOL, abs_tol=1e-9))
    else:
        rule = low == x == high
    return {"answer_parses": True, "within_limits": within, "limits_rule_ok": rule}


def instance_view(maintained: pd.DataFrame, upstream: pd.DataFrame, records: pd.DataFrame,
                  registry: dict[int, str]) -> pd.DataFrame:
    """The maintained rows plus one boolean column per label invariant."""
    df = maintained.copy()
    up = upstream.set_index(["split", "uid"])["Ground Truth Answer"].astype(str)
    # the records a row's Correction IDs name: accepted ones, and the disputed ones that mark a label (APPLIED)
    accepted = records[records.get("decision", pd.Series(dtype=str)).isin(APPLIED)] if len(records) else records
    rationale_by_id = dict(zip(accepted["id"], accepted["rationale"].fillna(""))) if len(accepted) else {}
    styles = [label_style(o, t) for o, t in zip(df["Original Ground Truth Answer"].astype(str), df["Output Type"])]
    facts = [answer_facts(str(o), str(a), str(lo), str(hi), st) for o, a, lo, hi, st in
             zip(df["Output Type"], df["Ground Truth Answer"], df["Lower Limit"], df["Upper Limit"], styles)]
    for key in ("answer_parses", "within_limits", "limits_rule_ok"):
        df[key] = [f[key] for f in facts]
    ids = df["Correction IDs"].fillna("").astype(str).map(lambda s: [x for x in s.split(";") if x])
    is_na = df["Ground Truth Answer"].astype(str).map(lambda s: parse_answer(s, "decimal").is_abstain)
    df["na_is_abstain_with_rationale"] = [
        (not na) or (st in ("abstain", "disputed") and any(rationale_by_id.get(i, "").strip() for i in idl))  # a
        # disputed row keeps the N/A an abstaining record set
        for na, st, idl in zip(is_na, df["Label Status"], ids)
    ]
    changed = [not same_value(a, o, t) for a, o, t in
               zip(df["Ground Truth Answer"], df["Original Ground Truth Answer"], df["Output Type"])]
    df["change_has_accepted_correction"] = [
        (not ch) or (len(idl) > 0 and all(i in rationale_by_id for i in idl)) for ch, idl in zip(changed, ids)
    ]
    df["original_matches_upstream"] = [
        up.get((s, int(u))) == str(o) for s, u, o in zip(df["split"], df["uid"], df["Original Ground Truth Answer"])
    ]
    _range_facts(df, styles)
    df["calculator_in_registry"] = [registry.get(int(c)) == str(n) for c, n in zip(df["Calculator ID"], df["Calculator Name"])]
    versions = df["Guideline Version"] if "Guideline Version" in df.columns else pd.Series([None] * len(df))
    df["guideline_version_known"] = [known_version(int(c), v) for c, v in zip(df["Calculator ID"], versions)]
    df["instance_key_ok"] = instance_key_facts(df)
    df["is_abstain"] = is_na.astype(float)
    df["is_unverified"] = (df["Label Status"] == "unverified").astype(float)
    return df


INSTANCE_KEY = re.compile(r"^k-[0-9a-f]{16}(~.+)?(#\d+)?$")


def instance_key_facts(df: pd.DataFrame) -> list[bool]:
    """Per row: ``instance_key`` (when the rows carry it) has the identity rule's form and is
    unique within its split (:func:`medcalc_maintained.upstream.identity.instance_keys`)."""
    if "instance_key" not in df.columns:
        return [True] * len(df)
    keys = [None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v) for v in df["instance_key"]]
    seen = Counter(zip(df["split"].astype(str), keys))
    return [k is not None and bool(INSTANCE_KEY.match(k)) and seen[(s, k)] == 1
            for s, k in zip(df["split"].astype(str), keys)]


def _range_facts(df: pd.DataFrame, styles: list[str | None]) -> None:
    """``label_in_range`` (:func:`calculators.ranges.label_problem`: the label is a possible answer of
    its calculator) and its split by status: ``verified_label_in_range`` (true for unverified rows)
    and ``unverified_label_in_range`` (true for verified rows), so that one can block and one warn;
    ``range_problem`` says what is wrong with a label out of range (its value against the range)."""
    notes = df["Patient Note"] if "Patient Note" in df.columns else pd.Series([None] * len(df), index=df.index)
    problems = [label_problem(c, a, str(t), st, n) for c, a, t, st, n in
                zip(df["Calculator ID"], df["Ground Truth Answer"].astype(str), df["Output Type"], styles, notes)]
    ok = [p is None for p in problems]
    unverified = (df["Label Status"].astype(str) == "unverified").tolist()
    df["range_problem"] = pd.array(problems, dtype="string")  # what a failed range fact observed
    df["label_in_range"] = ok
    df["verified_label_in_range"] = [o or u for o, u in zip(ok, unverified)]
    df["unverified_label_in_range"] = [o or not u for o, u in zip(ok, unverified)]


LEDGER_FACTS = ("uid_exists", "old_value_matches_base", "new_value_valid", "new_value_in_range", "old_value_fits",
                "one_accepted_per_row_release", "physician_blinded", "decided_at_valid", "derivation_holds")


def _absent(v: Any) -> bool:
    """A cell a flat records table leaves empty (the record has no such field)."""
    if isinstance(v, (list, dict)):
        return False
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _as_record(row: dict[str, Any]) -> dict[str, Any]:
    """A ``corrections`` config row (``inputs`` as JSON text, ``override_reason``) in the ledger's
    record shape, for the record rules."""
    out = dict(row)
    if isinstance(out.get("inputs"), str):
        try:
            out["inputs"] = json.loads(out["inputs"])
        except json.JSONDecodeError:
            pass  # left as text: the rules report it
    if "override_reason" in out:
        out["override"] = {"reason": out.pop("override_reason")}
    return out


def _record_facts(df: pd.DataFrame, up: pd.DataFrame, keys: list[tuple[str, int]],
                  frozen: Mapping[str, Any] | None = None) -> None:
    """The value rules of :mod:`ledger.rules` per record, split into named facts (a published record's
    inputs held to the verdicts its release published, ``frozen``)."""
    otypes = up["Output Type"].astype(str).to_dict()
    calc = up["Calculator ID"].to_dict() if "Calculator ID" in up.columns else {}
    notes = up["Patient Note"].to_dict() if "Patient Note" in up.columns else {}
    styles = {k: label_style(v, otypes[k]) for k, v in up["Ground Truth Answer"].astype(str).items()}
    if "entities" in up.columns:
        ents = up["entities"].to_dict()
    else:  # a release's `original` config: the upstream literal
        ents = {k: entities_or_empty(v) for k, v in up.get("Relevant Entities", pd.Series(dtype=object)).to_dict().items()}
    valid, in_range, old_fits, holds = [], [], [], []
    for k, rec in zip(keys, row_dicts(df)):
        if k not in otypes:
            valid.append(False)
            in_range.append(False)
            old_fits.append(False)
            holds.append(False)
            continue
        found = dict(rules.value_problems(rec, calculator_id=calc.get(k), output_type=otypes[k], style=styles[k], note=notes.get(k))) \
            if k in calc else {}
        new = rec.get("new_value")
        fits = new is not None and str(new).strip() != "" and fit_problem(parse_answer(str(new), otypes[k]), otypes[k], styles[k]) is None
        valid.append(fits)
        in_range.append(fits and "new_value" not in found)
        old_fits.append("old_value" not in found)
        present = _as_record({f: v for f, v in rec.items() if not _absent(v)})  # the fields the record has
        holds.append(k in calc and not rules.derivation_problems(
            present, calculator_id=calc[k], output_type=otypes[k], style=styles[k], note=notes.get(k), entities=ents.get(k),
            frozen=(frozen or {}).get(str(rec.get("release")))))
    df["new_value_valid"], df["new_value_in_range"], df["old_value_fits"] = valid, in_range, old_fits
    df["derivation_holds"] = holds
    df["physician_blinded"] = [rules.blinded_problem(r) is None for r in row_dicts(df)]
    df["decided_at_valid"] = [rules.decided_at_problem(v) is None for v in df["decided_at"]] if "decided_at" in df else False


def ledger_view(records: pd.DataFrame, upstream: pd.DataFrame, upto: str | None = None,
                frozen: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Ledger records with the facts of :data:`LEDGER_FACTS` (the rules of :mod:`ledger.rules`; ``frozen``:
    per published release, the input verdicts it published, which hold its records).

    Accepted records are replayed in release order (then decision date, then ledger order, as
    ``apply`` does) over the upstream labels; a record's base is the label its row had at that point
    (the previous release's label); of two accepted records of one row and release the later is
    the offending one.
    """
    df = records.copy().reset_index(drop=True)
    if df.empty:
        for col in LEDGER_FACTS:
            df[col] = pd.Series(dtype=bool)
        return df
    up = upstream.set_index(["split", "uid"])
    labels = cast("dict[tuple[str, int], str]", up["Ground Truth Answer"].astype(str).to_dict())  # (split, uid) index
    otypes = cast("dict[tuple[str, int], str]", up["Output Type"].astype(str).to_dict())  # (split, uid) index
    keys = [(str(s), int(u)) if pd.notna(u) else (str(s), -1) for s, u in zip(df["split"], df["uid"])]
    df["uid_exists"] = [k in labels for k in keys]
    _record_facts(df, up, keys, frozen)
    release = df.get("release", pd.Series([UNRELEASED] * len(df))).fillna(UNRELEASED).astype(str)
    matches = [True] * len(df)
    once = [True] * len(df)
    decided = df["decided_at"] if "decided_at" in df.columns else pd.Series([None] * len(df))
    order = sorted((i for i in range(len(df)) if df.at[i, "decision"] in APPLIED),
                   key=lambda i: rules.accepted_order(_safe_release_key(release[i]), decided[i], i))
    entries = ((i, keys[i], release[i], df.at[i, "old_value"], replayed_value(df.loc[i])) for i in order)
    base: list[str | None] = [None] * len(df)
    for step in replay(entries, dict(labels), otypes):
        matches[step.pos] = step.matches_base
        once[step.pos] = step.first_in_release
        base[step.pos] = step.base
    df["base_label"] = pd.array(base, dtype="string")  # the row's label before the record (accepted ones)
    df["old_value_matches_base"] = matches
    df["one_accepted_per_row_release"] = once
    return df


def _safe_release_key(release: str) -> tuple:
    try:
        return _release_key(release)
    except ValueError:
        return (2, ())


# --- QC gates --------------------------------------------------------------------------------

_ACRONYM = re.compile(r"\b[A-Za-z]*[A-Z][A-Za-z0-9₂]*(?:[-–][A-Za-z0-9]+)*\b")
_STOP = {"Score", "Index", "Criteria", "Calculator", "Equation", "Equations", "Rule", "Risk", "Rate", "For", "The",
         "Estimated", "Calculated", "Correction", "Count", "Major", "Hard", "Body", "Ideal", "Target", "Adjusted",
         "Free", "Serum", "Sodium", "Calcium", "Albumin", "Corrected", "Mean", "Maintenance", "Fluids", "Creatinine",
         "Clearance", "Delta", "Gap", "Ratio", "Anion", "Fractional", "Excretion", "Steroid", "Conversion", "Morphine",
         "Milligram", "Equivalents", "Modified", "Sequential", "Organ", "Failure", "Assessment", "Bleeding",
         "Pneumonia", "Severity", "Revised", "Cardiac", "Pre-Operative", "Venous", "Thromboembolism", "Surface",
         "Area", "Weight", "Date", "Due", "Conception", "Gestational", "Age", "Cirrhosis", "Mortality", "Liver",
         "Fibrosis", "Glomerular", "Filtration", "Hypoalbuminemia", "Hyperglycemia", "Strep", "Pharyngitis",
         "Pulmonary", "Embolism", "Stroke", "Atrial", "Fibrillation", "Events", "Insulin", "Resistance",
         "Homeostatic", "Model", "Deficit", "Osmolality", "Water", "Coronary", "Heart", "Disease", "Mass",
         "Calculations", "Arterial", "Pressure", "Coma", "CAP", "OPTN", "UNOS", "Comorbidity", "DVT", "GFR"}


@lru_cache(maxsize=None)
def calculator_aliases(name: str) -> tuple[str, ...]:
    """Names a note would use for this calculator: acronyms and eponyms in its name."""
    words = set()
    for m in _ACRONYM.finditer(name.replace("'", "")):
        w = m.group(0)
        if w in _STOP or len(w) < 3 or w.lower() in ("for", "and", "the"):
            continue
        words.add(w)
    if "Glasgow Coma" in name:
        words.add("GCS")
    if "Charlson" in name:
        words.add("CCI")
    if "Revised Cardiac Risk Index" in name:
        words.add("RCRI")
    return tuple(sorted(words, key=len, reverse=True))


def answer_leak_text(name: str, note: str, question: str, answer: str) -> str | None:
    """The words of the note or question that state this calculator's answer, or ``None``."""
    a = str(answer).strip()
    if not a or a == "N/A" or "weeks" in a:
        return None
    aliases = calculator_aliases(name)
    if not aliases:
        return None
    alias = "|".join(re.escape(x).replace(r"\-", r"[\s-]?").replace(r"\ ", r"\s?") for x in aliases)
    number = re.escape(a)
    pat = re.compile(
        rf"(?:{alias})[^.\n]{{0,30}}?\b(?:of|was|is|=|:|were|totaled|totalled|scored)\s*{number}(?![\d.]|\s*(?:mg|mmol|%|/))",
        re.IGNORECASE)
    m = pat.search(f"{note}\n{question}")
    return " ".join(m.group(0).split()) if m else None


def _shingles(text: str, k: int = 5) -> set[int]:
    words = re.findall(r"\w+", text.lower())
    return {hash(" ".join(words[i:i + k])) for i in range(max(1, len(words) - k + 1))}


def near_duplicates(df: pd.DataFrame, threshold: float) -> list[int | None]:
    """For each row, the uid of an earlier row with the same split and calculator whose note has a
    word-5-gram Jaccard similarity >= ``threshold`` (``None`` if there is none)."""
    out: list[int | None] = [None] * len(df)
    pos = {idx: i for i, idx in enumerate(df.index)}
    for _, g in df.groupby(["split", "Calculator ID"], sort=False):
        sh = [(idx, int(u), _shingles(str(n))) for idx, u, n in zip(g.index, g["uid"], g["Patient Note"])]
        for j in range(len(sh)):
            b = sh[j][2]
            if not b:
                continue
            for i in range(j):
                a = sh[i][2]
                if not a:
                    continue
                common = len(a & b)  # |a | b| = |a| + |b| - |a & b|: the same ratio, no union set built
                if common / (len(a) + len(b) - common) >= threshold:
                    out[pos[sh[j][0]]] = sh[i][1]
                    break
    return out


def qc_view(instances: pd.DataFrame, near_dup_threshold: float) -> pd.DataFrame:
    df = instances.copy()
    leaks = [answer_leak_text(n, note, q, a) for n, note, q, a in
             zip(df["Calculator Name"], df["Patient Note"], df["Question"], df["Ground Truth Answer"])]
    df["answer_leak_text"] = pd.array(leaks, dtype="string")
    df["no_answer_leak"] = [x is None for x in leaks]
    dup = near_duplicates(df, near_dup_threshold)
    df["near_duplicate_of"] = pd.array(dup, dtype="Int64")
    df["not_near_duplicate"] = [d is None for d in dup]
    return df


def calculator_counts(instances: pd.DataFrame, expected: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rows with a gradable label (not N/A) per split and calculator: every calculator of
    ``instances`` and every one of ``expected`` (``split``, ``Calculator ID``, ``Calculator Name``:
    those of the previous release, or of upstream), which has 0 rows when ``instances`` lost it."""
    keys = ["split", "Calculator ID"]
    inst = instances.assign(**{"Calculator ID": pd.to_numeric(instances["Calculator ID"]).astype("int64")})
    gradable = inst[~inst["Ground Truth Answer"].astype(str).str.upper().eq("N/A")]
    counts = gradable.groupby(keys).size()
    names = inst.groupby(keys)["Calculator Name"].first() if "Calculator Name" in inst.columns else None
    full = inst.groupby(keys).size().rename("all").to_frame()
    if expected is not None and len(expected):
        exp = expected.assign(**{"Calculator ID": pd.to_numeric(expected["Calculator ID"]).astype("int64")})
        exp = exp.drop_duplicates(keys).set_index(keys)
        full = full.reindex(full.index.union(exp.index)).fillna(0).astype({"all": "int64"})
        names = exp["Calculator Name"] if names is None else names.combine_first(exp["Calculator Name"])
    full["gradable_rows"] = counts.reindex(full.index).fillna(0).astype(int)
    if names is not None:
        full["Calculator Name"] = names.reindex(full.index).astype("string")
    return full.reset_index()


__all__ = ["instance_view", "ledger_view", "qc_view", "calculator_counts", "answer_leak_text",
           "calculator_aliases", "near_duplicates", "answer_facts", "labels_agree"]
