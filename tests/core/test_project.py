"""Project: one loader for parameters (defaults, then params.yaml) and every stage's paths."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.project import Project
from tests.support.paths import ROOT


def write_params(root: Path, doc: dict) -> None:
    (root / "params.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")


def test_without_params_yaml_the_defaults_apply(tmp_path):
    p = Project.load(tmp_path)
    assert p.param("triage.budget") == 50
    assert p.instances == tmp_path / "data" / "interim" / "instances.parquet"
    assert p.maintained == tmp_path / "data" / "maintained" / "instances.parquet"


def test_the_shipped_params_yaml_loads():
    p = Project.load(ROOT)
    assert p.param("ingest.max_quarantine") == 0
    assert p.ledger_paths == [ROOT / "data" / "campaign" / "audit-2025.yaml", ROOT / "data" / "harmonize" / "policy-2.1.0.yaml",
                              ROOT / "data" / "harmonize" / "evidence-2.2.0.yaml", ROOT / "data" / "corrections"]


def test_a_leaf_of_params_yaml_wins_and_its_siblings_keep_their_defaults(tmp_path):
    write_params(tmp_path, {"triage": {"budget": 7, "weights": {"recompute": {"not_computable": 2}}}})
    p = Project.load(tmp_path)
    assert p.param("triage.budget") == 7
    assert p.param("triage.weights.recompute") == {"aggregation_mismatch": 0.5, "implausible_input": 0.5,
                                                   "not_computable": 2.0}
    assert p.param("triage.weights.relabel_flag") == 3.0


def test_paths_follow_params(tmp_path):
    write_params(tmp_path, {"ingest": {"out": "elsewhere/in"}, "apply": {"out": "/abs/maintained"},
                            "release": {"tables": "rt"}})
    p = Project.load(tmp_path)
    assert p.instances == tmp_path / "elsewhere" / "in" / "instances.parquet"
    assert p.quarantine == tmp_path / "elsewhere" / "in" / "quarantine.csv"
    assert p.maintained == Path("/abs/maintained/instances.parquet")
    assert p.release_table("2.0.0", "full") == tmp_path / "rt" / "2.0.0" / "full.parquet"


@pytest.mark.parametrize("doc, field, words", [
    ({"triage": {"budgt": 3}}, "triage.budgt", "unknown parameter"),
    ({"nonsense": 1}, "nonsense", "unknown parameter"),
    ({"triage": {"budget": "many"}}, "triage.budget", "expected int"),
    ({"triage": {"weights": {"audit_flag": "high"}}}, "triage.weights.audit_flag", "expected float"),
    ({"audit": {"engine": {"concurrency": True}}}, "audit.engine.concurrency", "expected int"),
    ({"apply": {"ledger": "data/corrections"}}, "apply.ledger", "expected list"),
])
def test_bad_params_name_file_and_field(tmp_path, doc, field, words):
    write_params(tmp_path, doc)
    with pytest.raises(DataError) as exc:
        Project.load(tmp_path)
    assert exc.value.path == str(tmp_path / "params.yaml")
    assert exc.value.field == field
    assert words in str(exc.value)


def test_open_mappings_take_new_keys(tmp_path):
    write_params(tmp_path, {"upstream": {"splits": {"dev": {"path": "d.csv", "required": False}}},
                            "triage": {"specialty_by_category": {"new-category": "surgery"}}})
    p = Project.load(tmp_path)
    assert ("dev", tmp_path / "d.csv", False) in p.upstream_sources()
    assert p.param("triage.specialty_by_category")["new-category"] == "surgery"


def test_unknown_parameter_lookup_is_an_error(tmp_path):
    with pytest.raises(DataError, match="no such parameter"):
        Project.load(tmp_path).param("triage.nope")


def test_malformed_params_yaml(tmp_path):
    (tmp_path / "params.yaml").write_text("triage: [unclosed\n", encoding="utf-8")
    with pytest.raises(DataError, match="malformed YAML"):
        Project.load(tmp_path)
