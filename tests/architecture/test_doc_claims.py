"""What the docs say about the record's fields and the values of each enum is what the schema and
the code say: the lists are read from CONTRIBUTING.md and docs/releases.md as written, and the card's
from release/fields.py."""

from __future__ import annotations

import json
import re

import pytest

from medcalc_maintained.calculators.severity import LEVELS
from medcalc_maintained.core.answers import OUTPUT_TYPES
from medcalc_maintained.core.labels import DISPUTED, RECORD_STATUSES, UNVERIFIED
from medcalc_maintained.ledger import derivation, reconstruct, records
from medcalc_maintained.release import fields
from medcalc_maintained.release.explanations import SOURCES as EXPLANATION_SOURCES
from tests.support.paths import ROOT

SCHEMA = json.loads((ROOT / "src" / "medcalc_maintained" / "schemas" / "correction.schema.json").read_text("utf-8"))
FIELDS = SCHEMA["properties"]
ITEM = FIELDS["inputs"]["items"]["properties"]

CODE = r"`([^`]+)`"
ASIDE = r"(?:\s*\((?:[^()]|\([^()]*\))*\))?"  # a parenthesis (one level nested) after a value
SEP = r"(?:,\s*or\s+|,\s*|\s+or\s+)"
LIST = re.compile(rf"{CODE}{ASIDE}(?:{SEP}{CODE}{ASIDE})+")
RANGE = re.compile(r"`([A-Za-z]+)(\d+)`-`\1(\d+)`")


def values(text: str) -> list[str]:
    """The first list of values in ``text``: two or more code spans joined by ``,`` / ``or`` (each
    may be followed by a parenthesis that explains it), or a range such as ```L0`-`L3```."""
    found = LIST.search(text)
    span = RANGE.search(text)
    if span and (found is None or span.start() < found.start()):
        return [f"{span[1]}{i}" for i in range(int(span[2]), int(span[3]) + 1)]
    assert found, f"no list of values in: {text[:120]}"
    return re.findall(CODE, re.sub(r"\((?:[^()]|\([^()]*\))*\)", "", found[0]))


def test_the_value_reader_on_written_cases():
    assert values("`a`, `b` or `c`") == ["a", "b", "c"]
    assert values("x: `a` (why, `q`), `b` (see (1)) or `c` (end); `d`") == ["a", "b", "c"]
    assert values("`Name` of it, then `u`, or `v`") == ["u", "v"]
    assert values("optional: `L0`-`L3`, its `x`, `y`") == ["L0", "L1", "L2", "L3"]
    with pytest.raises(AssertionError):
        values("only `one` here")


def table(text: str, header: str) -> dict[str, str]:
    """The markdown table whose header row starts with ``| header |``: each name (code span) of the
    first column -> the second column."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    rows: dict[str, str] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        first, second = [c.strip() for c in line.strip("|").split(" | ", 1)]
        for name in re.findall(CODE, first):
            assert name not in rows, f"{name} documented twice"
            rows[name] = second
    return rows


CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
RECORD = table(CONTRIBUTING, "field")
# the card's column table is generated from the declared value space of release/fields.py
CARD = {col: sorted(v for v in vals if v not in (fields.EMPTY, fields.NULL)) for col, vals in fields.VALUES.items()}


def test_the_field_table_documents_every_schema_field_and_no_other():
    assert sorted(RECORD) == sorted(FIELDS)


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_field_is_documented_optional_exactly_when_the_schema_does_not_require_it(field):
    assert RECORD[field].startswith("optional") == (field not in SCHEMA["required"]), RECORD[field]


@pytest.mark.parametrize("field", sorted(f for f, spec in FIELDS.items() if "enum" in spec))
def test_each_enum_field_lists_exactly_the_schema_values(field):
    enum = FIELDS[field]["enum"]
    assert sorted(values(RECORD[field])) == sorted(v for v in enum if v is not None)
    if None in enum and field in SCHEMA["required"]:
        assert "null" in RECORD[field]


def braces(text: str) -> dict[str, dict | None]:
    """``{a, b: {c, d}}`` (a code span of the docs) -> ``{"a": None, "b": {"c": None, "d": None}}``."""
    tokens = re.findall(r"[{}:,]|[A-Za-z_]+", text)
    pos = 0

    def group() -> dict[str, dict | None]:
        nonlocal pos
        assert tokens[pos] == "{"
        pos += 1
        out: dict[str, dict | None] = {}
        while tokens[pos] != "}":
            name = tokens[pos]
            pos += 1
            out[name] = None
            if tokens[pos] == ":":
                pos += 1
                out[name] = group()
            if tokens[pos] == ",":
                pos += 1
        pos += 1
        return out

    return group()


def shape(properties: dict) -> dict[str, dict | None]:
    """The schema's nesting of ``properties`` as :func:`braces` reads the docs."""
    return {k: shape(v["properties"]) if "properties" in v else None for k, v in properties.items()}


@pytest.mark.parametrize("field", ["reviewer", "proposed_by", "override", "adjudicated"])
def test_an_object_field_names_its_keys_as_the_schema_does(field):
    written = re.search(r"`(\{[^`]*\})`", RECORD[field])[1]
    assert braces(written) == shape(FIELDS[field]["properties"])


def test_the_inputs_row_names_every_key_of_an_input_and_the_values_of_its_source():
    cell = RECORD["inputs"]
    spans = re.findall(CODE, cell)
    documented: dict[str, dict | None] = dict(braces(spans[0]))
    for label, group in re.findall(r"`([a-z_]+): (\{[^`]*\})`", cell):  # optionally `timepoint: {when, why}`
        documented[label] = braces(group)
    documented.update({s: None for s in spans if s in ITEM and s not in documented})  # e.g. `reconstructed`
    assert documented == shape(ITEM)
    after = cell[cell.index("`source` one of"):]
    assert sorted(values(after)) == sorted(ITEM["source"]["enum"]) == sorted(derivation.SOURCES)


def test_the_error_types_paragraph_lists_the_schema_values():
    line = next(p for p in CONTRIBUTING.split("\n- ") if p.startswith("Error types:"))
    assert sorted(values(line)) == sorted(v for v in FIELDS["error_type"]["enum"] if v is not None)


def test_the_code_enums_are_the_schema_enums():
    def enum(field):
        return sorted(v for v in FIELDS[field]["enum"] if v is not None)

    assert sorted(records.DECISIONS) == enum("decision")
    assert sorted(records.STATUSES) == sorted(RECORD_STATUSES) == enum("label_status")
    assert sorted(records.ERROR_TYPES) == enum("error_type")
    assert sorted(records.SOURCES) == enum("source")
    assert list(LEVELS) == enum("change_severity")  # ordered: the severity scale
    # the campaign's classes, and inputs-corrected, which only derivation records carry
    assert sorted(reconstruct.CLASSES) == sorted(set(enum("reconstruction")) - {"inputs-corrected"})


def test_the_label_status_docstring_lists_every_status():
    from medcalc_maintained.core import labels

    assert re.findall(r"^\* ``([a-z]+)``", labels.__doc__, flags=re.M) == [*RECORD_STATUSES, UNVERIFIED, DISPUTED]


def test_the_card_columns_list_the_values_the_code_writes():
    assert CARD["Label Status"] == sorted([*RECORD_STATUSES, UNVERIFIED, DISPUTED])
    assert CARD["Error Type"] == sorted(records.ERROR_TYPES)
    assert CARD["Explanation Source"] == sorted(EXPLANATION_SOURCES)
    assert CARD["Change Severity"] == list(LEVELS)
    assert CARD["Output Type"] == sorted(OUTPUT_TYPES)


def test_the_card_lists_every_label_source():
    # apply writes the record's source, and upstream for a row no record decides (ledger/apply.py)
    assert CARD["Label Source"] == sorted(["upstream", *records.SOURCES])


def test_the_releases_page_lists_every_derivation_status():
    page = (ROOT / "docs" / "releases.md").read_text(encoding="utf-8")
    claim = page[page.index("`full` carries `Derivation Status`"):]
    assert sorted(values(claim)) == sorted([*derivation.DERIVED, *derivation.UNDERIVED])
