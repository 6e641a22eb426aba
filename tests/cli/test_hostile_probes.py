"""Nothing a user types deletes their work, hangs, ships wrong data or ends in a traceback (issue 37):
one test per probe of the issue. `--force` replaces only what the command wrote before; masking is
linear in the text; drafts and tampered releases are refused by their content; duplicate JSON keys,
packet and input bombs are refused in one line; `repair-lock` checks the lock as DVC does; a draft
never goes into the pipeline's release. The tests that run the CLI in a new process measure CPU time
and peak memory (test_review_bounded.run_cli) and are in tests/e2e/cli/test_hostile_probes.py."""

from __future__ import annotations

import hashlib
import json
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.redact import redact
from medcalc_maintained.grading.predictions import read_predictions
from medcalc_maintained.harnesses.lm_eval_task import write_task_dir
from tests.review.test_review_bounded import rezip
from tests.scoring.test_evaluate import ORIGINAL, PREDICTIONS, frame, write_jsonl
from tests.support.ledger_support import minimal_project
from tests.support.paths import ROOT

runner = CliRunner()


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def one_line(code: int, out: str, *, exit_code: int = 2) -> str:
    assert code == exit_code and "Traceback" not in out, out
    assert len([line for line in out.splitlines() if line.strip()]) == 1, out
    return " ".join(out.split())


# -- data lost: --force replaces only what the command wrote ------------------------------------------

def a_user_directory(path: Path) -> Path:
    """A directory `evaluate` and `harness lm-eval` never wrote: plain files (as `expectations/`, a
    prompts folder or a thesis) and a sub-directory (as `.git`, `src`, `.dvc`)."""
    (path / "objects").mkdir(parents=True)
    (path / "thesis.tex").write_text("\\chapter{Work of a year}\n")
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "objects" / "pack").write_bytes(b"\0" * 64)
    return path


@pytest.fixture
def eval_project(tmp_path) -> Path:
    root = tmp_path / "p"
    (root / "data" / "corrections").mkdir(parents=True)
    (root / "params.yaml").write_text("apply:\n  ledger: [data/corrections]\n  out: data/maintained\n")
    frame(ORIGINAL).to_parquet(root / "labels.parquet")
    write_jsonl(root / "preds.jsonl", PREDICTIONS)
    return root


def run_evaluate(root: Path, out: Path, force: bool):
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import evaluate_example as stage

    return stage.evaluate(Project.load(root), root / "preds.jsonl", [str(root / "labels.parquet")], out_dir=out,
                          n_boot=100, force=force)


@pytest.mark.parametrize("name", [".git", "src", "thesis"])
def test_evaluate_force_never_replaces_a_directory_it_did_not_write(eval_project, name):
    target = a_user_directory(eval_project / name)
    before = snapshot(target)
    with pytest.raises(DataError, match=rf"--out .*{name}: is not an earlier output of `evaluate` \(holds 3 entries"):
        run_evaluate(eval_project, target, force=True)
    assert snapshot(target) == before


def test_evaluate_force_replaces_its_own_earlier_output(eval_project):
    out = eval_project / "runs" / "one"
    run_evaluate(eval_project, out, force=False)
    first = sorted(p.name for p in out.iterdir())
    with pytest.raises(DataError, match="exists and is not empty; choose another --out or pass --force"):
        run_evaluate(eval_project, out, force=False)
    run_evaluate(eval_project, out, force=True)  # an earlier evaluation: replaced
    assert sorted(p.name for p in out.iterdir()) == first
    (out / "notes.md").write_text("mine\n")  # one file of the user's beside it: refused from now on
    with pytest.raises(DataError, match=r"'notes.md'"):
        run_evaluate(eval_project, out, force=True)
    assert (out / "notes.md").read_text() == "mine\n"


def test_check_replace_refuses_links_files_and_incomplete_sets(tmp_path):
    from medcalc_maintained.core.out_dirs import check_replace

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.json").write_text("{}")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    opts = dict(command="x", writes={"a.json", "b.csv"}, required={"a.json", "b.csv"}, force=True)
    with pytest.raises(DataError, match="symbolic link"):
        check_replace(tmp_path / "link", **opts)
    with pytest.raises(DataError, match="lacks b.csv"):
        check_replace(tmp_path / "real", **opts)
    (tmp_path / "real" / "b.csv").symlink_to(tmp_path / "real" / "a.json")  # a link in place of a file
    with pytest.raises(DataError, match="'b.csv'"):
        check_replace(tmp_path / "real", **opts)
    check_replace(tmp_path / "missing", **opts)
    (tmp_path / "empty").mkdir()
    check_replace(tmp_path / "empty", **opts)


@pytest.mark.parametrize("files", [
    {"qc_gates.json": "{}", "release_layout.json": "{}"},  # expectations/: 7 GX suites
    {"audit_system.txt": "prompt", "audit_user.txt": "prompt"},  # src/medcalc_maintained/prompts/
    {"thesis.tex": "\\chapter{x}"},  # a user's folder outside any project
])
def test_lm_eval_force_never_empties_a_directory_of_plain_files(tmp_path, files):
    target = tmp_path / "folder"
    target.mkdir()
    for name, text in files.items():
        (target / name).write_text(text)
    before = snapshot(target)
    with pytest.raises(DataError, match=r"is not an earlier output of `harness lm-eval`"):
        write_task_dir(target, "v2.0", force=True)
    assert snapshot(target) == before


def test_review_export_force_replaces_only_a_packet(tmp_path, real_instances):
    from medcalc_maintained.project import Project
    from medcalc_maintained.review import workflow

    root = minimal_project(tmp_path / "p", real_instances)
    (root / "params.yaml").write_text(yaml.safe_dump({
        "apply": {"ledger": ["data/corrections"], "out": "data/maintained"},
        "triage": {"reviewers": [{"id": "md-im-1", "role": "physician", "specialty": "internal medicine"},
                                 {"id": "md-im-2", "role": "physician", "specialty": "internal medicine"}]}}))
    queue = root / "queue.csv"
    queue.write_text("split,uid,in_budget,reviewer,rank\ntest,41,True,md-im-1,1\n")
    mine = root / "budget.xlsx"
    with zipfile.ZipFile(mine, "w") as zf:  # a workbook of the user's, not a packet
        zf.writestr("xl/workbook.xml", "<workbook/>")
    before = mine.read_bytes()
    project = Project.load(root)
    with pytest.raises(DataError, match="is not a review packet .*--force replaces only a packet"):
        workflow.export(project, "md-im-1", mine, queue=queue, force=True)
    assert mine.read_bytes() == before
    packet = root / "packet.xlsx"
    workflow.export(project, "md-im-1", packet, queue=queue)
    workflow.export(project, "md-im-1", packet, queue=queue, force=True)  # its own packet: replaced
    assert len(list((root / "data" / "review" / "exports").glob("*.json"))) == 1  # the same rows: one record


def test_release_build_replaces_only_an_earlier_build(tmp_path):
    from medcalc_maintained.release.build import _check_replaceable

    rel = fake_release(tmp_path / "release")
    _check_replaceable(rel)  # an earlier build: replaced as a whole
    (rel / "thesis.tex").write_text("\\chapter{x}\n")  # a folder that merely holds a manifest.json
    with pytest.raises(DataError, match="holds 'thesis.tex', which no release build writes; refusing to replace it"):
        _check_replaceable(rel)


# -- hangs: masking in linear time ----------------------------------------------------------------------

@pytest.mark.parametrize("unit", [
    "x", "a:", "a://", "a://b:", "hf_", "authorization: ", "?key=", "AIza", " ", "ab+.-", "https://u:",
])
def test_redact_is_linear_on_a_megabyte_of_hostile_text(unit):
    text = unit * (1_000_000 // len(unit))
    t0 = time.process_time()
    redact(text)
    assert time.process_time() - t0 < 0.5  # before: 'x' * 100_000 took 34 s (quadratic)


def test_redact_still_masks_after_a_long_run():
    tail = " https://user:pa55word@host/x x-goog-api-key: AIzaOTHER123 ?key=abc"
    masked = redact("x" * 300_000 + tail)
    assert masked.endswith(" https://user:***@host/x x-goog-api-key: *** ?key=***"), masked[-80:]


def test_a_megabyte_uid_string_is_refused_in_a_short_line(tmp_path):
    preds = write_jsonl(tmp_path / "p.jsonl", ['{"uid": "' + "7" * 1_000_000 + '", "output": "1"}'])
    t0 = time.process_time()
    with pytest.raises(DataError) as info:
        read_predictions(preds, max_line_bytes=1 << 21)
    from medcalc_maintained.cli.common import redact as cli_redact  # the CLI masks every error it prints

    message = cli_redact(info.value)
    assert time.process_time() - t0 < 2, time.process_time() - t0
    assert "line 1: uid must be a JSON integer, got '777" in message and len(message) < 300, message[:400]


def test_apply_with_a_100_kb_unit_in_a_record_is_quick(tmp_path, real_instances):
    root = minimal_project(tmp_path / "p", real_instances)
    rec = {"id": "C-9001", "uid": 41, "split": "test", "old_value": "x", "new_value": "N/A", "decision": "accepted",
           "label_status": "abstain", "error_type": "unanswerable", "rationale": "r", "evidence": ["e"],
           "source": "contributor", "reviewer": {"id": "a", "role": "contributor", "specialty": None},
           "blinded": False, "decided_at": "2026-01-02",
           "inputs": [{"name": "x", "value": 1, "unit": "u" * 100_000,
                       "evidence": {"start": 0, "end": 1, "text": "x"}}]}
    (root / "data" / "corrections" / "big.yaml").write_text(yaml.safe_dump({"corrections": [rec]}))
    t0 = time.process_time()
    r = runner.invoke(app, ["apply"], env={"MEDCALC_ROOT": str(root)})
    assert time.process_time() - t0 < 10, time.process_time() - t0  # before: 49.9 s
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output[-2000:]


# -- wrong data: drafts, tampered releases, duplicate keys -------------------------------------------

def fake_release(path: Path, *, draft_changelog: bool = False) -> Path:
    """A release directory as `release build` writes it (two configs, a changelog, a manifest with
    the sha256 of every file), its labels those of test_evaluate's ORIGINAL set."""
    from medcalc_maintained.release.deferred import DRAFT_HEADING

    df = frame(ORIGINAL).rename(columns={"uid": "Row Number"})
    for cfg in ("default", "full"):
        (path / "data" / cfg).mkdir(parents=True)
        df.to_parquet(path / "data" / cfg / "test-00000-of-00001.parquet", index=False)
    head = f"# Changelog\n\n{DRAFT_HEADING}\n\nBuilt by `release build --draft`.\n\n" if draft_changelog else "# Changelog\n\n"
    (path / "CHANGELOG.md").write_text(head + "## 2.1.0\n\nChanges.\n")
    files = {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(path.rglob("*")) if p.is_file()}
    (path / "manifest.json").write_text(json.dumps({"version": "2.1.0", "kind": "minor", "date": "2026-01-01",
                                                    "files": files}))
    return path


def test_evaluate_against_a_tampered_release_is_refused(tmp_path):
    from medcalc_maintained.scoring.labels import resolve_against

    rel = fake_release(tmp_path / "release")
    assert len(resolve_against(None, [str(rel)])[0].labels) == len(ORIGINAL)  # untouched: read
    part = rel / "data" / "default" / "test-00000-of-00001.parquet"
    df = pd.read_parquet(part)
    df.loc[df["Row Number"] == 3, "Ground Truth Answer"] = "5"  # label 4 -> 5, manifest untouched
    df.to_parquet(part, index=False)
    with pytest.raises(DataError, match=r"does not match its manifest.json \(data/default/test-00000-of-00001.parquet: "
                                        r"sha256 differs from manifest.json\); evaluate --against reads only"):
        resolve_against(None, [str(rel)])


def test_a_draft_is_refused_by_its_changelog_whatever_its_manifest_says(tmp_path):
    from medcalc_maintained.release.publish import PublishRefused, preflight
    from medcalc_maintained.scoring.labels import resolve_against

    rel = fake_release(tmp_path / "draft", draft_changelog=True)  # `draft` and `draft_reasons` deleted
    assert "draft" not in json.loads((rel / "manifest.json").read_text())
    with pytest.raises(PublishRefused, match=r"is a draft of 2.1.0 .*its CHANGELOG.md holds 'Draft preview"):
        preflight(rel, "file:///tmp/never.git")
    with pytest.raises(DataError, match="is a draft of 2.1.0"):
        resolve_against(None, [str(rel)])
    preflight(fake_release(tmp_path / "release"), "file:///tmp/never.git")  # a release: passes


@pytest.mark.parametrize("line, key", [
    ('{"uid": 146, "output": "12", "output": "N/A"}', "'output'"),
    ('{"uid": 200, "uid": 201, "output": "3"}', "'uid'"),
    ('{"uid": 1, "output": "1", "meta": {"a": 1, "a": 2}}', "'a'"),
])
def test_duplicate_json_keys_are_refused_naming_the_line(tmp_path, line, key):
    preds = write_jsonl(tmp_path / "p.jsonl", ['{"uid": 1, "output": "2"}', line])
    with pytest.raises(DataError, match=rf"p.jsonl, line 2: duplicate key {key} in one JSON object"):
        read_predictions(preds)


# -- unbounded work: packet parts, --inputs files -------------------------------------------------------

@pytest.fixture
def packet_root(tmp_path, real_instances) -> Path:
    from tests.support.triage_support import packet_project

    return packet_project(tmp_path / "p", real_instances)


def shared_strings(n: int):
    """``n`` distinct shared strings (about 60 bytes each; they compress about 9:1, as the probe's
    109 MB table did into a 12 MB packet)."""
    def write(fh):
        fh.write(b'<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">')
        for i in range(n):
            fh.write(f"<si><t>an unreferenced shared string, number {i}</t></si>".encode())
        fh.write(b"</sst>")
    return write


def cell_formats(n: int, short: bool = False):
    """styles.xml with ``n`` distinct cell formats (``short``: a few bytes each)."""
    def write(fh):
        fh.write(b'<?xml version="1.0"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                 b'<fonts count="1"><font/></fonts><fills count="1"><fill/></fills><borders count="1"><border/></borders>'
                 + f'<cellXfs count="{n}">'.encode())
        for i in range(n):
            fh.write((f'<xf numFmtId="{i}"/>' if short else
                      f'<xf numFmtId="{i % 164}" fontId="{i}" fillId="0" borderId="0" xfId="{i % 7}"/>').encode())
        fh.write(b"</cellXfs></styleSheet>")
    return write


SST = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"


def bombed(src: Path, dst: Path, name: str, write) -> Path:
    """``src`` with member ``name`` written by ``write`` (replaced, or added with its content type,
    as openpyxl finds a shared-strings table: none of the packet's cells refers to it)."""
    with zipfile.ZipFile(src) as zf:
        if name in zf.namelist():
            return rezip(src, dst, name, write)
    tmp = rezip(src, dst.with_suffix(".tmp"), "[Content_Types].xml",
                lambda fh: fh.write(zipfile.ZipFile(src).read("[Content_Types].xml").replace(
                    b"</Types>", f'<Override PartName="/{name}" ContentType="{SST}"/></Types>'.encode())))
    with zipfile.ZipFile(tmp) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info, zin.read(info))
        with zout.open(name, "w", force_zip64=True) as fh:
            write(fh)
    tmp.unlink()
    return dst


@pytest.mark.parametrize("name, write, words", [
    ("xl/sharedStrings.xml", shared_strings(100_000), "over the 2097152-byte limit of the shared-strings table"),
    ("xl/styles.xml", cell_formats(100_000), "over the 1048576-byte limit of a part other than a sheet"),
    ("xl/styles.xml", cell_formats(25_000, short=True), "holds more than 20000 XML elements"),
])
def test_packet_parts_are_bounded_by_what_they_may_hold(packet_root, name, write, words):
    from medcalc_maintained.review.reader import read_packet

    filled = packet_root / "filled.xlsx"
    bomb = bombed(filled, packet_root / "bomb.xlsx", name, write)
    assert bomb.stat().st_size < 20 << 20
    t0 = time.process_time()
    with pytest.raises(DataError, match=words):
        read_packet(bomb, pd.read_parquet(packet_root / "data" / "interim" / "instances.parquet"),
                    exports=packet_root / "data" / "review" / "exports")
    assert time.process_time() - t0 < 2


def test_a_packet_with_a_240_character_name_imports_to_a_short_ledger_file(packet_root):
    long = packet_root / ("r" * 240 + ".xlsx")
    (packet_root / "filled.xlsx").rename(long)
    r = runner.invoke(app, ["review", "import", str(long), "--decided-at", "2026-02-02"],
                      env={"MEDCALC_ROOT": str(packet_root)})
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    written = [p.name for p in (packet_root / "data" / "corrections").iterdir()]
    assert written == ["review-" + "r" * 80 + ".yaml"], written


@pytest.fixture
def derive_project(tmp_path, real_instances) -> Path:
    return minimal_project(tmp_path / "p", real_instances)


@pytest.mark.parametrize("text, words", [
    ("inputs: [\n  - name: x\n", "malformed YAML at line"),
    ("inputs: []\ninputs: []\n", "duplicate key 'inputs'"),
    ("inputs:\n- name: Age\n  value: 40\n  evidence: 7\n", "field 'inputs.0.evidence': 7 is not of type 'object'"),
    ("inputs: [5, [1, 2]]\n", "field 'inputs.0': 5 is not of type 'object'"),
    ("- just a list\n", "expected a mapping with an 'inputs' list"),
    ("definition: 7\n", "field 'definition': 7 is not of type"),
    ("inputs: \"\\xff\\e\"\n", "field 'inputs'"),
])
def test_ledger_derive_refuses_a_malformed_inputs_file_in_one_line(derive_project, text, words):
    f = derive_project / "inputs.yaml"
    f.write_text(text)
    r = runner.invoke(app, ["ledger", "derive", "--uid", "41", "--inputs", str(f)],
                      env={"MEDCALC_ROOT": str(derive_project)})
    flat = one_line(r.exit_code, r.output)
    assert "inputs.yaml" in flat and words in flat, r.output


def test_ledger_derive_refuses_a_huge_inputs_file_unread(derive_project):
    f = derive_project / "huge.yaml"
    with f.open("wb") as fh:
        fh.truncate(1 << 30)  # 1 GiB (sparse): refused by its size
    t0 = time.process_time()
    r = runner.invoke(app, ["ledger", "derive", "--uid", "41", "--inputs", str(f)],
                      env={"MEDCALC_ROOT": str(derive_project)})
    flat = one_line(r.exit_code, r.output)
    assert "huge.yaml: inputs file: 1073741824 bytes, over the 1048576-byte limit; refused unread" in flat, flat
    assert time.process_time() - t0 < 2


# -- recovery: dvc.lock as DVC reads it; a draft never into the pipeline's release ---------------------

def test_a_lock_cut_inside_a_hash_line_is_not_valid():
    from medcalc_maintained.devtools.dvc_lock import lock_problem

    text = (ROOT / "dvc.lock").read_text(encoding="utf-8")
    assert lock_problem(text) is None
    start = text.index("hash: md5")
    bad = [k for k in range(10) if lock_problem(text[:start + k]) is None and text[:start + k].endswith(("hash:", "hash: "))]
    assert bad == []  # before: "hash:" and "hash: " (null hash) parsed as YAML and passed
    problem = lock_problem(text[:start + len("hash:")])
    assert problem is not None and "fails DVC's lock-file schema" in problem and "hash" in problem, problem


def test_a_draft_without_out_goes_to_build_draft_never_build_release(tmp_path, monkeypatch):
    from medcalc_maintained.project import Project
    from medcalc_maintained.release import build as B
    from medcalc_maintained.stages import release as stage

    root = tmp_path / "p"
    (root / "data" / "corrections").mkdir(parents=True)
    (root / "params.yaml").write_text("apply:\n  ledger: [data/corrections]\n  out: data/maintained\n")
    project = Project.load(root)
    seen = []
    monkeypatch.setattr(stage, "build", lambda project, out, **kw: seen.append((out, kw["draft"])))
    stage.run(project, draft=True)
    stage.run(project)
    assert seen == [(root / "build" / "draft", True), (root / "build" / "release", False)]
    for out in (project.release_build, project.release_build / "sub", root / "data"):
        with pytest.raises(DataError, match="a draft goes elsewhere"):
            B.build(project, out, draft=True)
    assert not (root / "build").exists()
