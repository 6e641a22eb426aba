"""The prompts: relabel never sees the original label or its derivation; audit sees all of it;
templates are versioned files identified by their sha256; settings are checked."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.verifiers import prompts
from medcalc_maintained.verifiers import settings as settings_mod
from tests.support.paths import ROOT

PROMPT_DIR = Path(prompts.__file__).resolve().parents[1] / "prompts"

SENTINELS = {"Ground Truth Answer": "SENTINEL-ANSWER-41f9", "Lower Limit": "SENTINEL-LOWER-41f9",
             "Upper Limit": "SENTINEL-UPPER-41f9", "Relevant Entities": "SENTINEL-ENTITIES-41f9",
             "Ground Truth Explanation": "SENTINEL-EXPLANATION-41f9"}


def _row(**over):
    row = {"Calculator Name": "CURB-65", "Question": "What is the patient's CURB-65 score?",
           "Patient Note": "A 70-year-old woman with confusion.", **SENTINELS}
    row.update(over)
    return row


def test_relabel_prompt_has_only_note_and_question():
    system, user = prompts.relabel(_row())
    for s in SENTINELS.values():
        assert s not in system and s not in user
    assert "A 70-year-old woman with confusion." in user and "CURB-65 score?" in user
    # changing the label, entities or explanation does not change the prompt at all
    other = prompts.relabel(_row(**{k: v + "-changed" for k, v in SENTINELS.items()}))
    assert other == (system, user)


def test_relabel_prompt_on_the_real_split_leaks_nothing(instances):
    checked_answers = 0
    systems = set()
    for row in instances.to_dict("records"):
        system, user = prompts.relabel(row)
        systems.add(system)
        text = system + "\n" + user
        assert row["Ground Truth Explanation"].strip() not in text
        assert row["Relevant Entities"].strip() not in text
        answer = str(row["Ground Truth Answer"]).strip()
        # the answer text may occur in the note by chance (e.g. "2"); check it where it cannot
        if answer not in row["Patient Note"] and answer not in row["Question"]:
            assert answer not in user, (row["uid"], answer)
            checked_answers += 1
    assert checked_answers > 500
    # the system prompt is one fixed text for every row: it cannot carry a row's label
    assert systems == {prompts.template("relabel_system").strip()}


def test_audit_prompt_shows_label_and_derivation():
    system, user = prompts.audit(_row())
    for s in SENTINELS.values():
        assert s in user
    assert "<verdict>yes</verdict>" in system and "<verdict>no</verdict>" in system


def test_template_hashes_are_the_files_sha256():
    hashes = prompts.template_hashes()
    assert set(hashes) == {"audit_system", "audit_user", "relabel_system", "relabel_user"}
    for name, h in hashes.items():
        assert h == hashlib.sha256((PROMPT_DIR / f"{name}.txt").read_bytes()).hexdigest()
    assert set(prompts.template_hashes("relabel")) == {"relabel_system", "relabel_user"}


def _load(tmp_path, params: dict):
    import yaml

    from medcalc_maintained.project import Project

    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    project = Project.load(tmp_path)
    return settings_mod.load(project, "audit"), settings_mod.load(project, "relabel")


def test_settings_reject_typos_and_wrong_types(tmp_path):
    with pytest.raises(DataError, match=r"params\.yaml, field 'audit\.engine\.concurency'"):
        _load(tmp_path, {"audit": {"engine": {"concurency": 4}}})
    with pytest.raises(DataError, match=r"audit\.prices\.input_per_1m.*expected float"):
        _load(tmp_path, {"audit": {"prices": {"input_per_1m": "cheap"}}})
    with pytest.raises(DataError, match=r"params\.yaml, field 'relabel\.backend'.*unknown backend"):
        _load(tmp_path, {"relabel": {"backend": "gpt"}})
    with pytest.raises(DataError, match=r"field 'relabel\.threshold'"):
        _load(tmp_path, {"relabel": {"runs": 3, "threshold": 4}})
    with pytest.raises(DataError, match=r"field 'audit\.gemini\.tools'.*unknown tool"):
        _load(tmp_path, {"audit": {"gemini": {"tools": ["web_browse"]}}})
    with pytest.raises(DataError, match=r"field 'audit\.engine\.concurrency'.*at least 1"):
        _load(tmp_path, {"audit": {"engine": {"concurrency": 0}}})
    with pytest.raises(DataError, match=r"field 'relabel\.prices\.batch_discount'"):
        _load(tmp_path, {"relabel": {"prices": {"batch_discount": 1.0}}})
    a, r = _load(tmp_path, {"relabel": {"engine": {"rate_limit_rpm": 60}}})
    assert r.engine.rate_limit_rpm == 60 and r.gemini.tools == ["google_search", "code_execution"]
    assert a.gemini.tools == ["google_search"]


def test_params_yaml_sections_load():
    from medcalc_maintained.project import Project

    project = Project.load(ROOT)
    a, r = settings_mod.load(project, "audit"), settings_mod.load(project, "relabel")
    assert (a.backend, a.runs, a.threshold, a.out) == ("rules", 5, 4, "data/audit_llm")
    assert (r.backend, r.runs, r.threshold, r.out) == ("replay", 5, 4, "data/relabel")
    assert "code_execution" in r.gemini.tools and "code_execution" not in a.gemini.tools
