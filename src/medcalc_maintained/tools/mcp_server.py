"""An MCP server (official ``mcp`` SDK, low-level :class:`mcp.server.lowlevel.Server`) exposing the
reference calculators: one tool per calculator plus ``list_calculators`` and ``lookup_instance``.

Transports: stdio (:func:`serve_stdio`) and streamable HTTP (:func:`serve_http`). A tool result
carries the JSON of :func:`~medcalc_maintained.tools.calculator_tools.call_calculator` both as
text and as structured content; a bad input is a tool error (``isError``) whose text names the
input, its expected unit and range. ``lookup_instance`` returns the patient note and the
question of one row of a release's ``full`` config, never its label or entities; its ``version``
takes every form ``evaluate --against`` takes (``2.0.0``, ``v2.0.0``, ``v2.0``, ``2.0``, ``v1.0``).
No error text carries a server filesystem path (:func:`public_message`).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mcp_types as types
from mcp.server.lowlevel import Server

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.project import Project
from medcalc_maintained.tools import calculator_tools as T

if TYPE_CHECKING:
    from medcalc_maintained.core.rows import Row

def _metadata_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("medcalc-maintained")
    except PackageNotFoundError:
        return "0"


def tools() -> list[types.Tool]:
    """Every tool: the calculators (sorted by id), then ``list_calculators`` and ``lookup_instance``."""
    out = [types.Tool(name=name, title=T.load_all()[cid].name, description=T.describe(cid),
                      input_schema=T.input_schema(cid))
           for name, cid in T.tool_names().items()]
    out.append(types.Tool(
        name=T.TOOL_LIST, description="The calculators: tool name, MedCalc-Bench calculator id, name, output type, inputs.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False}))
    out.append(types.Tool(
        name=T.TOOL_LOOKUP,
        description="The patient note and question of one benchmark row (release version and uid); never its label.",
        input_schema={"type": "object", "additionalProperties": False, "required": ["version", "uid"],
                      "properties": {"version": {"type": "string", "description": "release version or tag, as evaluate --against takes it: 2.0.0, v2.0.0, v2.0 (first release of the 2.0 line), v1.0"},
                                     "uid": {"type": "integer"},
                                     "split": {"type": "string", "description": "split (default: test)"}}}))
    return out


class Instances:
    """Note and question of release rows: the :class:`~medcalc_maintained.core.rows.Row` objects of a
    release's ``full`` config, read once per version through the release tables."""

    def __init__(self, project: Project | None):
        self.project = project

    @lru_cache(maxsize=8)
    def _rows(self, version: str) -> dict[tuple[str, int], Row]:
        from medcalc_maintained.core.rows import rows_of
        from medcalc_maintained.release.tables import load_config

        rows: dict[tuple[str, int], Row] = {}
        # version() checked that the project is set
        for row in rows_of(load_config(cast(Project, self.project), version, "full")):
            rows.setdefault((row.split, row.uid), row)
        return rows

    def version(self, text: Any) -> str:
        """The release ``text`` names, by the resolver ``evaluate --against`` uses
        (:meth:`~medcalc_maintained.release.plan.Releases.resolve_version`)."""
        from medcalc_maintained.release.upstream import plan_for

        if self.project is None:
            raise T.ToolInputError("lookup_instance is unavailable: the server was started without a project root",
                                   ["version"])
        if not isinstance(text, str):
            raise T.ToolInputError(f"input 'version': {text!r} is not a string (e.g. \"v2.0\" or \"2.0.0\")",
                                   ["version"])
        plan = plan_for(self.project)
        version = plan.resolve_version(text)
        if version is None:
            raise T.ToolInputError(f"input 'version': {text!r} is no release or tag; releases (tags): "
                                   f"{plan.tags_text()}", ["version"])
        return version

    def lookup(self, version: Any, uid: Any, split: Any = "test") -> dict[str, Any]:
        if isinstance(uid, bool) or not isinstance(uid, int):
            raise T.ToolInputError(f"input 'uid': {uid!r} is not an integer", ["uid"])
        if not isinstance(split, str):
            raise T.ToolInputError(f"input 'split': {split!r} is not a string", ["split"])
        resolved = self.version(version)
        row = self._rows(resolved).get((split, uid))
        if row is None:
            raise T.ToolInputError(f"input 'uid': no row {uid} in split {split!r} of release {resolved}", ["uid"])
        return {"version": resolved, "split": split, "uid": uid, "Patient Note": str(row.note), "Question": str(row.question)}


# an absolute path in an error text: "/" not preceded by a word character, a dot or another "/"
_ABSOLUTE_PATH = re.compile(r"(?<![\w./])/(?:[^\s'\",:;()/]+/)*[^\s'\",:;()/]*")


def public_message(exc: Exception) -> str:
    """An exception's text for a client: a :class:`DataError` by its problem (and row, field),
    its file by name only; any other absolute path cut to its last part. The server's filesystem
    layout never reaches a client."""
    if isinstance(exc, DataError):
        where = Path(exc.path).name if exc.path else ""
        if exc.row is not None:
            where += f", row {exc.row}"
        if exc.field:
            where += f", field {exc.field!r}"
        text = f"{where}: {exc.problem}" if where else exc.problem
    else:
        text = str(exc)
    return _ABSOLUTE_PATH.sub(lambda m: m.group(0).rstrip("/").rsplit("/", 1)[-1] or "<path>", text)


def _result(payload: Any) -> types.CallToolResult:
    text = json.dumps(payload, ensure_ascii=False, indent=1)
    structured = payload if isinstance(payload, dict) else {"result": payload}
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def handle_call(name: str, arguments: dict[str, Any] | None, instances: Instances) -> types.CallToolResult:
    """One tool call: a result, or a tool error naming the problem (never an exception)."""
    try:
        if name == T.TOOL_LIST:
            return _result({"calculators": T.list_calculators()})
        if name == T.TOOL_LOOKUP:
            args = arguments or {}
            missing = [k for k in ("version", "uid") if k not in args]
            if missing:
                return _error(f"missing input(s) {missing}; expected version (e.g. v2.0 or 2.0.0) and uid (integer)")
            return _result(instances.lookup(args["version"], args["uid"], args.get("split", "test")))
        cid = T.calculator_for_tool(name)
        if cid is None:
            return _error(f"unknown tool {name!r}; call {T.TOOL_LIST} for the calculators")
        return _result(T.call_calculator(cid, arguments))
    except T.ToolInputError as exc:
        return _error(public_message(exc))
    except (DataError, KeyError, ValueError, OSError) as exc:
        return _error(f"{type(exc).__name__}: {public_message(exc)}")


def build_server(project: Project | None) -> Server:
    instances = Instances(project)
    tool_list = tools()

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list)

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        return handle_call(params.name, params.arguments, instances)

    schemas = {t.name: t.input_schema for t in tool_list}
    return Server("medcalc-maintained", version=_metadata_version(),
                  instructions="Reference implementations of the 55 MedCalc-Bench calculators, each citing its source.",
                  get_tool_input_schema=schemas.get, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve_stdio(project: Project | None) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(project)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(project: Project | None, host: str, port: int, path: str = "/mcp") -> None:
    import uvicorn

    app = build_server(project).streamable_http_app(streamable_http_path=path, host=host)
    await uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).serve()
