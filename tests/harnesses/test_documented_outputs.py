"""Following the README and docs/harnesses.md leaves `git status` clean (issue 48, item 5): every
place a documented harness command writes is named in it, and lies under a folder git ignores
(``runs/`` for what the harnesses write, ``models/`` for the checkpoint)."""

from __future__ import annotations

import inspect
import re
import shlex
import subprocess

import pytest

from tests.support.paths import ROOT

DOCS = ("README.md", "docs/harnesses.md")
# the tool of a command line -> the options that name where it writes (one of them must be given)
WRITES = {
    "harness lm-eval": ("--out",),
    "lm_eval": ("--output_path",),
    "inspect eval": ("--log-dir",),
    "helm-run": ("--output-path", "-o"),
}
ALSO = {"helm-run": ("--local-path",)}  # HELM's request cache lives in its local path


def commands(doc: str) -> list[tuple[str, list[str]]]:
    """(block text, argv) of every command line of the doc's ```bash blocks, continuations joined."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.split(" #")[0].strip().rstrip("&").strip()
            if line and not line.startswith("#"):
                out.append((block, shlex.split(line)))
    return out


def ignored(path: str) -> bool:
    probe = path.rstrip("/") + "/probe.txt"
    return subprocess.run(["git", "check-ignore", "-q", "--no-index", probe], cwd=ROOT).returncode == 0


def tool(argv: list[str]) -> str | None:
    words = " ".join(a for a in argv if "=" not in a or a.startswith("-"))
    return next((t for t in WRITES if re.search(rf"(^|[ /]){re.escape(t)}( |$)", words)), None)


@pytest.mark.parametrize("doc", DOCS)
def test_every_documented_harness_command_writes_under_an_ignored_folder(doc):
    seen = set()
    for _block, argv in commands(doc):
        name = tool(argv)
        if name is None:
            continue
        seen.add(name)
        for options in (WRITES[name], *([ALSO[name]] if name in ALSO else [])):
            given = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in options]
            assert given, f"{doc}: `{' '.join(argv)[:80]}...` does not say where it writes ({' or '.join(options)})"
            for path in given:
                assert path.startswith("runs/") and ignored(path), f"{doc}: {name} writes to {path}, not under runs/"
        for i, a in enumerate(argv):  # the checkpoint the commands read is the one `make model` makes
            if a.startswith("pretrained=") and "MODEL" not in a:
                assert ignored(a.split("=", 1)[1].split(",")[0])
    assert "lm_eval" in seen and "harness lm-eval" in seen, doc
    if doc == "docs/harnesses.md":
        assert seen == set(WRITES), seen


def test_vf_eval_runs_inside_runs_where_it_saves_to_outputs():
    # vf-eval has no output option: it saves under ./outputs of the directory it runs in
    blocks = [(block, argv) for block, argv in commands("docs/harnesses.md") if argv and argv[0] == "OPENAI_API_KEY=local"]
    assert blocks, "docs/harnesses.md shows no vf-eval command"
    for block, argv in blocks:
        assert "vf-eval" in argv
        before = block[:block.index("vf-eval")]
        assert re.search(r"(^|\n)mkdir -p runs && cd runs\b", before), block
        release = shlex.split(block[block.index("-a '"):])[1]
        assert '"../build/release"' in release  # the release path as seen from runs/


def test_the_defaults_of_our_harness_commands_are_ignored_folders():
    from medcalc_maintained.cli.harness import helm_model_command
    from medcalc_maintained.cli.model import model_command

    default = inspect.signature(helm_model_command).parameters["out"].default.default
    assert str(default) == "runs/prod_env" and ignored(str(default))
    assert ignored("models/smollm2")
    assert "models/NAME" in inspect.signature(model_command).parameters["out"].default.help
    assert not ignored("src/medcalc_maintained")  # the probe tells ignored from tracked
