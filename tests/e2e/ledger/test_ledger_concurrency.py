"""One ledger writer at a time: many `propose` and `review import` processes launched together on a
small project holding the real v1.0 instances lose no record, reuse no id, and leave a ledger that
`apply` accepts.

The 50-pair runs start their 100 processes from a fork server that has imported the package once
(each process then runs the command line as ``python -m medcalc_maintained.cli`` would, and exits with
its code), so that a run costs the commands' work rather than 100 interpreter start-ups; one test
launches real ``python -m medcalc_maintained.cli`` subprocesses in pairs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml
from typer.testing import CliRunner

from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from medcalc_maintained.review import packet as pkt
from tests.support import forking
from tests.support.paths import ROOT
from tests.support.triage_support import REVIEWER, fill

SRC = ROOT / "src"
PAIRS = 50


def small_project(root: Path, instances: pd.DataFrame) -> Path:
    """Instances, an empty hand-written ledger directory, params naming two reviewers, and the
    export records of the packets made by :func:`packets` (when made)."""
    (root / "data" / "interim").mkdir(parents=True)
    instances.to_parquet(root / "data" / "interim" / "instances.parquet", index=False)
    (root / "data" / "corrections").mkdir(parents=True)
    reviewers = [{"id": "md-im-1", "role": "physician", "specialty": "internal medicine"},
                 {"id": "md-im-2", "role": "physician", "specialty": "internal medicine"}]
    (root / "params.yaml").write_text(yaml.safe_dump({
        "apply": {"ledger": ["data/corrections"], "out": "data/maintained"},
        "triage": {"reviewers": reviewers, "adjudication": {"agree_with": [], "id_prefix": "review"}}}))
    if (root.parent / "exports").is_dir():
        shutil.copytree(root.parent / "exports", root / "data" / "review" / "exports")
    return root


def launch(root: Path, *args: str) -> subprocess.Popen:
    env = dict(os.environ, MEDCALC_ROOT=str(root), PYTHONPATH=str(SRC))
    return subprocess.Popen([sys.executable, "-m", "medcalc_maintained.cli", *args], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_all(jobs: list[tuple[Path, list[str]]]) -> list[tuple[int, str]]:
    """Every job in its own process, started in order, 16 at a time (the two of a pair together)."""
    with forking.context().Pool(processes=min(len(jobs), 16), maxtasksperchild=1) as pool:
        return pool.starmap(forking.cli_in_process, [(str(root), args) for root, args in jobs], chunksize=1)


def finish(procs: list[subprocess.Popen]) -> list[tuple[int, str]]:
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=900)
        out.append((p.returncode, stdout + stderr))
    return out


def records_of(root: Path) -> list[ledger.Record]:
    return ledger.load([root / "data" / "corrections"])


def applies(root: Path) -> None:
    r = CliRunner().invoke(app, ["apply"], env={"MEDCALC_ROOT": str(root)})
    assert r.exit_code == 0, r.output


def test_paired_concurrent_proposals_lose_no_record(tmp_path, real_instances):
    roots = [small_project(tmp_path / f"p{i}", real_instances) for i in range(PAIRS)]
    jobs = [(root, ["propose", "--uid", str(u), "--new-value", "N/A", "--error-type", "unanswerable", "--rationale",
                    f"uid {u}: the note lacks an input", "--date", "2026-03-02"]) for root in roots for u in (41, 146)]
    results = run_all(jobs)
    assert [code for code, _ in results] == [0] * 2 * PAIRS, [out for code, out in results if code][:3]
    for root in roots:
        recs = records_of(root)
        assert sorted(r["uid"] for r in recs) == [41, 146]  # no record lost
        assert sorted(r.id for r in recs) == ["C-0001", "C-0002"]  # no id used twice
        assert [p.name for p in (root / "data" / "corrections").glob("*.y*ml")] == ["2026-03-proposals.yaml"]
    applies(roots[0])


def test_proposals_from_real_subprocesses_lose_no_record(tmp_path, real_instances):
    root = small_project(tmp_path / "p", real_instances)
    uids = [41, 146, 928, 1029, 15, 1]
    results = finish([launch(root, "propose", "--uid", str(u), "--new-value", "N/A", "--error-type", "unanswerable",
                             "--rationale", "the note lacks an input", "--date", "2026-03-02") for u in uids])
    assert [code for code, _ in results] == [0] * len(uids), results
    recs = records_of(root)
    assert sorted(r["uid"] for r in recs) == sorted(uids)
    assert sorted(r.id for r in recs) == [f"C-{n:04d}" for n in range(1, len(uids) + 1)]
    applies(root)


ROWS = {"md-im-1": [("test", u) for u in (41, 146, 928)],
        "md-im-2": [("test", u) for u in (1029, 15, 1)]}  # two reviewers, distinct rows


def packets(tmp_path: Path, instances: pd.DataFrame) -> list[Path]:
    """Two reviewers' filled packets, both named packet.xlsx (in two folders); their export records
    in tmp_path/exports (copied into each project)."""
    out = []
    for who in ("md-im-1", "md-im-2"):
        reviewer = REVIEWER.__class__(who, "physician", "internal medicine")
        (tmp_path / who).mkdir()
        blank = pkt.export_packet(instances, ROWS[who], reviewer, tmp_path / who / "blank.xlsx",
                                  exports=tmp_path / "exports")
        answers = {pkt.row_id(s, u): {"answer": "N/A", "comment": f"{who}: the note lacks an input"}
                   for s, u in ROWS[who]}
        fill(blank, answers, tmp_path / who / "packet.xlsx")
        out.append(tmp_path / who / "packet.xlsx")
    return out


def test_paired_imports_of_same_named_packets_keep_both(tmp_path, real_instances):
    first, second = packets(tmp_path, real_instances)
    roots = [small_project(tmp_path / f"p{i}", real_instances) for i in range(PAIRS)]
    results = run_all([(root, ["review", "import", str(p), "--decided-at", "2026-02-02"])
                       for root in roots for p in (first, second)])
    for n, root in enumerate(roots):
        assert [code for code, _ in results[2 * n: 2 * n + 2]] == [0, 0], results[2 * n: 2 * n + 2]
        recs = records_of(root)
        assert sorted(r["reviewer"]["id"] for r in recs) == ["md-im-1"] * 3 + ["md-im-2"] * 3  # both packets kept
        assert len({r.id for r in recs}) == 6
        names = sorted(p.name for p in (root / "data" / "corrections").glob("*.yaml"))
        assert names == ["review-packet-2.yaml", "review-packet.yaml"]
    applies(roots[0])


def test_paired_imports_of_one_packet_under_two_outs_write_it_once(tmp_path, real_instances):
    first, _ = packets(tmp_path, real_instances)
    roots = [small_project(tmp_path / f"p{i}", real_instances) for i in range(PAIRS)]
    every = run_all([(root, ["review", "import", str(first), "--decided-at", "2026-02-02",
                             "--out", f"data/corrections/{name}.yaml"]) for root in roots for name in ("a", "b")])
    for n, root in enumerate(roots):
        results = every[2 * n: 2 * n + 2]
        codes = sorted(code for code, _ in results)
        assert codes == [0, 2], results  # one writes, the other is refused
        refused = next(out for code, out in results if code == 2)
        assert "was already imported for reviewer md-im-1" in " ".join(refused.split())
        recs = records_of(root)
        assert len(recs) == 3 and len({r.id for r in recs}) == 3  # no duplicate id
        assert len(list((root / "data" / "corrections").glob("*.yaml"))) == 1
    applies(roots[0])
