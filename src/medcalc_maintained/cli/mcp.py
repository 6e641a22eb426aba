"""Command line of the calculator tools: ``serve-mcp`` (the MCP server) and ``evaluate-tools``
(grading an agent's tool-call traces). Argument parsing and printing only: the work is done by
:mod:`medcalc_maintained.tools.mcp_server` and :mod:`medcalc_maintained.scoring.tool_calls`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from medcalc_maintained.cli.common import console, fail, guarded
from medcalc_maintained.core.errors import DataError


def serve_mcp_command(
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP instead of stdio."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP host (with --http)."),
    port: int = typer.Option(8000, "--port", help="HTTP port (with --http)."),
    root: Optional[Path] = typer.Option(None, "--root", help="Project root for lookup_instance (default: found from the working directory)."),
) -> None:
    """Serve the 55 reference calculators as MCP tools (stdio by default; `--http` for streamable
    HTTP at http://HOST:PORT/mcp), plus `list_calculators` and `lookup_instance`."""
    import anyio

    from medcalc_maintained.project import Project
    from medcalc_maintained.tools import mcp_server

    try:
        project = Project.load(root)
    except Exception:  # noqa: BLE001 - the calculators work without a project; lookup_instance says why not
        project = None
    if http:
        anyio.run(mcp_server.serve_http, project, host, port)
    else:
        anyio.run(mcp_server.serve_stdio, project)


def evaluate_tools_command(
    traces: Path = typer.Argument(..., help='JSONL, one {"uid": int, "calls": [{"tool": str, "arguments": {...}}], "answer": str} per line.'),
    against: str = typer.Option(..., "--against", help="Release version whose `full` config holds the labels and the reference inputs."),
    split: str = typer.Option("test", "--split", help="Split of the rows."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the report as JSON to this file."),
) -> None:
    """Grade agents' tool-call traces: answer accuracy, calculator selection accuracy, input
    accuracy per input (unit-normalised, against the row's certified inputs where the release has
    them, config `inputs` from 2.4.0, else upstream's `Relevant Entities`; the summary says which) and
    the share of answers equal to the tool's own output."""
    from medcalc_maintained.core.atomic import write_text_atomic
    from medcalc_maintained.release import upstream as follow
    from medcalc_maintained.release.tables import INPUTS, configs_of, load_config
    from medcalc_maintained.scoring import tool_calls

    try:
        project = guarded(out)
        rows = load_config(project, against, "full")
        version = follow.plan_for(project).get(against).version
        inputs = load_config(project, against, INPUTS) if INPUTS in configs_of(version) else None
        rows, inputs = rows[rows["split"].astype(str) == split], (None if inputs is None else
                                                                  inputs[inputs["split"].astype(str) == split])
        report = tool_calls.grade_file(traces, rows, inputs)
    except DataError as exc:
        fail(exc)
    doc = report.to_dict()
    for line in report.summary_lines():
        console.print(line, highlight=False)
    if out is not None:
        write_text_atomic(out, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        console.print(f"wrote {out}")


def register(app: typer.Typer) -> None:
    app.command("serve-mcp")(serve_mcp_command)
    app.command("evaluate-tools")(evaluate_tools_command)
