"""``croissant.json``: the Croissant 1.0 metadata (with the Responsible-AI extension) of one release.

One ``cr:FileObject`` per parquet file of the release (path, sha256) and one for the release feed
``releases.json`` (:mod:`medcalc_maintained.release.feed`, written before this file), one ``cr:RecordSet`` per
config whose fields are the config's columns with their types, read from that config's files;
the RAI fields say how the data were collected and annotated and what their known limitations
are. Written by ``release build`` before ``manifest.json``, so the manifest lists its sha256; the
contracts check that it describes exactly the release's files and columns.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow.parquet as pq

from medcalc_maintained.core.readers import sha256_file
from medcalc_maintained.core.versions import full_tag
from medcalc_maintained.release.layout import CROISSANT, FEED, data_file
from medcalc_maintained.release.plan import Releases
from medcalc_maintained.release.tables import Tables

FILE = CROISSANT
CONFORMS_TO = ["http://mlcommons.org/croissant/1.0", "http://mlcommons.org/croissant/RAI/1.0"]
DATA_TYPES = {"int64": "sc:Integer", "string": "sc:Text", "bool": "sc:Boolean", "large_string": "sc:Text"}
CONTEXT = {
    "@language": "en", "@vocab": "https://schema.org/", "citeAs": "cr:citeAs", "column": "cr:column",
    "conformsTo": "dct:conformsTo", "cr": "http://mlcommons.org/croissant/", "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"}, "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/", "examples": {"@id": "cr:examples", "@type": "@json"}, "extract": "cr:extract",
    "field": "cr:field", "fileProperty": "cr:fileProperty", "fileObject": "cr:fileObject", "fileSet": "cr:fileSet",
    "format": "cr:format", "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset", "jsonPath": "cr:jsonPath",
    "key": "cr:key", "md5": "cr:md5", "parentField": "cr:parentField", "path": "cr:path", "recordSet": "cr:recordSet",
    "references": "cr:references", "regex": "cr:regex", "repeated": "cr:repeated", "replace": "cr:replace",
    "sc": "https://schema.org/", "separator": "cr:separator", "source": "cr:source", "subField": "cr:subField",
    "transform": "cr:transform", "samplingRate": "cr:samplingRate", "equivalentProperty": "cr:equivalentProperty",
}
CITATION = ("@misc{medcalc_maintained, title = {MedCalc-Bench, maintained: versioned and contract-tested labels of "
            "the MedCalc-Bench v1.0 test split}, howpublished = {Hugging Face dataset {repo_id}, release {version}}}")
RAI = {
    "rai:dataCollection": (
        "Patient notes, questions and v1.0 labels are taken verbatim from the MedCalc-Bench v1.0 test split "
        "(notes from PubMed Central case reports or written from templates by the upstream authors). No new "
        "patient data were collected."),
    "rai:dataCollectionType": ["Secondary data analysis"],
    "rai:dataAnnotationProtocol": [
        "Every label change is a reviewed record of a corrections ledger (old and new value, error type, evidence, "
        "reviewer role and specialty, whether the decision was blind to the old label); a release is rebuilt from "
        "the untouched upstream rows plus the records of that release.",
        "Release 2.0.0 applies a physician-in-the-loop audit: an independent LLM recomputation from the note and "
        "question only (five runs, kept at a four-of-five supermajority), and single-blind recomputation by "
        "licensed physicians of the rows where recomputation and v1.0 disagreed most.",
    ],
    "rai:machineAnnotationTools": ["LLM recomputation (five runs per row)", "reference implementations of the 55 calculators"],
    "rai:dataLimitations": [
        "Rows whose Label Status is unverified keep the upstream label, which may be wrong.",
        "A confirmed label means two independent procedures agree, not that a clinician checked it.",
        "Only the test split is released; the upstream train split was not audited.",
        "Explanations of corrected rows are derivations of the reference calculator from the upstream extracted "
        "features, or empty when the calculator does not reproduce the maintained label.",
    ],
    "rai:dataBiases": ["Notes are published case reports, which over-represent unusual presentations."],
    "rai:dataUseCases": ["Evaluating and comparing models that compute clinical calculators from notes; "
                         "studying label noise. Not for clinical decisions."],
    "rai:personalSensitiveInformation": ["Notes are published, de-identified case reports; no new personal data."],
}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


def _fields(config: str, files: list[str], root: Path) -> list[dict[str, Any]]:
    schema = pq.read_schema(root / files[0])
    out = []
    for f in schema:
        ident = f"{config}/{quote(f.name)}"  # distinct for `Calculator ID` and `calculator_id`
        out.append({"@type": "cr:Field", "@id": ident, "name": ident,
                    "description": f"column `{f.name}`", "dataType": DATA_TYPES.get(str(f.type), "sc:Text"),
                    "source": {"fileObject": {"@id": _slug(files[0])}, "extract": {"column": f.name}}})
    return out


def croissant(t: Tables, plan: Releases, root: Path) -> dict[str, Any]:
    """The Croissant document of release ``t`` whose parquet files are already written under ``root``."""
    rel = t.release
    distribution, record_sets = [], []
    for config, splits in t.published().items():
        files = [data_file(config, s) for s in splits]
        for f in files:
            distribution.append({"@type": "cr:FileObject", "@id": _slug(f), "name": _slug(f), "contentUrl": f,
                                 "encodingFormat": "application/x-parquet", "sha256": sha256_file(root / f)})
        if len(files) == 1:  # one split per config: the record set reads its one file
            record_sets.append({"@type": "cr:RecordSet", "@id": config, "name": config,
                                "description": f"the `{config}` config", "field": _fields(config, files, root)})
    if (root / FEED).is_file():
        distribution.append({"@type": "cr:FileObject", "@id": _slug(FEED), "name": _slug(FEED),
                             "contentUrl": FEED, "encodingFormat": "application/json",
                             "description": "the release feed: every release up to this one, with the sha256 of its "
                                            "data files and its comparability with the previous release",
                             "sha256": sha256_file(root / FEED)})
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": plan.repo_id.split("/")[-1],
        "description": rel.description,
        "version": rel.version,
        "datePublished": rel.date,
        "license": "https://creativecommons.org/licenses/by-sa/4.0/",
        "url": f"https://huggingface.co/datasets/{plan.repo_id}/tree/{full_tag(rel.version)}",
        "isBasedOn": "https://github.com/ncbi-nlp/MedCalc-Bench",
        "citeAs": CITATION.replace("{repo_id}", plan.repo_id).replace("{version}", rel.version),
        "keywords": ["medical", "clinical calculators", "benchmark maintenance"],
        **RAI,
        "distribution": distribution,
        "recordSet": record_sets,
    }


def write_croissant(t: Tables, plan: Releases, root: Path) -> Path:
    path = Path(root) / FILE
    doc = croissant(t, plan, Path(root))
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
