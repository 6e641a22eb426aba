"""Release 2.3.0 as a user gets it: built from the committed ledger, published on top of 1.0.0 to 2.2.0 in the
git repository a local Hugging Face Hub mirror (olah, offline) serves, and loaded with
``load_dataset(..., revision="v2.3")``. The published 1.0.0-2.2.0 project is the session's ``published_releases``
(read-only); this test works on copies in its tmp_path."""

from __future__ import annotations

import json
import shutil

from tests.support.hub_mirror import git, load_through_hub, olah
from tests.support.release_support import cli

REPO_ID = "org/medcalc-maintained"
# the labels issue 45 names, as the blind readings decided them (docs/readings/2026-12-evidence/)
RIGHT = {211: "8", 215: "9", 848: "10", 229: "-1", 135: "0", 755: "0.8"}
DISPUTED = (48, 347, 435, 540, 576, 792)


def test_2_3_publishes_after_2_2_and_loads_by_its_tags(published_releases, tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(published_releases, copy, ignore=shutil.ignore_patterns("build", "mirrors", "*.git", "olah*"))
    out = copy / "build" / "v2.3.0"
    r = cli(copy, "release", "build", "--out", str(out), "--version", "2.3.0")
    assert r.exit_code == 0, r.output
    mirrors = tmp_path / "mirrors"
    shutil.copytree(published_releases / "mirrors", mirrors)
    repo = mirrors / "datasets" / "org" / "medcalc-maintained"
    v22 = git(repo, "rev-parse", "v2.2^{commit}")
    r = cli(copy, "release", "publish", "--release-dir", str(out), "--target", f"file://{repo}")
    assert r.exit_code == 0, r.output
    tags = set(git(repo, "tag", "-l").split())
    assert {"v2.3.0", "v2.3"} <= tags and git(repo, "rev-parse", "v2.2^{commit}") == v22
    assert git(repo, "rev-parse", "v2.3^{commit}") == git(repo, "rev-parse", "main")

    (tmp_path / "olah").mkdir()
    with olah(tmp_path / "olah", REPO_ID, "v2.3", mirrors=mirrors) as url:
        got = load_through_hub(url, tmp_path / "hf-home", [("default", "v2.3"), ("full", "v2.3.0"), ("default", "v2.2")])
    default = got["default@v2.3"].set_index("Row Number")
    full = got["full@v2.3.0"].set_index("Row Number")
    assert {u: default.at[u, "Ground Truth Answer"] for u in RIGHT} == RIGHT
    assert not set(DISPUTED) & set(default.index)
    assert (full.loc[list(DISPUTED), "Label Status"] == "disputed").all()
    assert len(default) == int((full["Label Status"].isin(["confirmed", "corrected", "abstain"])).sum())

    # the card's headline shares are the loaded rows' own evidence statuses
    in_default = full.loc[default.index, "Evidence Status"].value_counts()
    certified = int(in_default["certified"])
    assert certified >= 0.90 * len(default) and in_default.sum() == len(default)  # a verdict for every row's inputs
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"Of the {len(default)} labels of `default`, **{certified} ({100 * certified / len(default):.1f}%) are derived" \
        in card
    for uid in (215, 135):  # every input a quote of its note at its offsets
        for inp in json.loads(full.at[uid, "Evidence"])["inputs"]:
            quote = inp.get("quote")
            if isinstance(quote, dict) and quote.get("start") is not None:
                assert full.at[uid, "Patient Note"][quote["start"]:quote["end"]] == quote["text"], (uid, inp["name"])

    # 2.2.0 still loads as it was published: every verified row, the labels the 2.3.0 readings changed as they were
    v22 = got["default@v2.2"].set_index("Row Number")
    assert len(v22) == 887 and v22.at[135, "Ground Truth Answer"] == "1.5" and v22.at[347, "Label Status"] == "confirmed"
