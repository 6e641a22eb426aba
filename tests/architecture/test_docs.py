"""The docs cannot go stale (issue 47, item 5): the README stays short and what it claims is checked
here, every relative link of README.md, CONTRIBUTING.md and docs/ resolves, every page is in the site's
navigation, the stage table of docs/pipeline.md is the generated one, the Layout names what exists,
and every `medcalc-maintained` command and `make` target the docs show is one the code has. All of it
reads files only: `make docs` (mkdocs build --strict) is not needed here."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.main import get_command

from medcalc_maintained.calculators import load_all
from medcalc_maintained.cli import app
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.labels import DISPUTED, RECORD_STATUSES, UNVERIFIED
from medcalc_maintained.core.versions import resolve_tag
from medcalc_maintained.devtools import docs_tables
from medcalc_maintained.ledger.records import DECISIONS
from medcalc_maintained.release.tables import CONFIGS
from tests.support.paths import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "extensions" not in p.relative_to(DOCS).parts)
TEXTS = [README, ROOT / "CONTRIBUTING.md", *PAGES]
MAX_README_LINES = 250
CLI = get_command(app)
FENCE = re.compile(r"^(\s*)```[^\n]*\n.*?^\1```[ \t]*$", re.M | re.S)
SPAN = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose(text: str) -> str:
    """``text`` without its fenced code blocks and code spans (links there are not links)."""
    return SPAN.sub("", FENCE.sub("", text))


def code_lines(text: str) -> list[str]:
    """Each command line of the fenced blocks (continuation lines ending in a backslash joined), then
    each code span."""
    lines = []
    for block in FENCE.finditer(text):
        body = block.group(0).split("\n")[1:-1]
        lines.extend(re.sub(r"\\\n\s*", " ", "\n".join(body)).split("\n"))
    return lines + [m.group(2) for m in SPAN.finditer(FENCE.sub("", text))]


def slug(heading: str) -> str:
    """The anchor of a heading, as MkDocs' ``toc`` (Python-Markdown) makes it."""
    text = re.sub(r"[`*_]", "", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    """The anchors of the headings of ``path``, with the files it includes (``--8<-- "FILE"``, from the root)."""
    text = re.sub(r'^--8<-- "([^"]+)"$', lambda m: (ROOT / m.group(1)).read_text(encoding="utf-8"),
                  path.read_text(encoding="utf-8"), flags=re.M)
    text = FENCE.sub("", text)
    found = {slug(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, flags=re.M)}
    for name in re.findall(r"^::: ([\w.]+)$", text, flags=re.M):  # an API page: each module's anchor is its name
        base = ROOT / "src" / name.replace(".", "/")
        modules = [p.relative_to(ROOT / "src").with_suffix("") for p in base.rglob("*.py")] if base.is_dir() else []
        found |= {name} | {".".join(m.parts[:-1] if m.name == "__init__" else m.parts) for m in modules}
    return found


# -- the README ---------------------------------------------------------------------------------------

def test_the_readme_is_what_a_new_user_reads_first():
    text = README.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_README_LINES, f"README.md has {text.count(chr(10))} lines; move detail to docs/"
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings[:4] == ["The two commands", "Load a release", "Evaluate a model", "Propose a correction"]


def test_the_readme_links_every_page_of_the_site():
    linked = {Path(t).as_posix() for t in LINK.findall(prose(README.read_text(encoding="utf-8")))}
    pages = {rel(p) for p in DOCS.glob("*.md")} - {"docs/contributing.md"}  # the README links CONTRIBUTING.md itself
    assert pages - linked == set(), "pages the README's table does not list"


def test_the_readme_numbers_are_the_code_and_the_release_tables():
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert f"compute one of {len(load_all())} MDCalc-style clinical calculators" in text
    for config in CONFIGS:
        assert f"`{config}`" in text.split("Every release has five configs:")[1].split(". ")[0]
    assert len(CONFIGS) == 5
    plan = yaml.safe_load((ROOT / "releases.yaml").read_text(encoding="utf-8"))
    versions = [r["version"] for r in plan["releases"]]
    tags = set(re.findall(r'revision="(v[\d.]+)"', text))
    assert tags and all(resolve_tag(t, versions) for t in tags), tags
    (tag,) = tags
    version = resolve_tag(tag, versions)
    assert f"`repo_id: {plan['repo_id']}`" in text and f'load_dataset("{plan["repo_id"]}"' in text
    # `make run` builds the latest release of releases.yaml (stage release) into build/release
    assert version == versions[-1] and f'load_dataset("build/release") # {version} as `make run` builds it' in text
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert "medcalc-maintained" in scripts and "VENV := .venv\n" in (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "`source .venv/bin/activate` first, or call `.venv/bin/medcalc-maintained`" in text
    mini = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["release"]["mini_per_calculator"]
    assert f"rows, up to {mini} per calculator" in text
    tables = ROOT / "data" / "releases" / version
    missing = [c for c in ("default", "full", "mini") if not (tables / f"{c}.parquet").is_file()]
    if missing:
        pytest.skip(f"pipeline outputs absent (run `dvc repro`): {', '.join(str(tables / c) for c in missing)}")
    rows = {c: len(pd.read_parquet(tables / f"{c}.parquet", columns=["Row Number"])) for c in ("default", "full", "mini")}
    assert f"the {rows['default']:,} verified rows of {version}" in text
    assert f"all {rows['full']:,} rows, with `Label Status`" in text
    assert f"{rows['mini']:,} rows, up to {mini} per calculator" in text


def test_the_readme_names_the_issue_form_the_harnesses_and_their_extras():
    from medcalc_maintained.harnesses.lm_eval_task import TASKS
    from medcalc_maintained.harnesses.registry import HARNESSES

    text = README.read_text(encoding="utf-8")
    form = yaml.safe_load((ROOT / ".github" / "ISSUE_TEMPLATE" / "label_error.yml").read_text(encoding="utf-8"))
    assert f"*{form['name']}* form" in text
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    named = re.findall(r"'\.\[([\w-]+)\]'", text)
    assert sorted(set(named)) == sorted(h.extra for h in HARNESSES.values() if h.extra) and set(named) <= set(extras)
    adapters = [h.label for h in HARNESSES.values() if h.adapters]
    assert adapters == ["lm-eval", "Inspect", "HELM", "verifiers"]
    assert "Adapters for lm-evaluation-harness, Inspect, verifiers and HELM" in " ".join(text.split())
    assert [h.name for h in HARNESSES.values() if h.adapters and not h.extra] == ["helm"]
    assert "make harness-env H=helm" in text and "HARNESS_PINS_helm" in (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"--tasks {TASKS['mini']} " in text


def test_the_readme_grading_rule_is_the_code():
    from medcalc_maintained.core.answers import graded_answer, is_correct

    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "the answer is the last `<answer>…</answer>` of the output, else the whole output" in text
    assert graded_answer("<answer>1</answer> then <answer>2</answer>") == "2"
    assert graded_answer(" the answer is 38 ") == "the answer is 38"
    assert ("Decimals are correct inside the label's [`Lower Limit`, `Upper Limit`], integers after rounding, "
            "dates on the same day, and `N/A` only where the label is `N/A`") in text
    assert is_correct("24.1", "25.238", "23.9761", "26.4999", "decimal")
    assert not is_correct("23.9", "25.238", "23.9761", "26.4999", "decimal")
    assert is_correct("4.6", "5", None, None, "integer") and not is_correct("5.6", "5", None, None, "integer")
    assert is_correct("2024-01-02", "01/02/2024", None, None, "date")
    assert is_correct("N/A", "N/A", None, None, "decimal") and not is_correct("N/A", "5", None, None, "integer")


def command_help(*command: str) -> str:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "250", "TERMINAL_WIDTH": "250"})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_what_the_readme_says_evaluate_and_propose_do_is_what_their_help_says():
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "accuracy with 95% intervals per version, per calculator and per `Label Status`" in text
    assert "written to a new `build/evaluations/<time>/`, or `--out`" in text
    evaluate = command_help("evaluate")
    for said in ("95% bootstrap CI", "per_calculator.csv and per_status.csv", "flips.csv", "build/evaluations/<time>",
                 "rows common to all versions"):
        assert said in evaluate, said
    assert "`propose` appends a `deferred` record to `data/corrections/<yyyy-mm>-proposals.yaml`" in text
    propose = command_help("propose")
    assert "append a deferred ledger record" in propose and "data/corrections/<yyyy-mm>-proposals.yaml" in propose
    assert "The whole ledger is checked with the new record before the file is written" in propose


# -- links and navigation -----------------------------------------------------------------------------

def link_problems(path: Path) -> list[str]:
    problems = []
    for target in LINK.findall(prose(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            problems.append(f"{rel(path)}: {target}: no such file")
        elif path.is_relative_to(DOCS) and not dest.is_relative_to(DOCS):
            problems.append(f"{rel(path)}: {target}: outside docs/ (the site has only docs/)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{rel(path)}: {target}: no heading #{anchor} there")
    return problems


@pytest.mark.parametrize("path", TEXTS, ids=rel)
def test_every_relative_link_resolves(path):
    assert link_problems(path) == []


def test_the_link_check_sees_a_broken_link_an_anchor_and_a_link_out_of_docs(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "DOCS", tmp_path / "docs")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "x.md").write_text("# X\n")
    page = tmp_path / "docs" / "p.md"
    page.write_text("# Title here\n[a](gone.md) [b](#title-here) [c](#nope) [d](../x.md) `[e](gone.md)` "
                    "[f](https://example.org/gone)\n")
    assert link_problems(page) == ["docs/p.md: gone.md: no such file", "docs/p.md: #nope: no heading #nope there",
                                   "docs/p.md: ../x.md: outside docs/ (the site has only docs/)"]


def nav_pages(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for v in nav.values() for p in nav_pages(v)]
    return [p for item in nav for p in nav_pages(item)]


def test_every_page_is_in_the_navigation_once():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = nav_pages(config["nav"])
    assert len(nav) == len(set(nav))
    assert sorted(nav) == sorted(p.relative_to(DOCS).as_posix() for p in PAGES)


def test_the_api_reference_has_a_page_for_every_package():
    src = ROOT / "src" / "medcalc_maintained"
    packages = {p.parent.name for p in src.glob("*/__init__.py")} - {"cli"} | {"project"}  # cli: its --help
    pages = {p.stem: p.read_text(encoding="utf-8") for p in (DOCS / "reference").glob("*.md")}
    assert sorted(pages) == sorted(packages)
    for name, text in pages.items():
        assert f"::: medcalc_maintained.{name}\n" in text, name


def test_the_contributing_page_is_contributing_md():
    assert '--8<-- "CONTRIBUTING.md"' in (DOCS / "contributing.md").read_text(encoding="utf-8")


# -- generated and checked parts ----------------------------------------------------------------------

def test_the_stage_table_is_the_one_make_deps_generates():
    current, generated = docs_tables.generate(ROOT)
    assert current == generated, "docs/pipeline.md's stage table differs from dvc.yaml and the code: run `make deps`"


def test_the_stage_table_lists_every_stage_after_the_stages_it_reads():
    from medcalc_maintained.devtools.stage_list import reads

    doc = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))
    text = (DOCS / "pipeline.md").read_text(encoding="utf-8")
    names = re.findall(r"^\| \[`([a-z-]+)`\]\(reference/stages\.md#[\w.]+\) \| `([^`]+)` \|", text, flags=re.M)
    assert sorted(n for n, _ in names) == sorted(doc["stages"])
    order = [n for n, _ in names]
    for stage, (producers, _) in reads(ROOT, doc).items():
        assert all(order.index(p) < order.index(stage) for p in producers), stage
    assert dict(names)["release-tables"] == "release tables"  # its cmd, `medcalc-maintained release tables`


def test_a_hand_edit_of_the_stage_table_fails_the_check_and_make_deps_undoes_it(tmp_path):
    from typer.testing import CliRunner

    from tests.architecture.test_dvc_deps import _copy

    copy = _copy(tmp_path)
    page = copy / docs_tables.PAGE
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("| `ingest` |", "| `ingest-x` |", 1), encoding="utf-8")
    assert docs_tables.problems(copy) == ["docs/pipeline.md: the stage table differs from dvc.yaml and the code"]
    env = {"MEDCALC_ROOT": str(copy), "COLUMNS": "250"}
    check = CliRunner().invoke(app, ["dvc-deps", "--check"], env=env)
    assert check.exit_code == 1 and "docs/pipeline.md: the stage table differs" in check.output
    done = CliRunner().invoke(app, ["dvc-deps"], env=env)
    assert done.exit_code == 0 and "docs/pipeline.md: stage table rewritten" in done.output
    assert page.read_text(encoding="utf-8") == text
    page.write_text(text.replace(docs_tables.END, ""), encoding="utf-8")
    with pytest.raises(DataError, match="the generated stage table is not there once"):
        docs_tables.generate(copy)


def test_the_table_names_a_library_module_of_a_stage_and_skips_the_plumbing(tmp_path):
    src = tmp_path / "medcalc_maintained"
    (src / "quality").mkdir(parents=True)
    imports = {"medcalc_maintained.project", "medcalc_maintained.core.atomic", "medcalc_maintained.stages._llm",
               "medcalc_maintained.quality", "medcalc_maintained.quality.recompute", "medcalc_maintained.verifiers"}
    (src / "verifiers").mkdir()
    assert docs_tables.library(src, imports) == ["quality/recompute.py", "verifiers/"]
    assert docs_tables.writes(["data/a/x.csv", "data/a/b", "data/a/sub/y.json", "build/release"]) == [
        "build/release/", "data/a/"]


LAYOUT_COLUMN = 39  # where the descriptions of docs/layout.md's block start


def layout() -> list[tuple[str, str]]:
    """(path, its description) of every entry of docs/layout.md's block; an entry indented under a
    folder is a path inside it."""
    text = (DOCS / "layout.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"^```\n(.*?)^```$", text, flags=re.M | re.S)
    entries: list[tuple[str, str]] = []
    parent = ""
    for line in block.splitlines():
        names, desc = line[:LAYOUT_COLUMN], line[LAYOUT_COLUMN:]
        if not names.strip():
            entries[-1] = (entries[-1][0], f"{entries[-1][1]} {desc.strip()}")
            continue
        indented = names.startswith("  ")
        if not indented:
            parent = names.strip() if names.strip().endswith("/") and len(names.split()) == 1 else ""
        for name in names.split():
            entries.append((parent + name if indented else name, desc.strip()))
    return entries


def test_every_path_the_layout_names_exists():
    missing = [p for p, _ in layout() if "<" not in p and not (ROOT / p).exists()]
    assert missing == []


def test_the_layout_names_every_package_and_every_top_folder():
    named = {p.rstrip("/") for p, _ in layout()}
    packages = {f"src/medcalc_maintained/{p.name}" for p in (ROOT / "src" / "medcalc_maintained").iterdir()
                if p.is_dir() and p.name != "__pycache__"}
    assert packages - named == set()
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    top = {f.split("/")[0] for f in tracked if "/" in f}
    assert {t for t in top if not any(n == t or n.startswith(t + "/") for n in named)} == set()


def test_each_file_a_package_description_names_is_in_that_package():
    problems = []
    for path, desc in layout():
        if not path.startswith("src/medcalc_maintained/") or not path.endswith("/"):
            continue
        for name in re.findall(r"[\w/<>]+\.py\b", desc):
            if "<" in name:  # a pattern: <name>_harness/reader.py
                continue
            if not (ROOT / path / name).exists():
                problems.append(f"{path}: {name}")
    assert problems == []


# -- commands -----------------------------------------------------------------------------------------

def invocations(text: str) -> list[str]:
    """Every `medcalc-maintained ...` command line of ``text``, and every code span that starts with one
    of its commands (`release build --draft`), from the command on."""
    found = []
    commands = set(CLI.commands)  # type: ignore[attr-defined]
    for line in code_lines(text):
        for m in re.finditer(r"(?<![/\w-])medcalc-maintained((?:[ \t]+[^\s#|;&)]+)*)", line):
            found.append(" ".join(m.group(1).split()))
        if line.split(" ")[0] in commands and " " in line.strip() and "medcalc-maintained" not in line:
            found.append(line.strip())
    return found


def command_problems(command: str) -> list[str]:
    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    cmd = CLI
    where = "medcalc-maintained"
    for token in tokens:
        token = token.strip("[]")
        if token.startswith("#"):
            break
        if not token or token in ("...", "…"):
            continue
        if token.startswith("-"):
            options = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
            if token.split("=")[0] not in options:
                return [f"{command}: {where} has no option {token.split('=')[0]}"]
        elif hasattr(cmd, "commands"):  # a group
            if token not in cmd.commands:
                return [f"{command}: {where} has no command {token}"]
            cmd, where = cmd.commands[token], f"{where} {token}"
    return []


@pytest.mark.parametrize("path", TEXTS, ids=rel)
def test_every_command_the_docs_show_exists_with_its_options(path):
    found = invocations(path.read_text(encoding="utf-8"))
    assert [p for c in found for p in command_problems(c)] == []


def test_the_command_check_sees_a_wrong_command_and_a_wrong_option():
    text = ("```bash\nmedcalc-maintained release bild --out x\nmedcalc-maintained evaluate p.jsonl --againts v1.0 \\\n"
            "    --subset mini   # a comment --nope\n```\nand `release build --draft` and `propose --uid 3 [--nope X]`.\n")
    found = invocations(text)
    assert found == ["release bild --out x", "evaluate p.jsonl --againts v1.0 --subset mini", "release build --draft",
                     "propose --uid 3 [--nope X]"]
    assert [p for c in found for p in command_problems(c)] == [
        "release bild --out x: medcalc-maintained release has no command bild",
        "evaluate p.jsonl --againts v1.0 --subset mini: medcalc-maintained evaluate has no option --againts",
        "propose --uid 3 [--nope X]: medcalc-maintained propose has no option --nope"]


def make_targets() -> tuple[set[str], str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):(?!=)", text, flags=re.M))
    help_recipe = text[text.index("\nhelp:"):].split("\n\n")[0]
    return targets, help_recipe


@pytest.mark.parametrize("path", TEXTS, ids=rel)
def test_every_make_target_the_docs_show_exists_and_make_help_lists_it(path):
    targets, help_recipe = make_targets()
    shown = {t for line in code_lines(path.read_text(encoding="utf-8"))
             for t in re.findall(r"(?:^|\s)make ([a-z][\w-]*)", line)}
    assert shown - targets == set()
    assert {t for t in shown - {"help"} if f"make {t} " not in help_recipe} == set(), "add it to `make help`"


def test_make_docs_builds_the_site_strict_into_an_ignored_folder():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = text[text.index("\ndocs:"):].split("\n\n")[0]
    assert "mkdocs build --strict" in recipe
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["strict"] is True and config["site_dir"] == "site"
    assert "/site/" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()


# -- what the overview page says ----------------------------------------------------------------------

def test_the_overview_words_are_the_code_values():
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    words = dict(re.findall(r"^\| ([^|]+?) \| (.+) \|$", text, flags=re.M))

    def spans(cell: str) -> list[str]:
        return re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", cell))

    assert spans(words["`Label Status`"].split(": ", 1)[1]) == [*RECORD_STATUSES, UNVERIFIED, DISPUTED]
    assert sorted(spans(words["ledger record"].split(": ", 1)[1])) == sorted(DECISIONS)
    assert spans(words["release"].split("the configs")[1]) == list(CONFIGS)
    upstream = ROOT / "data" / "releases" / "1.0.0" / "original.parquet"  # upstream's rows as published
    if not upstream.is_file():
        pytest.skip(f"pipeline outputs absent (run `dvc repro`): {upstream}")
    assert f"v1.0 test split ({len(pd.read_parquet(upstream, columns=['Row Number'])):,} rows)" in text
