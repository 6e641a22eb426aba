"""``medcalc-maintained validate``: evaluate the data contracts in ``expectations/`` with Great
Expectations (GX Core 1.x).

A *target* is either the pipeline's default outputs (``data/maintained``, ``data/interim``, the
ledger files of ``params.apply.ledger``) or a built release directory (one with ``manifest.json``:
``data/full``, ``data/original``, ``data/corrections`` and the manifest's sha256 list). The target
is turned into contract views (:mod:`medcalc_maintained.contracts.views`), each suite is run against its
view through a GX checkpoint that also renders Data Docs, and every failed expectation is reported
with its suite, expectation, severity and the offending rows. A failure of a ``critical``
expectation (a *blocking* one) makes the validation fail; ``warning`` expectations are reported only.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from medcalc_maintained import ledger
from medcalc_maintained.contracts import release_pipeline, release_views
from medcalc_maintained.contracts import views as contracts
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.ledger.published import frozen_evidence, frozen_verdicts
from medcalc_maintained.project import Project
from medcalc_maintained.release import layout
from medcalc_maintained.release.tables import Tables

if TYPE_CHECKING:  # pragma: no cover
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

ID_COLUMNS = {
    "instances": ["split", "uid"],
    "qc": ["split", "uid"],
    "ledger": ["id"],
    "calculators": ["split", "Calculator ID", "Calculator Name"],
    **release_views.ID_COLUMNS,
    **release_pipeline.ID_COLUMNS,
}


@dataclass
class Failure:
    suite: str
    expectation: str
    description: str  # the rule the expectation states
    severity: str  # "blocking" | "warning"
    offending: list[str] = field(default_factory=list)
    observed: Any = None
    details: list[str] = field(default_factory=list)  # per offending row: its id and what was observed
    bounds: str = ""  # the limits of an aggregate expectation (e.g. "at most 0.2")

    def __str__(self) -> str:
        return f"{self.severity.upper():8s} {self.message()}"

    def message(self) -> str:
        """Suite, expectation and the violation (what :meth:`__str__` prints after the severity)."""
        head = f"{self.suite} / {self.expectation}: "
        if self.offending:
            shown = self.details or self.offending
            rows = "; ".join(shown[:15]) + (f"; ... ({len(shown) - 15} more)" if len(shown) > 15 else "")
            return f"{head}{len(self.offending)} row(s) break the rule ({self.description}): {rows}"
        if self.observed is not None:
            limit = f", the rule allows {self.bounds}" if self.bounds else ""
            return f"{head}observed {self.observed}{limit}; the rule: {self.description}"
        return f"{head}broken: {self.description}"


@dataclass
class ValidationReport:
    target: str
    failures: list[Failure]
    evaluated: int
    data_docs: Path | None = None

    @property
    def success(self) -> bool:
        return not any(f.severity == "blocking" for f in self.failures)

    @property
    def blocking(self) -> list[Failure]:
        return [f for f in self.failures if f.severity == "blocking"]

    @property
    def warnings(self) -> list[Failure]:
        return [f for f in self.failures if f.severity == "warning"]


@dataclass
class Target:
    name: str
    maintained: pd.DataFrame
    upstream: pd.DataFrame
    records: pd.DataFrame
    files: pd.DataFrame | None = None
    gates: dict[str, Any] | None = None
    # release-only views; a ReleaseData is a config validated by the instance suites
    release: dict[str, pd.DataFrame | release_views.ReleaseData] = field(default_factory=dict)
    # calculators that must keep their minimum (split, Calculator ID, Calculator Name): the previous
    # release's for a release, upstream's for the pipeline outputs
    calculators: pd.DataFrame | None = None
    # per published release, the input verdicts it published (ledger/published.py: frozen_verdicts)
    frozen: dict[str, Any] | None = None


# --- loading targets ---------------------------------------------------------------------------

def release_gates(release: Path, project: Project) -> dict[str, Any] | None:
    """Gate overrides recorded for this release's version in releases.yaml (if any)."""
    from medcalc_maintained.release.plan import release_gates as gates_of

    version = layout.manifest_or_empty(release).get("version")
    return gates_of(project.releases_file, version) if version else None


def load_target(target: Path | None, project: Project, expected: Tables | None = None) -> Target:
    """The views' inputs of ``target``; ``expected``: the tables the pipeline builds for a release
    target (default: stage ``release-tables``'s when current, :mod:`.release_pipeline`)."""
    if target is not None and (Path(target) / layout.MANIFEST).is_file():
        release = Path(target)
        data, views = release_views.release_views(release, frozen_verdicts(project.published),
                                                  frozen_evidence(project.published))
        files = views.pop("files")
        # the release's data is turned into an instance view by build_views
        release_only: dict[str, pd.DataFrame | release_views.ReleaseData] = {**views, "instances@default": data}
        release_only["pipeline"] = release_pipeline.pipeline_view(
            data.configs, expected if expected is not None else release_pipeline.stored_tables(project, data.manifest),
            data.manifest.get("version"))
        release_only["published"] = release_pipeline.published_view(data.config("corrections"), project)
        return Target(str(release), data.config("full"), data.config("original"), data.config("corrections"),
                      files, release_gates(release, project), release_only, previous_calculators(data.manifest),
                      frozen_verdicts(project.published))
    if target is not None and not Path(target).is_dir():
        raise DataError(target, "not a directory (expected a release directory with manifest.json, or nothing)")
    mpath, upath = project.maintained, project.instances  # the base upstream version apply used
    for p in (mpath, upath):
        if not p.is_file():
            raise DataError(p, "not found: run `dvc repro` first")
    maintained = pd.read_parquet(mpath)
    upstream = pd.read_parquet(upath)
    paths = project.ledger_paths
    records, problems = ledger.collect([p for p in paths if p.exists()])
    frame = ledger.records_frame(records)
    if problems and frame.empty:
        raise DataError(problems[0].path, problems[0].problem)
    return Target("pipeline outputs", maintained, upstream, frame, calculators=upstream,
                  release={"published": _history_view(records, project)}, frozen=frozen_verdicts(project.published))


def _history_view(records: list[Any], project: Project) -> pd.DataFrame:
    """The ledger's records with ``history_problem``: null, or why one rewrites a published release
    (:func:`medcalc_maintained.ledger.published.published_problems`)."""
    from medcalc_maintained.ledger.published import load_published, published_problems

    bad: dict[str, str] = {}
    for p in published_problems(records, load_published(project.published)):
        bad.setdefault(str(p.record), p.problem)
    ids = [r.id for r in records] + [i for i in bad if i not in {r.id for r in records}]
    return pd.DataFrame({"id": ids, "release": [str(r.get("release") or "") for r in records] + [""] * (len(ids) - len(records)),
                         "history_problem": [bad.get(i) for i in ids]})


def previous_calculators(manifest: dict[str, Any]) -> pd.DataFrame | None:
    """The calculators of the previous release per split, as the build recorded them in
    ``manifest.json`` (``previous.calculators``: split -> ["<id>:<name>", ...])."""
    prev = manifest.get("previous") if isinstance(manifest, dict) else None
    calcs = prev.get("calculators") if isinstance(prev, dict) else None
    if not isinstance(calcs, dict):
        return None
    rows = []
    for split, items in calcs.items():
        for item in items if isinstance(items, list) else []:
            cid, _, name = str(item).partition(":")
            if cid.strip().isdigit():
                rows.append({"split": str(split), "Calculator ID": int(cid), "Calculator Name": name})
    return pd.DataFrame(rows, columns=["split", "Calculator ID", "Calculator Name"])


# --- running suites ------------------------------------------------------------------------------

def load_suites(directory: Path) -> list[dict[str, Any]]:
    suites = []
    for p in sorted(Path(directory).glob("*.json")):
        try:
            suites.append(json.loads(p.read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            raise DataError(p, f"suite is not valid JSON: {exc}") from None
    if not suites:
        raise DataError(directory, "no expectation suites (*.json) found")
    return suites


def _gates(configured: dict[str, Any], overrides: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The QC gates of ``params.validate.gates`` with a release's overrides laid over them."""
    gates: dict[str, dict[str, Any]] = {}
    for source in (configured or {}, overrides or {}):
        for k, v in source.items():
            gates.setdefault(k, {}).update(v if isinstance(v, dict) else {"max": v})
    return gates


def build_views(t: Target, gates: dict[str, dict[str, Any]]) -> dict[str, pd.DataFrame]:
    from medcalc_maintained.calculators import load_all

    registry = {cid: c.name for cid, c in load_all().items()}
    views = {
        "instances": _view(contracts.instance_view, t.maintained, t.maintained, t.upstream, t.records, registry),
        "ledger": _view(contracts.ledger_view, t.records, t.records, t.upstream, None, t.frozen),
    }
    views["qc"] = _view(contracts.qc_view, views["instances"], views["instances"],
                        float(gates["near_duplicate"].get("threshold", 0.9)))
    views["calculators"] = _view(contracts.calculator_counts, t.maintained, t.maintained, t.calculators)
    if t.files is not None:
        views["files"] = t.files
    for name, view in t.release.items():
        if isinstance(view, release_views.ReleaseData):  # a config validated by the instance suites
            rows = release_views.default_instances(view)
            view = _view(contracts.instance_view, rows, rows, t.upstream, t.records, registry)
        views[name] = view
    return views


def _view(fn, rows: pd.DataFrame, *args: Any) -> pd.DataFrame:
    """``fn(*args)``, or ``rows`` themselves when they lack a column the view needs (a broken
    release config: the schema suite then names the missing column); empty for no rows."""
    if rows is None or rows.empty:
        return pd.DataFrame()
    try:
        return fn(*args)
    except (KeyError, TypeError, ValueError):
        return rows


def _row_id(item: Any, id_cols: list[str]) -> str:
    if not isinstance(item, dict):
        return str(item)
    return " ".join(f"{k}={item[k]}" if k != "uid" else f"uid {item[k]}" for k in id_cols if k in item)


def _uniq(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _offending(result: dict[str, Any], id_cols: list[str]) -> list[str]:
    return _uniq([_row_id(item, id_cols) for item in result.get("unexpected_index_list") or []])


def _shown(v: Any) -> str | None:
    """A cell's value as a failure prints it (``None`` for an empty cell)."""
    if v is None or (isinstance(v, float) and v != v) or v is pd.NA:
        return None
    text = " ".join(str(v).split())
    return repr(text[:120] + ("..." if len(text) > 120 else ""))


def _details(result: dict[str, Any], id_cols: list[str], column: str, observed: list[str]) -> list[str]:
    """Per offending row: its id and what it observed: the ``observed`` columns of the expectation
    (the inputs of a fact), else the tested column's own value."""
    index = result.get("unexpected_index_list") or []
    values = result.get("unexpected_list") or []
    out = []
    for n, item in enumerate(index):
        item = item if isinstance(item, dict) else {}
        if observed:
            pairs = [(c, _shown(item.get(c))) for c in observed]
            seen = ", ".join(f"{c} {v}" for c, v in pairs if v is not None) or "no value"
        else:
            seen = f"{column} {_shown(values[n]) if n < len(values) else _shown(item.get(column))}"
        out.append(f"{_row_id(item, id_cols) if item else str(index[n])}: {seen}")
    return _uniq(out)


def _bounds(kwargs: dict[str, Any], parameters: dict[str, Any]) -> str:
    """The limits of an aggregate expectation, its parameters resolved ("at most 0.2")."""
    def value(v: Any) -> Any:
        return parameters.get(v["$PARAMETER"]) if isinstance(v, dict) and "$PARAMETER" in v else v
    lo, hi = value(kwargs.get("min_value")), value(kwargs.get("max_value"))
    if lo is not None and hi is not None:
        return f"{lo} to {hi}"
    return f"at most {hi}" if hi is not None else (f"at least {lo}" if lo is not None else "")


def run(views: dict[str, pd.DataFrame], suites: list[dict[str, Any]], gates: dict[str, dict[str, Any]],
        docs_dir: Path | None) -> tuple[list[Failure], int]:
    """Evaluate every suite on its view with GX; returns the failures and the number of expectations run."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    if docs_dir is not None:
        ctx.add_data_docs_site(site_name="medcalc", site_config={
            "class_name": "SiteBuilder",
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(Path(docs_dir).resolve())},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        })
    source = ctx.data_sources.add_pandas("medcalc")
    parameters = {
        "max_abstain_rate": float(gates["max_abstain_rate"].get("max", 1.0)),
        "max_unverified_rate": float(gates["max_unverified_rate"].get("max", 1.0)),
        "min_per_calculator": int(gates["min_per_calculator"].get("min", 0)),
    }
    failures: list[Failure] = []
    evaluated = 0
    definitions: list[tuple[Any, str, pd.DataFrame]] = []
    shown: dict[str, list[str]] = {}  # view -> the columns its expectations observe
    for suite in suites:
        default_view = suite.get("meta", {}).get("view", "instances")
        by_view: dict[str, list[dict[str, Any]]] = {}
        for exp in suite["expectations"]:
            view = exp.get("meta", {}).get("view", default_view)
            exp = json.loads(json.dumps(exp))
            gate = exp.get("meta", {}).get("gate")
            blocking = gates.get(gate, {}).get("severity", "blocking") == "blocking" if gate else True
            exp["severity"] = "critical" if blocking else "warning"
            by_view.setdefault(view, []).append(exp)
            shown.setdefault(view, []).extend(c for c in exp.get("meta", {}).get("observed", []) if c not in shown[view])
        for view, exps in by_view.items():
            if view not in views or views[view].empty:
                continue
            name = suite["name"] if len(by_view) == 1 else f"{suite['name']}.{view}"
            gx_suite = ctx.suites.add(gx.ExpectationSuite(name=name, expectations=exps, meta=suite.get("meta", {})))
            asset = source.add_dataframe_asset(name=f"{name}-data")
            bd = asset.add_batch_definition_whole_dataframe(f"{name}-batch")
            vd = ctx.validation_definitions.add(gx.ValidationDefinition(name=f"{name}-validation", data=bd, suite=gx_suite))
            definitions.append((vd, view, views[view]))
    by_frame: dict[str, list[Any]] = {}
    for vd, view, _frame in definitions:  # one checkpoint per view: every suite on it in one run
        by_frame.setdefault(view, []).append(vd)
    for view, vds in by_frame.items():
        frame = views[view]
        id_cols = [c for c in ID_COLUMNS.get(view, []) if c in frame.columns]
        extra = [c for c in shown.get(view, []) if c in frame.columns and c not in id_cols]
        cp = ctx.checkpoints.add(gx.Checkpoint(
            name=f"{view}-checkpoint", validation_definitions=vds, actions=[],
            result_format={"result_format": "COMPLETE", "unexpected_index_column_names": id_cols + extra}))
        res = cp.run(batch_parameters={"dataframe": frame}, expectation_parameters=parameters)
        for vr in res.run_results.values():
            suite_name = vr.suite_name
            for r in vr.results:
                evaluated += 1
                if r.success:
                    continue
                cfg = cast("ExpectationConfiguration", r.expectation_config)  # set on every checkpoint result
                column = cfg.kwargs.get("column") or ",".join(cfg.kwargs.get("column_list", []))
                observed = [c for c in (cfg.meta or {}).get("observed", []) if c in frame.columns]
                failures.append(Failure(
                    suite=suite_name.split(".")[0],
                    expectation=f"{cfg.type}({column})",
                    description=(cfg.meta or {}).get("description", ""),
                    severity="blocking" if str(getattr(cfg, "severity", "critical")).lower().endswith("critical") else "warning",
                    offending=_offending(r.result or {}, id_cols),
                    observed=(r.result or {}).get("observed_value", "no such column" if cfg.type == "expect_column_to_exist" else None),
                    details=_details(r.result or {}, id_cols, column, observed),
                    bounds=_bounds(dict(cfg.kwargs), parameters),
                ))
    if docs_dir is not None:  # once, from every suite and result the checkpoints stored: an UpdateDataDocsAction
        ctx.build_data_docs(site_names=["medcalc"])  # per checkpoint rebuilt the index and assets ~25 times
    return failures, evaluated


def validate(target: Path | None = None, *, project: Project | None = None, suites_dir: Path | None = None,
             docs_dir: Path | None = None, gate_overrides: dict[str, Any] | None = None,
             expected: Tables | None = None) -> ValidationReport:
    """Validate ``target`` (``None`` = pipeline outputs) against every suite in ``expectations/``;
    ``expected``: the pipeline's tables of a release target (:func:`load_target`)."""
    project = project or Project.load()
    t = load_target(target, project, expected)
    gates = _gates(project.param("validate.gates"), gate_overrides if gate_overrides is not None else t.gates)
    suites = load_suites(suites_dir or project.expectations_dir)
    views = build_views(t, gates)
    suites += release_views.config_suites(suites, views)
    failures, n = run(views, suites, gates, docs_dir)
    return ValidationReport(t.name, failures, n, docs_dir)


def validate_release(release_dir: Path, **kw: Any) -> ValidationReport:
    """Validate a built release directory (the guard ``release publish`` uses)."""
    if not (Path(release_dir) / layout.MANIFEST).is_file():
        raise DataError(release_dir, "not a built release (no manifest.json)")
    return validate(Path(release_dir), **kw)
