"""An MCP server (official ``mcp`` SDK, low-level :class:`mcp.server.lowlevel.Server`) exposing the
reference calculators: one tool per calculator plus ``list_calculators`` and ``lookup_instance``.

Transports: stdio (:func:`serve_stdio`) and streamable HTTP (:func:`serve_http`). A tool result
carries the JSON of :func:`~medcalc_maintained.tools.calculator_tools.call_calculator` both as
text and as structured content; a bad input is a tool error (``isError``) whose text names the
input, its expected unit and range. ``lookup_instance`` returns the patient note and the
question of one row of a release's ``full`` config, never its label or entities.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from medcalc_maintained.core.io import DataError
from medcalc_maintained.project import Project
from medcalc_maintained.tools import calculator_tools as T

LOOKUP_FIELDS = ("Patient Note", "Question")


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
                      "properties": {"version": {"type": "string", "description": "release version, e.g. 2.0.0"},
                                     "uid": {"type": "integer"},
                                     "split": {"type": "string", "description": "split (default: test)"}}}))
    return out


class Instances:
    """Note and question of release rows, read once per version through the release tables."""

    def __init__(self, project: Project | None):
        self.project = project

    @lru_cache(maxsize=8)
    def _frame(self, version: str):
        from medcalc_maintained.release.tables import load_config

        if self.project is None:
            raise DataError("lookup_instance", "the server was started without a project root")
        return load_config(self.project, version, "full")

    def lookup(self, version: str, uid: Any, split: str = "test") -> dict[str, Any]:
        df = self._frame(str(version))
        if isinstance(uid, bool) or not isinstance(uid, int):
            raise T.ToolInputError(f"input 'uid': {uid!r} is not an integer", ["uid"])
        rows = df[(df["uid"].astype(int) == uid) & (df["split"].astype(str) == split)]
        if rows.empty:
            raise T.ToolInputError(f"input 'uid': no row {uid} in split {split!r} of release {version}", ["uid"])
        row = rows.iloc[0]
        return {"version": str(version), "split": split, "uid": uid,
                **{f: str(row[f]) for f in LOOKUP_FIELDS}}


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
                return _error(f"missing input(s) {missing}; expected version (e.g. 2.0.0) and uid (integer)")
            return _result(instances.lookup(args["version"], args["uid"], args.get("split", "test")))
        cid = T.calculator_for_tool(name)
        if cid is None:
            return _error(f"unknown tool {name!r}; call {T.TOOL_LIST} for the calculators")
        return _result(T.call_calculator(cid, arguments))
    except T.ToolInputError as exc:
        return _error(str(exc))
    except (DataError, KeyError, ValueError) as exc:
        return _error(f"{type(exc).__name__}: {exc}")


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
