"""What of a ledger file the release tables are made of (``core/ledger_files.py: released_content``):
a record without a release (a pending proposal, a deferred draft) is in no release's tables, so it
never makes them stale (issue 48, item 5); every byte of a record of a release counts."""

from __future__ import annotations

import pytest

from medcalc_maintained.core.ledger_files import released_content
from medcalc_maintained.ledger.records import append, dump


def _record(rid: str, release: str | None = "2.2.0", **extra) -> dict:
    rec = {"id": rid, "uid": 3, "split": "test", "old_value": "9", "new_value": "25.017", "decision": "accepted",
           "label_status": "confirmed", "error_type": None, "rationale": "recomputed by hand"}
    if release is not None:
        rec["release"] = release
    return {**rec, **extra}


def _file(tmp_path, text: str, name: str = "ledger.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_of_released_records_counts_byte_for_byte(tmp_path):
    text = "# hand-written\n" + dump([_record("A"), _record("B", "2.0.0")], tmp_path, batch={"name": "x"})
    path = _file(tmp_path, text)
    assert released_content(path) == path.read_bytes()


def test_a_proposal_appended_by_propose_leaves_the_content_unchanged(tmp_path):
    text = "# hand-written\n" + dump([_record("A"), _record("B", "2.0.0")], tmp_path)
    before = released_content(_file(tmp_path, text))
    pending = {**_record("C-0001", None), "decision": "deferred"}
    grown = append(text, [pending], tmp_path / "ledger.yaml")  # what `propose` writes
    assert grown != text and released_content(_file(tmp_path, grown)) == before
    twice = append(grown, [{**pending, "id": "C-0002"}], tmp_path / "ledger.yaml")
    assert released_content(_file(tmp_path, twice)) == before


def test_a_file_of_proposals_only_or_without_records_is_left_out(tmp_path):
    proposals = dump([{**_record("C-0001", None), "decision": "deferred"}], tmp_path, header="Proposals.")
    assert released_content(_file(tmp_path, proposals)) is None
    for text in ("", "corrections: []\n", "corrections:\n", "batch: {name: x}\n"):
        assert released_content(_file(tmp_path, text)) is None, text


@pytest.mark.parametrize("release", ["unreleased", "", "null", "~"])
def test_every_way_of_saying_no_release_is_pending(tmp_path, release):
    text = ("corrections:\n  - id: A\n    release: 2.2.0\n  # about B\n"
            f"  - id: B\n    release: {release}\n    decision: deferred\n  - id: C\n    release: '2.2.0'\n")
    # B's lines go, from its "- " to the line before C (the comment above B is A's: it stays)
    assert released_content(_file(tmp_path, text)) == \
        b"corrections:\n  - id: A\n    release: 2.2.0\n  # about B\n  - id: C\n    release: '2.2.0'\n"


def test_a_change_to_a_released_record_counts(tmp_path):
    text = dump([_record("A"), {**_record("C-0001", None), "decision": "deferred"}], tmp_path)
    before = released_content(_file(tmp_path, text))
    changed = released_content(_file(tmp_path, text.replace("25.017", "25.02", 1)))
    released = released_content(_file(tmp_path, text.replace("decision: deferred", "decision: deferred\n  release: 2.3.0")))
    assert len({before, changed, released}) == 3  # a new value, a record given a release


@pytest.mark.parametrize("text", [
    "corrections: [{id: A, release: 2.2.0}, {id: B}]\n",        # a flow list: no line of its own per record
    "corrections:\n- id: A\n  release: 2.2.0\n- id: B\n  uid: [\n",  # not YAML
    "corrections:\r\n- id: A\r\n  release: 2.2.0\r\n- id: B\r\n",   # CR LF line ends
    "corrections:\n-\n  id: B\n- id: A\n  release: 2.2.0\n",     # a record below its "-"
])
def test_records_that_cannot_be_cut_out_line_by_line_count_whole(tmp_path, text):
    path = _file(tmp_path, text)
    assert released_content(path) == path.read_bytes()
