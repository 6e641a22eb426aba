"""``dvc-deps``: regenerate dvc.yaml's code deps and its header's stage list from the code, and the stage
table of docs/pipeline.md from dvc.yaml and the code (``make deps``)."""

from __future__ import annotations

import typer

from medcalc_maintained.cli.common import console, err, fail
from medcalc_maintained.core.errors import DataError


def dvc_deps(
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 naming each stage whose deps differ."),
) -> None:
    """Rewrite every stage's `${src}` deps in dvc.yaml (the import closure of its module and the data
    files it reads; a directory when every file under it is one of them) and the header's stage list;
    the rest of dvc.yaml is kept byte for byte. Then the stage table of docs/pipeline.md, from dvc.yaml
    and the code. Run it after adding an import or a stage; then `dvc repro`."""
    from medcalc_maintained.devtools import docs_tables
    from medcalc_maintained.devtools.dvc_deps import DVC_FILE, problems, regenerate
    from medcalc_maintained.project import find_root

    root = find_root()
    try:
        found = problems(root) + docs_tables.problems(root) if check else []
        lines, page = (None, False) if check else (regenerate(root), docs_tables.regenerate(root))
    except DataError as exc:
        fail(exc)
    for p in found:
        err.print(f"  {p}", highlight=False, soft_wrap=True)
    if found:
        fail(DataError(root / DVC_FILE, f"{len(found)} generated part(s) differ from the code; "
                                        "run `make deps` (medcalc-maintained dvc-deps)"), code=1)
    if check:
        console.print(f"{DVC_FILE}: the deps and the stage list are what the code says; so is {docs_tables.PAGE}'s "
                      "stage table", highlight=False, soft_wrap=True)
    elif lines is None:
        console.print(f"{DVC_FILE}: unchanged", highlight=False)
    else:
        console.print(f"{DVC_FILE}: rewritten ({lines[0]} -> {lines[1]} lines); "
                      "`dvc repro` next (`dvc status` shows the stages whose deps changed)", highlight=False, soft_wrap=True)
    if not check:
        console.print(f"{docs_tables.PAGE}: stage table {'rewritten' if page else 'unchanged'}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("dvc-deps")(dvc_deps)
