"""The offline defaults: ``audit --backend rules`` and ``relabel --backend replay`` (the published
consensus, or a file of recorded replies), run through the CLI.

The end-to-end tests of this subject; the fast ones are in tests/verifiers/test_llm_offline.py."""

from __future__ import annotations

from tests.verifiers.test_llm_offline import cli


def _bytes(directory, names):
    return {n: (directory / n).read_bytes() for n in names}


def test_two_offline_runs_write_identical_files(project, tmp_path):
    """Same inputs, same bytes: no clock, no cache state in verdicts/flags/labels/votes/run.json/metrics.json.
    The first run goes through the CLI, the second through the stage's ``run(project, ...)``."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import audit, relabel

    inst = project.instances_path
    for stage, mod, names in (("audit", audit, ["verdicts.parquet", "flags.parquet", "run.json", "metrics.json"]),
                              ("relabel", relabel, ["labels.parquet", "votes.parquet", "run.json", "metrics.json"])):
        first, second = tmp_path / f"{stage}-1", tmp_path / f"{stage}-2"
        r = cli(stage, "--instances", str(inst), "--out", str(first))
        assert r.exit_code == 0, r.output
        result = mod.run(Project.load(project.root), instances=inst, out=second)
        assert [p.name for p in result.written] == names
        assert _bytes(first, names) == _bytes(second, names), stage
