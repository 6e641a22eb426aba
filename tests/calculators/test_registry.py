"""The calculator registry as a whole: coverage of v1.0, names, sources, plausibility data."""

from __future__ import annotations

import csv
from importlib import resources

import yaml

from medcalc_maintained.calculators import load_all


class _UniqueKeyLoader(yaml.SafeLoader):
    pass


def _no_duplicates(loader, node, deep=False):
    keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
    dupes = {k for k in keys if keys.count(k) > 1}
    assert not dupes, f"duplicate keys in plausibility.yaml: {sorted(dupes)}"
    return loader.construct_mapping(node, deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def test_every_v1_calculator_is_registered_with_its_name_and_type(v1_test_csv):
    with v1_test_csv.open(encoding="utf-8", newline="") as fh:
        upstream = {(int(r["Calculator ID"]), r["Calculator Name"], r["Output Type"]) for r in csv.DictReader(fh)}
    reg = load_all()
    ours = {(c.calculator_id, c.name, c.output_type) for c in reg.values()}
    missing = upstream - ours
    assert not missing, f"not registered or named differently: {sorted(missing)}"


def test_every_calculator_names_a_source():
    for calc in load_all().values():
        doc = calc.source.lower()
        assert any(w in doc for w in ("mdcalc", "source", "et al", "doi", "policy", "guideline", "19", "20")), calc.name


def test_plausibility_file_is_well_formed():
    text = resources.files("medcalc_maintained.calculators").joinpath("plausibility.yaml").read_text("utf-8")
    data = yaml.load(text, Loader=_UniqueKeyLoader)
    assert data["ranges"]
    for key, spec in data["ranges"].items():
        assert {"min", "max", "unit", "source"} <= set(spec), key
        assert spec["min"] < spec["max"], key
        assert len(str(spec["source"])) > 10, key
