"""``dvc-deps``: regenerate dvc.yaml's code deps and its header's stage list from the code (``make deps``)."""

from __future__ import annotations

import typer

from medcalc_maintained.cli.common import console, err, fail
from medcalc_maintained.core.io import DataError, write_text_atomic


def dvc_deps(
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 naming each stage whose deps differ."),
) -> None:
    """Rewrite every stage's `${src}` deps in dvc.yaml (the import closure of its module and the data
    files it reads; a directory when every file under it is one of them) and the header's stage list;
    the rest of dvc.yaml is kept byte for byte. Run it after adding an import; then `dvc repro`."""
    from medcalc_maintained.devtools.dvc_deps import DVC_FILE, generate, problems
    from medcalc_maintained.project import find_root

    root = find_root()
    try:
        current, generated = generate(root)
        if check:
            found = problems(root)
            for p in found:
                err.print(f"  {p}", highlight=False, soft_wrap=True)
            if found:
                fail(DataError(root / DVC_FILE, f"{len(found)} generated part(s) differ from the code; "
                                                "run `make deps` (medcalc-maintained dvc-deps)"), code=1)
            console.print(f"{DVC_FILE}: the deps and the stage list are what the code says", highlight=False,
                          soft_wrap=True)
            return
    except DataError as exc:
        fail(exc)
    if current == generated:
        console.print(f"{DVC_FILE}: unchanged", highlight=False)
        return
    write_text_atomic(root / DVC_FILE, generated)
    console.print(f"{DVC_FILE}: rewritten ({current.count(chr(10))} -> {generated.count(chr(10))} lines); "
                  "`dvc repro` next (`dvc status` shows the stages whose deps changed)", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("dvc-deps")(dvc_deps)
