"""Contract views of what a built release's rows and metadata say (beside the file views of
:mod:`medcalc_maintained.contracts.release_views`):

``column_types``   every (config, column) of the release's files: ``declared_type_ok`` (integer keys such as
                   ``Row Number`` and ``Calculator ID`` are ``int64``, flags ``bool``, the rest text)
``mini_rows``      every row of ``mini`` or chosen by the mini rule from ``default``:
                   ``selected_by_rule``, ``matches_default``, ``in_rule_order`` (the row is at the
                   position the rule's order gives it: interleaved by calculator from 2.2.0 on)
``explanations``   every row of ``full``: ``source_known``, ``source_fits_label`` and
                   ``explanation_fits_source`` (a derivation states a result that grades correct against
                   the row's label and, on a changed row, not against the old label)
``derivations``    every verified row of ``full`` of a release from 2.1.0 on: ``derivation_recorded`` (its
                   ``Derivation`` document is there), ``label_reproduces_definition`` (the document's definition
                   applied to the row's ``Relevant Entities`` patched by its inputs, whose evidence quotes the
                   note, grades the label correct; an N/A states why) and ``derived`` (not an override or
                   unexplained: listed as a warning)
``proposals``      every row of ``full`` of a release from 2.1.0 on, once per field (``Proposed Answer``,
                   ``Proposal``): ``well_formed`` (text; the proposal a JSON document of error findings and a
                   derivation or ``null``), ``only_unverified`` (a verified row has neither) and
                   ``value_derives`` (the recorded derivation, its quotes the note's text, gives its value
                   and the ``Proposed Answer``)
``card_features``  every config: ``features_match_files`` (the card's ``dataset_info`` features and row
                   counts are the files' columns, types and rows)
``croissant``      every data file and config, the feed ``releases.json``, and the document itself:
                   ``described`` (croissant.json lists the file with its sha256, the config's fields with
                   their types, the RAI fields)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from medcalc_maintained.core.answers import is_correct
from medcalc_maintained.core.labels import ERROR_STATUSES
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.core.versions import ReleaseRules
from medcalc_maintained.release.layout import card_front_matter, config_of


def cell_text(v: Any) -> str | None:
    """A release cell as text, ``None`` when missing (None, NA or NaN)."""
    return None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v)


def declared_type(column: str) -> str:
    from medcalc_maintained.release.tables import BOOL_COLUMNS, INT_COLUMNS, NULLABLE_INT_COLUMNS

    return "int64" if column in INT_COLUMNS | NULLABLE_INT_COLUMNS else "bool" if column in BOOL_COLUMNS else "string"


def column_types_view(columns: dict[str, dict[str, str]]) -> pd.DataFrame:
    rows = [{"config": c, "column": col, "declared_type_ok": t == declared_type(col)}
            for c, cols in sorted(columns.items()) for col, t in cols.items()]
    return pd.DataFrame(rows, columns=["config", "column", "declared_type_ok"])


def mini_rows_view(default: pd.DataFrame, mini_rows: pd.DataFrame, per_calculator: Any,
                   version: Any = None) -> pd.DataFrame:
    """The ``mini`` rows against the mini rule applied to ``default`` (split by split), in the
    rule's order for release ``version``."""
    from medcalc_maintained.release import mini
    from medcalc_maintained.release.tables import DEFAULT_COLUMNS

    cols = ["split", "uid", "selected_by_rule", "matches_default", "in_rule_order"]
    order: dict[str, list[int]] = {}
    if not default.empty and isinstance(per_calculator, int) and per_calculator > 0:
        for s, part in default.groupby(default["split"].astype(str)):
            sel = mini.select(part.reset_index(drop=True), s, per_calculator, str(version))
            order[s] = [int(u) for u in sel["Row Number"]]
    chosen = {(s, u) for s, uids in order.items() for u in uids}
    ref = {} if default.empty else {(str(s), int(u)): r for s, u, r in
                                    zip(default["split"], default["uid"], row_dicts(default))}
    rows, seen = [], set()
    position: dict[str, int] = {}
    for r in ([] if mini_rows.empty else row_dicts(mini_rows)):
        key = (str(r["split"]), int(r["uid"]))
        d = ref.get(key)
        same = d is not None and all(cell_text(r.get(c)) == cell_text(d.get(c)) for c in DEFAULT_COLUMNS)
        at = position.get(key[0], 0)
        position[key[0]] = at + 1
        want = order.get(key[0], [])
        rows.append({"split": key[0], "uid": key[1], "selected_by_rule": key in chosen and key not in seen,
                     "matches_default": same, "in_rule_order": at < len(want) and want[at] == key[1]})
        seen.add(key)
    rows += [{"split": k[0], "uid": k[1], "selected_by_rule": False, "matches_default": True, "in_rule_order": False}
             for k in sorted(chosen - seen)]
    return pd.DataFrame(rows, columns=cols)


def _explanation_ok(r: dict[str, Any], source: str, upstream_text: str | None) -> bool:
    from medcalc_maintained.release.explanations import stated_result

    text = cell_text(r.get("Ground Truth Explanation"))
    if source == "upstream":
        return text == upstream_text
    if source == "none":
        return text is None or not text.strip()
    if source == "ledger":
        return bool(text and text.strip()) and str(r.get("Ground Truth Answer")) == "N/A"
    result = stated_result(text)
    otype = str(r.get("Output Type"))
    if result is None or not is_correct(result, r.get("Ground Truth Answer"), r.get("Lower Limit"),
                                        r.get("Upper Limit"), otype):
        return False
    old = r.get("Original Ground Truth Answer")
    return cell_text(old) is None or not is_correct(result, old, None, None, otype) or \
        is_correct(old, r.get("Ground Truth Answer"), r.get("Lower Limit"), r.get("Upper Limit"), otype)


def explanations_view(full: pd.DataFrame, original: pd.DataFrame) -> pd.DataFrame:
    from medcalc_maintained.release.explanations import SOURCES
    from medcalc_maintained.release.tables import SOURCE_COLUMN

    cols = ["split", "uid", "source_known", "source_fits_label", "explanation_fits_source"]
    if full.empty:
        return pd.DataFrame(columns=cols)
    upstream = {} if original.empty else {(str(s), int(u)): cell_text(e) for s, u, e in
                                          zip(original["split"], original["uid"], original["Ground Truth Explanation"])}
    rows = []
    for r in row_dicts(full):
        key = (str(r["split"]), int(r["uid"]))
        source = str(r.get(SOURCE_COLUMN))
        changed = str(r.get("Label Status")) in ERROR_STATUSES
        rows.append({"split": key[0], "uid": key[1], "source_known": source in SOURCES,
                     "source_fits_label": (source != "upstream") if changed else (source == "upstream"),
                     "explanation_fits_source": _explanation_ok(r, source, upstream.get(key))})
    return pd.DataFrame(rows, columns=cols)


def _evidence_ok(r: dict[str, Any], inputs: Any, definition: Any) -> bool:
    """A recorded derivation's inputs are a list whose quotes are the row's note text at their
    offsets, and its definition is published for the row's calculator."""
    from medcalc_maintained.ledger import derivation as D

    cid = int(r["Calculator ID"])
    return isinstance(inputs, list) and not D.input_problems(cid, inputs, cell_text(r.get("Patient Note"))) \
        and not D.definition_problem(cid, definition)


def _derivation_ok(r: dict[str, Any], doc: dict[str, Any], release_rules: ReleaseRules = ReleaseRules(),
                   frozen: Mapping[str, Mapping[str, Any]] | None = None) -> bool:
    """The shipped ``Derivation`` re-derived from the row's own ``Relevant Entities`` and note: the
    quotes are the note's text, the definition is published, and the label's derivation status is
    the one shipped (an N/A with the shipped reason as its justification)."""
    from medcalc_maintained.core.rows import entities_or_empty
    from medcalc_maintained.ledger import derivation as D

    if doc.get("status") in D.UNDERIVED:
        return True  # listed by the `derived` fact, never derived
    inputs = doc.get("inputs") or []
    if not _evidence_ok(r, inputs, doc.get("definition")):
        return False
    again = D.label_derivation(int(r["Calculator ID"]), entities_or_empty(r.get("Relevant Entities")), r.get("Ground Truth Answer"),
                               r.get("Lower Limit"), r.get("Upper Limit"), str(r.get("Output Type")),
                               {"inputs": inputs, "definition": doc.get("definition"), "justification": doc.get("reason")},
                               note=cell_text(r.get("Patient Note")), rules=release_rules, frozen=frozen)
    return again.status == doc.get("status")


def _evidence_problem(r: dict[str, Any], doc: dict[str, Any], frozen: Mapping[str, Mapping[str, Any]] | None = None
                      ) -> str | None:
    """Why a derived row's recorded inputs are not evidence (the verifier run again on every input
    of the shipped ``Derivation``, never its stored verdicts): input, quote and rule; ``None`` when
    every input is accepted or the row does not derive from inputs."""
    from medcalc_maintained.calculators.evidence import describe
    from medcalc_maintained.ledger import derivation as D

    if doc.get("status") not in D.DERIVED:
        return None
    inputs = [i for i in doc.get("inputs") or [] if isinstance(i, dict)]
    note = cell_text(r.get("Patient Note"))
    verdicts = [(i, D.input_verdict(int(r["Calculator ID"]), i, note, frozen)) for i in inputs]  # as published, if it was
    return "; ".join(describe(i, v) for i, v in verdicts if not v.supports) or None


def derivations_view(full: pd.DataFrame, version: Any, frozen: Mapping[str, Mapping[str, Any]] | None = None
                     ) -> pd.DataFrame:
    """The ``derivations`` view; ``frozen``: the input verdicts the release published (``ledger/published.py``),
    which decide its recorded inputs instead of today's verifier."""
    from medcalc_maintained.core.versions import rules
    from medcalc_maintained.ledger.derivation import DERIVED, parse_document
    from medcalc_maintained.release.tables import DERIVATION, DERIVATION_STATUS

    cols = ["split", "uid", "derivation_recorded", "label_reproduces_definition", "derived", "evidence_supports_inputs",
            "evidence_problem"]
    if full.empty or not rules(version).derivations:
        return pd.DataFrame(columns=cols)
    release_rules = rules(version)
    gated = release_rules.evidence_gate
    rows = []
    for r in row_dicts(full):
        if str(r.get("Label Status")) == "unverified":
            continue
        parsed = parse_document(cell_text(r.get(DERIVATION)))
        recorded = parsed is not None and parsed.get("status") == cell_text(r.get(DERIVATION_STATUS))
        doc = parsed or {}
        problem = _evidence_problem(r, doc, frozen) if gated and recorded else None
        rows.append({"split": str(r["split"]), "uid": int(r["uid"]), "derivation_recorded": recorded,
                     "label_reproduces_definition": recorded and _derivation_ok(r, doc, release_rules, frozen),
                     "derived": recorded and doc.get("status") in DERIVED,
                     "evidence_supports_inputs": problem is None, "evidence_problem": problem})
    return pd.DataFrame(rows, columns=cols)


def _proposal_doc(text: str | None) -> tuple[bool, dict[str, Any] | None]:
    """(well formed, document) of a ``Proposal`` cell: ``null``, or ``{derivation, findings}`` with at
    least one ``error`` finding and a derivation that is ``null`` or has definition, inputs and value."""
    if text is None:
        return True, None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return False, None
    if not isinstance(doc, dict) or set(doc) != {"derivation", "findings"}:
        return False, None
    found, d = doc["findings"], doc["derivation"]
    ok = isinstance(found, list) and bool(found) and all(
        isinstance(f, dict) and f.get("severity") == "error" and f.get("check") and isinstance(f.get("evidence"), dict)
        for f in found)
    ok = ok and (d is None or (isinstance(d, dict) and {"definition", "inputs", "value"} <= set(d)
                               and isinstance(d["inputs"], list)))
    return ok, doc if ok else None


def _proposal_derives(r: dict[str, Any], doc: dict[str, Any] | None) -> bool:
    """The proposal's derivation applied again to the row's ``Relevant Entities`` and note gives the
    value it records, and ``Proposed Answer`` is that value (empty without one)."""
    from medcalc_maintained.core.rows import entities_or_empty
    from medcalc_maintained.ledger import derivation as D

    d = None if doc is None else doc["derivation"]
    if d is None:
        return True
    if not _evidence_ok(r, d["inputs"], d["definition"]):
        return False
    again = D.derive(int(r["Calculator ID"]), entities_or_empty(r.get("Relevant Entities")), d["inputs"], d["definition"])
    return again.value == d["value"]


def proposals_view(full: pd.DataFrame, version: Any) -> pd.DataFrame:
    from medcalc_maintained.core.labels import UNVERIFIED
    from medcalc_maintained.core.versions import rules
    from medcalc_maintained.release.proposals import PROPOSAL, PROPOSED_ANSWER

    cols = ["split", "uid", "field", "well_formed", "only_unverified", "value_derives"]
    if full.empty or not rules(version).derivations:
        return pd.DataFrame(columns=cols)
    rows = []
    for r in row_dicts(full):
        key = {"split": str(r["split"]), "uid": int(r["uid"])}
        verified = str(r.get("Label Status")) != UNVERIFIED
        answer, text = r.get(PROPOSED_ANSWER), cell_text(r.get(PROPOSAL))
        ok, doc = _proposal_doc(text)
        d = None if doc is None else doc["derivation"]
        want = "" if d is None else (d["value"] or "")
        rows.append({**key, "field": PROPOSED_ANSWER, "well_formed": isinstance(answer, str),
                     "only_unverified": not verified or answer == "", "value_derives": cell_text(answer) == want})
        rows.append({**key, "field": PROPOSAL, "well_formed": ok, "only_unverified": not verified or text is None,
                     "value_derives": ok and _proposal_derives(r, doc)})
    return pd.DataFrame(rows, columns=cols)


def card_features_view(root: Path, columns: dict[str, dict[str, str]], rows: Any) -> pd.DataFrame:
    from medcalc_maintained.release.card import FEATURE_DTYPES

    front = card_front_matter(root) or {}
    info = {str(d.get("config_name")): d for d in front.get("dataset_info") or [] if isinstance(d, dict)}
    out = []
    for config in sorted(set(info) | set(columns)):
        d, have = info.get(config) or {}, columns.get(config)
        feats = [(f.get("name"), f.get("dtype")) for f in d.get("features") or [] if isinstance(f, dict)]
        splits = {s.get("name"): s.get("num_examples") for s in d.get("splits") or [] if isinstance(s, dict)}
        want_rows = (rows or {}).get(config) if isinstance(rows, dict) else None
        ok = have is not None and feats == [(c, FEATURE_DTYPES.get(t, t)) for c, t in have.items()] \
            and splits == (want_rows or {})
        out.append({"config": config, "features_match_files": bool(ok)})
    return pd.DataFrame(out, columns=["config", "features_match_files"])


def croissant_view(root: Path, listed: dict[str, str], columns: dict[str, dict[str, str]]) -> pd.DataFrame:
    from medcalc_maintained.release.croissant import DATA_TYPES, FILE, RAI
    from medcalc_maintained.release.feed import FEED_FILE

    try:
        doc = json.loads((root / FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        doc = {}
    doc = doc if isinstance(doc, dict) else {}
    files = {d.get("contentUrl"): d.get("sha256") for d in doc.get("distribution") or [] if isinstance(d, dict)}
    sets = {d.get("@id"): d for d in doc.get("recordSet") or [] if isinstance(d, dict)}
    rows = [{"item": FILE, "described": bool(doc) and all(doc.get(k) for k in RAI)}]
    for rel in sorted(p for p in listed if config_of(p) or p == FEED_FILE):
        rows.append({"item": rel, "described": files.get(rel) == listed[rel]})
    for config, cols in sorted(columns.items()):
        fields = [(f.get("source", {}).get("extract", {}).get("column"), f.get("dataType"))
                  for f in (sets.get(config) or {}).get("field") or [] if isinstance(f, dict)]
        rows.append({"item": f"recordSet {config}",
                     "described": fields == [(c, DATA_TYPES.get(t, "sc:Text")) for c, t in cols.items()]})
    return pd.DataFrame(rows, columns=["item", "described"])
