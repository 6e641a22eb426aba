"""The project: its root, its parameters and the path of every stage's inputs and outputs.

Every command and stage asks a :class:`Project` for its paths; no other module writes a
``data/...`` path. Parameters come from one loader: the built-in defaults (``defaults.yaml`` beside
this file) with the project's ``params.yaml`` laid over them leaf by leaf. A key that the defaults
do not know, or a value of another type than its default, is refused with the file and the field,
so a typo cannot pass silently.

>>> p = Project.load()                       # doctest: +SKIP
>>> p.instances                              # doctest: +SKIP
PosixPath('/path/to/project/data/interim/instances.parquet')
>>> p.param("triage.budget")                 # doctest: +SKIP
50
"""

from __future__ import annotations

import copy
import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.yaml_text import safe_load

PARAMS_FILE = "params.yaml"
DEFAULTS_FILE = Path(__file__).with_name("defaults.yaml")
# mappings whose keys are the user's own (split names, categories, gate names): not checked by key
OPEN_MAPPINGS = {"upstream.splits", "triage.specialty_by_category", "validate.gates"}


def find_root(start: Path | None = None) -> Path:
    """The directory holding ``params.yaml``: ``$MEDCALC_ROOT``, else the nearest ancestor of cwd
    that has one, else cwd."""
    env = os.environ.get("MEDCALC_ROOT")
    if env:
        return Path(env).resolve()
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / PARAMS_FILE).is_file():
            return d
    return here


@functools.lru_cache(maxsize=1)
def _defaults() -> dict[str, Any]:
    with DEFAULTS_FILE.open(encoding="utf-8") as fh:
        return safe_load(fh)


def defaults() -> dict[str, Any]:
    """A fresh copy of the built-in defaults."""
    return copy.deepcopy(_defaults())


def _same_type(default: Any, value: Any) -> bool:
    if default is None or value is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, (list, tuple)):
        return isinstance(value, list)
    return isinstance(value, type(default))


def merge(base: dict[str, Any], over: dict[str, Any], path: Path, where: str = "") -> dict[str, Any]:
    """``over`` laid onto ``base`` (a copy), checking keys and types against ``base``."""
    out = copy.deepcopy(base)
    if not isinstance(over, dict):
        raise DataError(path, f"must be a mapping, got {type(over).__name__}", field=where or None)
    for key, value in over.items():
        name = f"{where}.{key}" if where else str(key)
        if key not in base:
            if where in OPEN_MAPPINGS:
                out[key] = value
                continue
            known = ", ".join(sorted(map(str, base))) or "none"
            raise DataError(path, f"unknown parameter (known here: {known})", field=name)
        default = base[key]
        if isinstance(default, dict) and name not in OPEN_MAPPINGS:
            out[key] = merge(default, value or {}, path, name)
        elif isinstance(default, dict):
            if not isinstance(value, dict):
                raise DataError(path, f"expected a mapping, got {value!r}", field=name)
            out[key] = {**default, **value}
        elif not _same_type(default, value):
            raise DataError(path, f"expected {type(default).__name__}, got {value!r}", field=name)
        else:
            out[key] = float(value) if isinstance(default, float) and value is not None else value
    return out


def read_params(root: Path) -> dict[str, Any]:
    """Defaults with ``root/params.yaml`` laid over them (the defaults alone when there is none)."""
    path = root / PARAMS_FILE
    if not path.is_file():
        return defaults()
    try:
        given = copy.deepcopy(_parsed_params(path.read_text(encoding="utf-8")))
    except yaml.YAMLError as exc:
        raise DataError(path, f"malformed YAML: {exc}") from None
    return merge(_defaults(), given, path)


@functools.lru_cache(maxsize=8)
def _parsed_params(text: str) -> Any:
    """The YAML of a ``params.yaml``, parsed once per text (a project copied into a test's folder shares
    the parse; :func:`read_params` merges a copy of it)."""
    return safe_load(text) or {}


@dataclass(frozen=True)
class Project:
    """One checkout of the maintained benchmark: ``root`` and its checked ``params``."""

    root: Path
    params: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def load(cls, root: Path | str | None = None) -> "Project":
        r = Path(root).resolve() if root is not None else find_root()
        return cls(r, read_params(r))

    # ---------------------------------------------------------------- parameters

    def param(self, dotted: str) -> Any:
        """The value of one parameter by its dotted name, e.g. ``triage.budget``."""
        node: Any = self.params
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                raise DataError(self.params_file, "no such parameter", field=dotted)
            node = node[part]
        return copy.deepcopy(node)

    def section(self, name: str) -> dict[str, Any]:
        return dict(self.param(name) or {})

    @property
    def params_file(self) -> Path:
        return self.root / PARAMS_FILE

    def path(self, value: str | os.PathLike) -> Path:
        """``value`` as given when absolute, else relative to the project root."""
        p = Path(value)
        return p if p.is_absolute() else self.root / p

    def _dir(self, dotted: str) -> Path:
        return self.path(self.param(dotted))

    # ---------------------------------------------------------------- ingest

    def upstream_sources(self) -> list[tuple[str, Path, bool]]:
        """``(split, csv path, required)`` for every split of ``upstream.splits``."""
        splits = self.param("upstream.splits") or {}
        out = []
        for name, spec in splits.items():
            spec = spec if isinstance(spec, dict) else {"path": spec}
            if not spec.get("path"):
                raise DataError(self.params_file, "needs a path", field=f"upstream.splits.{name}.path")
            out.append((str(name), self.path(spec["path"]), bool(spec.get("required", True))))
        return out

    def upstream_file(self, name: str, split: str = "test") -> Path:
        """An upstream CSV: ``name`` itself when it is a file path, else the ``<split>_data.csv`` of
        upstream version ``name`` (``v1.0``, ``2024-06``) under ``upstream.dir``."""
        given = Path(name)
        if given.suffix == ".csv" or given.exists():
            return given if given.is_absolute() else Path.cwd() / given
        return self._dir("upstream.dir") / name / f"{split}_data.csv"

    @property
    def instances(self) -> Path:
        """The base upstream's instances (stage ``ingest``, ``upstream.splits``)."""
        return self._dir("ingest.out") / "instances.parquet"

    # ---------------------------------------------------------------- following upstream

    @property
    def upstream_version(self) -> str:
        """The upstream version the pipeline follows (``upstream.version``)."""
        return str(self.param("upstream.version"))

    @property
    def upstream_base(self) -> str:
        """The upstream version of ``upstream.splits``, the ledger and releases.yaml (``upstream.base``)."""
        return str(self.param("upstream.base"))

    @property
    def follows_base(self) -> bool:
        """Whether the followed upstream version is the base (then the rebase is a no-op)."""
        return self.upstream_version == self.upstream_base

    def version_sources(self, version: str) -> list[tuple[str, Path, bool]]:
        """``(split, csv path, required)`` of upstream ``version``: the splits of ``upstream.splits``
        for the base, else ``<upstream.dir>/<version>/<split>_data.csv`` for each of those splits."""
        if version == self.upstream_base:
            return self.upstream_sources()
        return [(s, self.upstream_file(version, s), req) for s, _, req in self.upstream_sources()]

    @property
    def upstream_diff_dir(self) -> Path:
        """Stage ``upstream-diff``: the row map of base -> followed version, per split."""
        return self._dir("upstream.diff_out")

    @property
    def rebase_dir(self) -> Path:
        """Stage ``ledger-rebase``: the followed version's instances and the rebased ledger."""
        return self._dir("upstream.rebase_out")

    @property
    def quarantine(self) -> Path:
        return self._dir("ingest.out") / "quarantine.csv"

    # ---------------------------------------------------------------- recompute

    @property
    def recompute(self) -> Path:
        return self._dir("recompute.out") / "recompute.parquet"

    @property
    def recompute_per_calculator(self) -> Path:
        return self._dir("recompute.out") / "recompute_per_calculator.csv"

    @property
    def findings(self) -> Path:
        """One row per finding of the zero-LLM checks (written by stage ``recompute``)."""
        return self._dir("recompute.out") / "findings.parquet"

    @property
    def policy_contradictions(self) -> Path:
        """Maintained labels that follow another definition than the declared policy (stage ``recompute-report``)."""
        return self._dir("recompute.out") / "policy_contradictions.csv"

    @property
    def recompute_summary(self) -> Path:
        return self._dir("recompute.out") / "recompute_summary.json"

    # ---------------------------------------------------------------- ledger

    @property
    def campaign_workbooks(self) -> tuple[Path, Path]:
        """(sampled, final): the published phase-3 workbooks."""
        return self._dir("campaign.sampled"), self._dir("campaign.final")

    @property
    def campaign_ledger(self) -> Path:
        return self._dir("campaign.out")

    @property
    def policy_ledger(self) -> Path:
        """The generated policy records of stage ``harmonize`` (``harmonize.out``)."""
        return self._dir("harmonize.out")

    @property
    def evidence_ledger(self) -> Path:
        """The generated records of stage ``harmonize`` under the evidence rule (``harmonize.evidence_out``)."""
        return self._dir("harmonize.evidence_out")

    @property
    def generated_ledgers(self) -> list[Path]:
        """Ledger files that stages generate (never written by hand, ``propose`` or ``review import``)."""
        return [self.campaign_ledger, self.policy_ledger, self.evidence_ledger]

    @property
    def campaign_unreadable(self) -> Path:
        return self.campaign_ledger.parent / "unreadable.csv"

    @property
    def ledger_paths(self) -> list[Path]:
        """Ledger sources in release order (files or directories of ``apply.ledger``)."""
        return [self.path(p) for p in self.param("apply.ledger") or []]

    @property
    def ledger_dir(self) -> Path:
        """The hand-written ledger directory: the last directory of ``apply.ledger``."""
        dirs = [p for p in self.ledger_paths if p.is_dir() or not p.suffix]
        if not dirs:
            raise DataError(self.params_file, "lists no directory for hand-written corrections", field="apply.ledger")
        return dirs[-1]

    @property
    def maintained(self) -> Path:
        return self._dir("apply.out") / "instances.parquet"

    # ---------------------------------------------------------------- reports and contracts

    @property
    def physician_agreement(self) -> Path:
        return self._dir("report.physician_agreement.out")

    @property
    def errata_dir(self) -> Path:
        """Stage ``errata``'s folder: ``errata.json``, ``errata.md`` (the release ships them)."""
        return self._dir("report.errata.out")

    @property
    def grader_check_report(self) -> Path:
        """Stage ``grader-check``'s ``report.json`` (read by the release card)."""
        return self._dir("report.grader_check.out") / "report.json"

    @property
    def data_docs(self) -> Path:
        return self._dir("validate.data_docs")

    @property
    def stage_times(self) -> Path:
        """The seconds of each stage of the last ``medcalc-maintained repro`` (``repro.times``; no DVC output)."""
        return self._dir("repro.times")

    # ---------------------------------------------------------------- audit and relabel (LLM)

    def llm_out(self, stage: str) -> Path:
        """Output directory of ``audit`` or ``relabel``."""
        return self._dir(f"{stage}.out")

    def llm_cache(self, stage: str) -> Path:
        return self._dir(f"{stage}.cache_dir")

    @property
    def audit_flags(self) -> Path:
        return self.llm_out("audit") / "flags.parquet"

    @property
    def relabel_labels(self) -> Path:
        return self.llm_out("relabel") / "labels.parquet"

    # ---------------------------------------------------------------- triage

    @property
    def triage_dir(self) -> Path:
        return self._dir("triage.out")

    @property
    def triage_queue(self) -> Path:
        return self.triage_dir / "queue.csv"

    @property
    def triage_simulate_dir(self) -> Path:
        """Outputs of stage ``triage-simulate`` (error model, replay study, unverified estimate)."""
        return self._dir("triage_simulate.out")

    @property
    def unverified_estimate(self) -> Path:
        """Per release: estimated share of wrong labels among unverified rows (read by the card)."""
        return self.triage_simulate_dir / "unverified_estimate.json"

    @property
    def review_exports(self) -> Path:
        """Export records of review packets (``review export`` writes, ``review import`` checks)."""
        return self._dir("review.exports")

    # ---------------------------------------------------------------- releases

    @property
    def releases_file(self) -> Path:
        return self._dir("release.releases")

    @property
    def published(self) -> Path:  # what each published release carried, frozen (ledger/published.py)
        return self._dir("release.published")

    @property
    def card_template(self) -> Path:
        return self._dir("release.card")

    @property
    def release_tables(self) -> Path:
        """Directory of every release's configs (stage ``release-tables``)."""
        return self._dir("release.tables")

    def release_table(self, version: str, config: str) -> Path:
        """One config of one release, all splits: ``<release.tables>/<version>/<config>.parquet``."""
        return self.release_tables / version / f"{config}.parquet"

    @property
    def mini_per_calculator(self) -> int:
        """Rows per calculator of the ``mini`` config (``release.mini_per_calculator``)."""
        n = self.param("release.mini_per_calculator")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise DataError(self.params_file, f"must be a positive integer, got {n!r}",
                            field="release.mini_per_calculator")
        return n

    @property
    def release_build(self) -> Path:
        return self._dir("release.out")

    @property
    def release_draft(self) -> Path:
        """Where ``release build --draft`` writes without ``--out``: never :attr:`release_build`."""
        return self._dir("release.draft_out")

    # ---------------------------------------------------------------- compare and evaluate

    @property
    def compare_dir(self) -> Path:
        return self._dir("compare.analyze.out")

    @property
    def arms_dir(self) -> Path:
        return self._dir("compare.export.out")

    @property
    def evaluation_dir(self) -> Path:
        return self._dir("compare.evaluate.out")

    @property
    def evaluation_runs(self) -> Path:
        """Where ``evaluate`` writes a new directory per run when no ``--out`` is given (no DVC output)."""
        return self._dir("compare.evaluate.runs")

    @property
    def example_predictions(self) -> Path:
        return self._dir("compare.evaluate.predictions")

    @property
    def steps_demo_outputs(self) -> Path:
        """A real model's step-wise outputs whose breakdown the card shows (``release.steps_demo``)."""
        return self._dir("release.steps_demo")

    @property
    def models_dir(self) -> Path:
        return self._dir("compare.train.output_dir")

    @property
    def expectations_dir(self) -> Path:
        return self.root / "expectations"

    # ---------------------------------------------------------------- output guard

    def known_paths(self) -> list[Path]:
        """Every input and output path the project names (each path property, the ledger sources,
        the upstream files and the parameters file), resolved."""
        found: list[Path] = [self.params_file, *self.ledger_paths, *(p for _, p, _ in self.upstream_sources())]
        for name in dir(type(self)):
            if name.startswith("_") or not isinstance(getattr(type(self), name), property):
                continue
            try:
                value = getattr(self, name)
            except Exception:  # a property whose parameters are not set in this project
                continue
            for v in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(v, Path):
                    found.append(v)
        return sorted({p.resolve() for p in found})

    def guard_out(self, out: str | os.PathLike | None, *, ledger_file: bool = False, option: str = "--out") -> Path | None:
        """``out`` (relative to the project root) when a command may write (or, with ``--force``,
        replace) it; a :class:`DataError` when it is the hand-written ledger directory, inside it
        (unless ``ledger_file``: a new ledger file directly in it) or above it, the project root,
        ``data/`` itself, or above any input or output the project knows (its own output
        directories, and the parent directory of each known file, are allowed as they are). The
        one guard of every command's ``--out``."""
        if out is None:
            return None
        target = self.path(out).resolve()
        where = f"{option} {out}"
        ledger = self.ledger_dir.resolve()
        if target == ledger or ledger.is_relative_to(target):
            raise DataError(where, f"would write over the hand-written ledger {ledger}; choose another directory")
        if target.is_relative_to(ledger) and not (ledger_file and target.parent == ledger and target.suffix in
                                                  (".yaml", ".yml")):
            raise DataError(where, f"is inside the hand-written ledger {ledger}; only ledger YAML files belong "
                                   "there (choose another directory)")
        root = self.root.resolve()
        if target == root or root.is_relative_to(target) or target == root / "data":
            raise DataError(where, f"is {'data/' if target == root / 'data' else 'the project root or above it'}; "
                                   "choose a directory of its own")
        known = self.known_paths()
        if target in known or any(target == p.parent for p in known if p.suffix):
            return target
        inside = next((p for p in known if p.is_relative_to(target) and p != target), None)
        if inside is not None:
            raise DataError(where, f"holds the pipeline path {inside.relative_to(root) if inside.is_relative_to(root) else inside}; "
                                   "choose a directory of its own")
        return target
