"""Derivations: a verified label is its declared definition applied to recorded, evidenced inputs.

Real rows of the v1.0 test split and the imported audit campaign, and small records made here:
the reconstruction classes of known rows, a hand-made correction with inputs that reproduces its
label and a tampered one that breaks the ledger rules and contract naming row and input, the
refusal of a value the declared definition cannot give (GCS with a component not testable), and a
physician re-confirming a corrected label.

The end-to-end tests of this subject; the fast ones are in tests/ledger/test_derivations.py."""

from __future__ import annotations

import pytest
import yaml

from medcalc_maintained import ledger
from medcalc_maintained.ledger.apply import build
from medcalc_maintained.release.card import render_changelog
from medcalc_maintained.release.plan import Release
from tests.ledger import test_derivations as fast_tests
from tests.ledger.test_derivations import _row

# shared with the fast tests
root = fast_tests.root


def test_a_physician_agreeing_with_a_corrected_label_keeps_it_corrected(real_instances, real_recompute,
                                                                        campaign_ledger, tmp_path):
    """uid 47 (CHA2DS2-VASc) was corrected 2 -> 1 by the campaign; a blinded physician answers 1."""
    from medcalc_maintained.planning.triage import Reviewer
    from medcalc_maintained.review import adjudicate
    from medcalc_maintained.review import packet as pkt
    from tests.support.triage_support import fill

    before = build(real_instances, [campaign_ledger]).set_index("uid")
    assert before.loc[47, ["Ground Truth Answer", "Original Ground Truth Answer", "Label Status"]].tolist() == \
        ["1", "2", "corrected"]
    etype = before.loc[47, "Error Type"]
    assert etype
    md = Reviewer("md-im-1", "physician", "internal medicine")
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    packet = pkt.export_packet(real_instances, [("test", 47)], md, tmp_path / "packet.xlsx")
    fill(packet, {"test-00047": {"answer": 1, "comment": "No female point under the 2024 guideline."}}, packet)
    records, _ = adjudicate.import_packet(
        packet, instances=real_instances, ledger_paths=[campaign_ledger, corrections], relabel=None,
        recompute=real_recompute, reviewers=[md], adjudication=adjudicate.Adjudication((), "review"),
        out=corrections / "review.yaml", decided_at="2026-02-01")
    (rec,) = records
    assert (rec["old_value"], rec["new_value"], rec["label_status"], rec["error_type"]) == ("1", "1", "corrected", etype)
    after = build(real_instances, [campaign_ledger, corrections]).set_index("uid")
    assert after.loc[47, ["Ground Truth Answer", "Label Status", "Error Type", "Label Source"]].tolist() == \
        ["1", "corrected", etype, "physician"]
    frame = ledger.records_frame(ledger.load([corrections]))
    frame["Calculator Name"] = "CHA2DS2-VASc Score for Atrial Fibrillation Stroke Risk"
    frame["release"] = "2.1.0"
    text = render_changelog([Release("2.1.0", "2026-12-01", "minor", "test")], frame)
    assert "### Label changes (0)" in text and "### Re-confirmed (1)" in text
    assert "md-im-1 (physician, internal medicine)" in text and "confirms the upstream label" not in text


def test_review_import_refuses_a_gcs_the_declared_definition_cannot_give(real_instances, real_recompute,
                                                                          campaign_ledger, tmp_path):
    """uid 862: the eye response is not testable, so gcs-1974-not-testable-undefined gives no total;
    a physician's packet answer of 13 is refused with the row and the rule, and nothing is written."""
    from medcalc_maintained.planning.triage import Reviewer
    from medcalc_maintained.review import adjudicate
    from medcalc_maintained.review import packet as pkt
    from medcalc_maintained.review.layout import PacketError
    from tests.support.triage_support import fill

    md = Reviewer("md-em-1", "physician", "emergency medicine")
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    packet = pkt.export_packet(real_instances, [("test", 862)], md, tmp_path / "packet.xlsx")
    fill(packet, {"test-00862": {"answer": 13, "comment": "Eyes scored 1 as not testable."}}, packet)
    with pytest.raises(PacketError) as err:
        adjudicate.import_packet(
            packet, instances=real_instances, ledger_paths=[campaign_ledger, corrections], relabel=None,
            recompute=real_recompute, reviewers=[md], adjudication=adjudicate.Adjudication((), "review"),
            out=corrections / "review.yaml", decided_at="2026-02-01")
    text = str(err.value)
    assert "00862" in text and "gcs-1974-not-testable-undefined" in text and "not testable" in text
    assert list(corrections.iterdir()) == []


def _derive(root, *args: str):
    from typer.testing import CliRunner

    from medcalc_maintained.cli import app

    return CliRunner().invoke(app, ["ledger", "derive", *args], env={"MEDCALC_ROOT": str(root)})


# `ledger derive` four times over the whole project
def test_ledger_derive_shows_the_row_s_derivation_and_refuses_a_false_quote(project_root, real_instances, tmp_path):
    # uid 60: the campaign's search-found input (a thromboembolism history quoted from "thrombin time")
    # gives the corrected 6, but its quote does not state it: the label does not derive (issue 36)
    r = _derive(project_root, "--uid", "60")
    out = " ".join(r.output.split())
    assert r.exit_code == 1 and "Thromboembolism history" in out and "verifier: not-named" in out, r.output
    assert "label 6: unexplained" in out
    # uid 833: the search-found "currently under treatment for neoplasia" states the PSI criterion
    r = _derive(project_root, "--uid", "833")
    assert r.exit_code == 0 and "label 158: inputs-recorded" in r.output and "verifier: supports" in r.output, r.output
    # uid 997 under CDC-2016 factors gives the adjudicated 389, never v1.0's 290
    r = _derive(project_root, "--uid", "997", "--definition", "cdc_2016", "--label", "290")
    assert r.exit_code == 1 and "cdc_2016 gives 389" in r.output and "does NOT derive" in " ".join(r.output.split())
    assert _derive(project_root, "--uid", "997", "--definition", "cdc_2016", "--label", "389").exit_code == 0
    # an input whose quote is not the note's text at its offsets
    note = _row(real_instances, 593)["Patient Note"]
    bad = tmp_path / "inputs.yaml"
    bad.write_text(yaml.safe_dump({"inputs": [{"name": "White blood cell count", "value": 8300, "unit": "/µL",
                                               "evidence": {"start": 0, "end": 12, "text": "not the note"}}]}))
    assert note[:12] != "not the note"
    r = _derive(project_root, "--uid", "593", "--inputs", str(bad))
    assert r.exit_code == 1 and "evidence problem" in r.output
    r = _derive(project_root, "--uid", "99999")
    assert r.exit_code == 2 and "uid 99999 does not exist" in r.output
