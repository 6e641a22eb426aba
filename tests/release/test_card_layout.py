"""The card's two layouts (release/card_layout.py): blocks per layout, the leading order, errors."""

from pathlib import Path

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.release.card_layout import layout, select_blocks
from tests.support.paths import ROOT

T = Path("card.md")
BODY = """# Title

intro
<!-- if lead -->
<!-- lead order: B | A | C -->
contents: [C](#c)
<!-- end -->

## A

a text
<!-- if not lead -->
old line
<!-- end -->

## B

```bash
## not a heading inside a fence
```
b text

## C

c text
"""


def test_the_earlier_layout_keeps_its_lines_and_drops_the_leading_ones():
    got = layout(BODY, False, T)
    assert "old line" in got and "contents" not in got and "lead order" not in got and "<!--" not in got
    assert got.index("## A") < got.index("## B") < got.index("## C")


def test_a_leading_card_orders_its_sections_as_the_template_says():
    got = layout(BODY, True, T)
    assert "old line" not in got and "contents: [C](#c)" in got and "lead order" not in got
    assert got.index("## B") < got.index("## A") < got.index("## C")
    assert "## not a heading inside a fence\n```\nb text\n\n## A\n" in got  # fenced lines stay in their section
    assert got.endswith("c text\n") and "\n\n\n" not in got


@pytest.mark.parametrize("body, problem", [
    ("<!-- if lead -->\nx\n", "line 1: the block opened here has no <!-- end -->"),
    ("x\n<!-- end -->\n", "line 2: <!-- end --> without"),
    ("<!-- if lead -->\n<!-- if not lead -->\n", "line 2: <!-- if not lead --> inside the block opened on line 1"),
])
def test_unbalanced_blocks_name_the_template_and_line(body, problem):
    with pytest.raises(DataError) as e:
        select_blocks(body, True, T, first_line=1)
    assert str(e.value).startswith("card.md") and problem in str(e.value)


@pytest.mark.parametrize("order, problem", [
    ("B | A", "not named ['C']"),
    ("B | A | C | D", "not a section ['D']"),
    ("B | A | C | A", "named twice ['A']"),
])
def test_a_lead_order_must_name_every_section_once(order, problem):
    with pytest.raises(DataError, match=r"lead order must name every section once") as e:
        layout(BODY.replace("B | A | C", order), True, T)
    assert problem in str(e.value)


def test_a_leading_card_without_an_order_is_refused():
    with pytest.raises(DataError, match="exactly one"):
        layout(BODY.replace("<!-- lead order: B | A | C -->\n", ""), True, T)


def test_the_template_reads_as_its_published_cards_did_before_the_leading_layout(tmp_path):
    """The earlier layout of today's template is the template release 2.2.0 was built with, so its
    card and manifest rebuild byte for byte (the release tests check the build itself)."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "dataset_card.md").read_text(encoding="utf-8")
    earlier = select_blocks(text, False, T)
    assert "lead order" not in earlier and "What changed in this release" not in earlier
    assert "their commands are in the repository's README" in earlier
    lead = layout(text.split("\n---\n", 1)[1], True, T)
    assert lead.index("## How to evaluate") < lead.index("## What changed in this release") < lead.index("## Configs and splits")
    assert lead.rstrip().endswith("{{ corrections_fields_table }}") and "docs/harnesses.md" in lead


VISITOR = """# T
<!-- if visitor -->
plain words
<!-- end -->
shared
<!-- if lead and not visitor -->
lead only
<!-- end -->
<!-- if not visitor -->
before visitor
<!-- end -->
"""


@pytest.mark.parametrize("lead, visitor, shown", [
    (False, False, ["shared", "before visitor"]),
    (True, False, ["shared", "lead only", "before visitor"]),  # 2.3.0's card
    (True, True, ["plain words", "shared"]),                  # from 2.3.1
])
def test_visitor_blocks_and_joined_conditions(lead, visitor, shown):
    got = select_blocks(VISITOR, lead, T, visitor=visitor)
    assert [line for line in got.splitlines()[1:]] == shown


@pytest.mark.parametrize("marker", ["<!-- if lead or visitor -->", "<!-- if not -->", "<!-- if shiny -->"])
def test_an_unknown_condition_names_the_line(marker):
    with pytest.raises(DataError, match=r"line 2: .*a condition is \[not\] lead or \[not\] visitor or \[not\] graders"):
        select_blocks(f"x\n{marker}\ny\n<!-- end -->\n", True, T, first_line=1)


def test_a_graders_block_shows_only_from_the_release_that_reports_them():
    body = "x\n<!-- if graders -->\nrates\n<!-- end -->\n<!-- if lead and not graders -->\nno rates\n<!-- end -->\n"
    assert select_blocks(body, True, T, graders=True).splitlines() == ["x", "rates"]
    assert select_blocks(body, True, T, visitor=True).splitlines() == ["x", "no rates"]


def test_an_inputs_block_shows_only_from_the_release_that_ships_the_config():
    body = "x\n<!-- if inputs -->\nsix\n<!-- end -->\n<!-- if not inputs -->\nfive\n<!-- end -->\n"
    assert select_blocks(body, True, T, inputs=True).splitlines() == ["x", "six"]
    assert select_blocks(body, True, T, graders=True).splitlines() == ["x", "five"]


def test_a_steps_block_shows_only_from_the_release_that_shows_the_breakdown():
    body = "x\n<!-- if steps -->\nbreakdown\n<!-- end -->\n<!-- if conformance and not steps -->\nerrata only\n<!-- end -->\n"
    assert select_blocks(body, True, T, conformance=True, steps=True).splitlines() == ["x", "breakdown"]
    assert select_blocks(body, True, T, conformance=True).splitlines() == ["x", "errata only"]


def test_the_template_shows_the_breakdown_from_2_4_2_only():
    """The real template: release 2.4.1's card has no step-wise block, 2.4.2's has it once, with its
    placeholder; 2.4.1's card hash is what it was before the block came."""
    from medcalc_maintained.core.versions import rules
    from medcalc_maintained.release.state import card_sha256

    template = (ROOT / "dataset_card.md").read_text(encoding="utf-8")

    def card(version: str) -> str:
        r = rules(version)
        return select_blocks(template, r.card_lead, T, visitor=r.card_visitor, graders=r.card_graders,
                             inputs=r.inputs_config, conformance=r.conformance, steps=r.card_steps)

    assert "{{ steps_demo }}" not in card("2.4.1") and "How a model got there" not in card("2.4.1")
    assert card("2.4.2").count("{{ steps_demo }}") == 1
    before, after = template.split("<!-- if steps -->\n")  # exactly one block
    without = before + after.split("<!-- end -->\n", 1)[1]
    assert card_sha256(without, "2.4.1") == card_sha256(template, "2.4.1")
    assert card_sha256(without, "2.4.2") != card_sha256(template, "2.4.2")


def test_the_inputs_blocks_leave_earlier_releases_the_card_they_were_published_with():
    """The template without its ``inputs`` blocks (the lines of ``if not inputs`` kept, their markers
    dropped) is the template as releases before 2.4.0 read it: their card hashes are unchanged."""
    import re

    from medcalc_maintained.release.state import card_sha256

    template = (Path(__file__).resolve().parents[2] / "dataset_card.md").read_text(encoding="utf-8")
    before = re.sub(r"<!-- if inputs -->\n.*?<!-- end -->\n", "", template, flags=re.S)
    before = re.sub(r"<!-- if not inputs -->\n(.*?)<!-- end -->\n", r"\1", before, flags=re.S)
    assert "if inputs" not in before and "if not inputs" not in before and before != template
    for version in ("2.2.0", "2.3.0", "2.3.1", "2.3.2"):
        assert card_sha256(template, version) == card_sha256(before, version), version
    assert card_sha256(template, "2.4.0") != card_sha256(before, "2.4.0")


def test_the_card_lists_every_changed_label_of_its_release_and_nothing_else():
    import pandas as pd

    from medcalc_maintained.release.card import changed_labels_table

    base = {"split": "test", "decision": "accepted", "label_status": "corrected", "source": "review",
            "change_severity": "L1", "Calculator Name": "HAS-BLED"}
    records = pd.DataFrame([
        {**base, "id": "r1", "uid": 12, "old_value": "3", "new_value": "2", "release": "2.3.0"},
        {**base, "id": "r2", "uid": 4, "old_value": "5", "new_value": "N/A", "release": "2.3.0", "change_severity": "L3"},
        {**base, "id": "r3", "uid": 7, "old_value": "1", "new_value": "1", "release": "2.3.0",
         "label_status": "confirmed"},                                          # a confirmation: no change
        {**base, "id": "r4", "uid": 9, "old_value": "1", "new_value": "2", "release": "2.2.0"},  # another release
        {**base, "id": "r5", "uid": 8, "old_value": "1", "new_value": "2", "release": "2.3.0", "decision": "rejected"},
    ])
    got = changed_labels_table(records, "2.3.0")
    lines = [line for line in got.splitlines() if line.startswith("| ") and "→" in line and "after" not in line]
    assert got.startswith("The 2 labels this release changes, one line each")
    assert lines == ["| 4 | HAS-BLED | 5 → N/A | L3 | `r2` |", "| 12 | HAS-BLED | 3 → 2 | L1 | `r1` |"]
    assert changed_labels_table(records, "2.3.1") == ""  # a release without a label change: nothing
