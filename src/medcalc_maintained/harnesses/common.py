"""What every harness adapter shares: where a release is read from, its configs, the prompt, the
decoding and the grading rule.

A release is read either from a **local directory** built by ``medcalc-maintained release build``
(``make run`` leaves the latest one in ``build/release``: a Hugging Face dataset repository with the
card ``README.md``, whose YAML front matter lists the configs and the ``version``, and
``manifest.json``, with the same ``version``, its ``tag``, the earlier releases and the sha256 of
every file), or from the **Hub** at a release tag (``org/medcalc-maintained`` at ``v2.0``; another
repository id or an ``HF_ENDPOINT`` mirror works the same). :func:`resolve_release` turns either
into a :class:`Release`, which every adapter records in its task metadata.

Every adapter sends the same two chat messages (:func:`prompt_messages`: the system prompt and the
user turn of :func:`medcalc_maintained.grading.prompts.build_prompt`) through its harness's chat path
and asks for the same greedy decoding with the same budget (:data:`DECODING`). Each offers the prompt
variants of :data:`~medcalc_maintained.grading.prompts.VARIANTS` by name (``default``; ``stepwise``, which
also asks for the inputs used in an ``<inputs>`` block, graded by ``evaluate --steps``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import sha256_file
from medcalc_maintained.core.versions import full_tag, resolve_tag
from medcalc_maintained.grading.graders import grader
from medcalc_maintained.grading.prompts import VARIANTS, build_prompt
from medcalc_maintained.grading.prompts import system_prompt as variant_system_prompt

DATASET = "org/medcalc-maintained"
CONFIGS = ("default", "full", "mini")
# the published tags: v1.0 / v1.0.0 (the upstream baseline), v2.0 / v2.0.0, ...
REVISION = re.compile(r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)(\.(0|[1-9]\d*))?$")
# the columns a grader reads, carried along as each harness's sample metadata
LABEL_FIELDS = ("Row Number", "Calculator ID", "Calculator Name", "Category", "Output Type",
                "Ground Truth Answer", "Lower Limit", "Upper Limit", "Label Status")
# Tokens a model may generate per row, in every harness. The step-by-step explanations MedCalc-Bench
# ships as `Ground Truth Explanation` (what the system prompt asks for, then the <answer> tag) take,
# in SmolLM2's tokenizer, a median of 287 tokens; 94% of the 1,047 fit in 1,024 (77% in 512,
# the longest 1,569). A shorter budget cuts the answer tag off a worked calculation.
MAX_NEW_TOKENS = 1024
# Greedy decoding: temperature 0 (and no sampling where a harness has a separate switch), asked of
# each harness with the budget above (lm-eval generation_kwargs, Inspect GenerateConfig, verifiers
# sampling_args, HELM AdapterSpec).
TEMPERATURE = 0.0
BUILT_BY = "`medcalc-maintained release build`; `make run` builds the latest release into build/release"


# A directory rebuilt in place (``make run`` rewrites build/release) can be answered from the Arrow
# cache `datasets` made of its earlier build: measured on datasets 5.2.0, `mini` of 2.2.0 came back
# in 2.1.0's row order after a rebuild. The files are checked against the manifest first, so a
# local release is always read from them (a few seconds for 1,047 rows), never from that cache.
LOCAL_LOAD: dict[str, Any] = {"download_mode": "force_redownload"}


@dataclass(frozen=True)
class Release:
    """One release as a harness reads it: ``path`` is what ``datasets.load_dataset`` gets (the local
    directory, absolute, or the Hub repository id), ``revision`` the tag on the Hub (``None`` for a
    local directory), ``version`` the release it holds (``2.2.0``; on the Hub the tag's version)."""

    path: str
    revision: str | None
    version: str
    local: bool
    configs: tuple[str, ...] = CONFIGS

    @property
    def tag(self) -> str:
        return full_tag(self.version) if self.local else str(self.revision)

    @property
    def source(self) -> str:
        """``/abs/build/release`` or ``org/medcalc-maintained@v2.0``."""
        return self.path if self.local else f"{self.path}@{self.revision}"

    def metadata(self) -> dict[str, Any]:
        """What a task records about its data, prompt and decoding."""
        return {"release": self.version, "release_tag": self.tag, "source": self.source,
                "prompt": "chat: system + user (grading/prompts.py build_prompt)",
                "decoding": "greedy", "max_new_tokens": MAX_NEW_TOKENS}


def check_revision(revision: str) -> str:
    """``revision`` when it is a release tag (``v2.0`` or ``v2.0.0``); a ``ValueError`` otherwise."""
    if not isinstance(revision, str) or not REVISION.match(revision):
        raise ValueError(f"revision {revision!r} is not a release tag such as v2.0 or v2.0.0")
    return revision


def check_config(config: str, release: Release | None = None) -> str:
    if config not in CONFIGS:
        raise ValueError(f"config {config!r} is not one of {', '.join(CONFIGS)}")
    if release is not None and config not in release.configs:
        raise DataError(Path(release.path) / "README.md", f"the card's front matter lists no config {config!r} "
                        f"(it lists {', '.join(release.configs) or 'none'})", field="configs")
    return config


def _front_matter(readme: Path) -> dict[str, Any]:
    """The card's front matter (``release/layout.py``, the one reader of it)."""
    from medcalc_maintained.release import layout  # lazily: grading needs only the standard library

    try:
        text = readme.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(readme, f"unreadable dataset card: {exc}") from None
    return layout.split_front_matter(text, readme)[0]


def local_release(directory: str | Path, revision: str | None = None) -> Release:
    """The release in ``directory`` (built by ``release build``), checked: its card ``README.md``
    has front matter with ``version`` and ``configs``, ``manifest.json`` names the same ``version``
    and lists the sha256 of every data file. A ``revision`` (``v2.2`` / ``v2.2.0``) must name the
    release the directory holds. ``DataError`` naming the path and what is missing otherwise."""
    root = Path(directory).expanduser()
    if not root.is_dir():
        where = "" if root.is_absolute() else f" ({root.absolute()}: a relative path is read from the working directory)"
        raise DataError(root, f"no such release directory{where}; a release is built by {BUILT_BY}")
    missing = [n for n in ("README.md", "manifest.json") if not (root / n).is_file()]
    if missing:
        raise DataError(root, f"is not a release directory: {' and '.join(missing)} missing; "
                        f"a release directory is built by {BUILT_BY}")
    from medcalc_maintained.release import layout

    front, manifest = _front_matter(root / "README.md"), layout.read_manifest(root)
    version = str(front.get("version", ""))
    if not version:
        raise DataError(root / "README.md", "the card's front matter has no `version`", field="version")
    if str(manifest.get("version")) != version:
        raise DataError(root / "manifest.json", f"version {manifest.get('version')!r} is not the card's {version!r}",
                        field="version")
    if not isinstance(manifest.get("files"), dict):
        raise DataError(root / "manifest.json", "lists no `files` (with their sha256)", field="files")
    configs = tuple(str(c.get("config_name")) for c in front.get("configs") or [] if isinstance(c, dict))
    if revision is not None:
        known = [str(v) for v in manifest.get("releases") or [version]]
        if resolve_tag(check_revision(revision), known) != version:
            raise DataError(root, f"holds release {version} ({full_tag(version)}), not {revision}")
    return Release(path=str(root.resolve()), revision=None, version=version, local=True, configs=configs)


def resolve_release(release: str | Path | None = None, revision: str | None = None, *,
                    dataset: str | Path = DATASET) -> Release:
    """Where to read a release: ``release``, a local directory (:func:`local_release`); else
    ``dataset`` when it is an existing directory (HELM's ``dataset_path``); else ``dataset`` on the
    Hub at ``revision``, which must then be a release tag."""
    if release is not None and str(release) != "":
        return local_release(release, revision)
    if Path(str(dataset)).expanduser().is_dir():
        return local_release(dataset, revision)
    if revision is None:
        raise ValueError(f"no release given: a local release directory (e.g. build/release, built by "
                         f"`medcalc-maintained release build`) or a release tag of {dataset} such as v2.0"
                         + ("" if str(dataset) == DATASET else f" ({dataset} is no directory here)"))
    check_revision(revision)
    return Release(path=str(dataset), revision=revision, version=revision.lstrip("v"), local=False)


def check_files(release: Release, config: str) -> list[Path]:
    """The data files of ``config`` in a local release, each checked against its sha256 in the
    manifest (a release edited or half-copied after its build is refused); ``[]`` on the Hub."""
    if not release.local:
        return []
    from medcalc_maintained.release import layout

    root = Path(release.path)
    check_config(config, release)
    listed = layout.read_manifest(root)["files"]
    mine = sorted(f for f in listed if str(f).startswith(f"{layout.DATA_DIR}/{config}/"))
    if not mine:
        raise DataError(root / "manifest.json", f"lists no data file of config {config!r}", field="files")
    out = []
    for rel in mine:
        path = root / rel
        if not path.is_file():
            raise DataError(path, f"missing: manifest.json lists it as a data file of config {config!r}")
        digest = sha256_file(path)
        if digest != listed[rel]:
            raise DataError(path, f"sha256 {digest} is not the {listed[rel]} manifest.json records for it "
                            f"(the file changed after `release build`)")
        out.append(path)
    return out


def variant_metadata(variant: str) -> dict[str, str]:
    """What a task records of its prompt variant: nothing for ``default`` (a task of the default prompt
    reads as it did before variants), ``{"prompt_variant": NAME}`` otherwise."""
    if variant not in VARIANTS:
        raise ValueError(f"prompt variant {variant!r} is not one of {', '.join(VARIANTS)}")
    return {} if variant == "default" else {"prompt_variant": variant}


def prompt_messages(row: Mapping[str, Any], variant: str = "default") -> list[dict[str, str]]:
    """The chat messages of one dataset row: the variant's system prompt, then the note and the
    question (``stepwise``: and the names of its calculator's inputs)."""
    return build_prompt(str(row["Patient Note"]), str(row["Question"]), variant,
                        int(row["Calculator ID"]) if variant == "stepwise" else None)


def system_prompt(variant: str = "default") -> str:
    """The system message every adapter sends (the same for every row of a variant)."""
    return variant_system_prompt(variant)


def user_prompt(row: Mapping[str, Any], variant: str = "default") -> str:
    """The user turn of one row (note and question)."""
    return prompt_messages(row, variant)[1]["content"]


def prompt_text(row: Mapping[str, Any], variant: str = "default") -> str:
    """The two messages joined as plain text: only for a HELM run spec that is not a chat run (every
    documented command sends :func:`prompt_messages`)."""
    return "\n\n".join(m["content"] for m in prompt_messages(row, variant)) + "\n"


def label_fields(row: Mapping[str, Any]) -> dict[str, str]:
    """The grading columns of one row, as text."""
    return {k: "" if row.get(k) is None else str(row.get(k)) for k in LABEL_FIELDS}


def is_correct(row: Mapping[str, Any], output: str) -> bool:
    """Our grading of a model's whole ``output`` against one row: the last ``<answer>`` (else the
    whole output), decimals inside the limits, integers rounded, dates the same day, ``N/A``
    correct only against an ``N/A`` label."""
    return grader("ours")(row, output if isinstance(output, str) else "")


def load_rows(config: str, release: Release, *, split: str = "test") -> list[dict[str, Any]]:
    """The rows of one config of ``release``, read with ``datasets.load_dataset`` from the local
    directory (its files checked first: :func:`check_files`) or from the Hub at the tag
    (``HF_ENDPOINT`` for a mirror). An empty config (``mini`` of 1.0.0) gives ``[]``."""
    import datasets

    check_config(config, release)
    check_files(release, config)
    kwargs = LOCAL_LOAD if release.local else {}
    try:
        ds = datasets.load_dataset(release.path, config, revision=release.revision, split=split, **kwargs)
    except ValueError as exc:
        # a config without rows has an empty parquet file, which `datasets` refuses to read
        # eagerly; streamed it is simply empty
        if "empty" not in str(exc).lower():
            raise
        ds = datasets.load_dataset(release.path, config, revision=release.revision, split=split, streaming=True)
    return [dict(r) for r in ds]

