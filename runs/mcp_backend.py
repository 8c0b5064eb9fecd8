"""The MCP lesson on the server: the editor's source served over MCP, the course's client
loop (code/mcp_client_loop.py) talking to that server, and the schema panel's views.

A run's server runs in the sandbox (`_Sandboxed`: sandbox.mcp_transport); the app
never imports the student's source itself. The panel's views come from the sandbox too, as a
schema method ("mcp": code/mcp_schema_diff.mcp_views, registered in app.py): for each tool,
the item the course's server lists in tools/list (mcp_server.mcp_tool, the server's own code)
and the one FastMCP would list for the same function. That is one quick extraction per edit,
cached like the registry's, instead of a server started for every keystroke; each run's
timeline shows the server's real tools/list answer.
"""
from __future__ import annotations

import json
from typing import Iterator

import mcp_client_loop
import mcp_schema_diff
import sandbox

from i18n import tr
from runs import backend


class _Sandboxed:
    """sandbox.mcp_transport(source, session_id), remembering a Refusal: a server the sandbox
    would not start is said in the sandbox's own words, not as a server that could not be reached."""

    def __init__(self, source: str, session_id: str | None, refused: list):
        self.server, self.refused = sandbox.mcp_transport(source, session_id), refused

    def log(self) -> str:
        return self.server.log()

    async def __aenter__(self):
        try:
            return await self.server.__aenter__()
        except sandbox.Refusal as refusal:
            self.refused.append(refusal)
            raise

    async def __aexit__(self, *exc_info):
        return await self.server.__aexit__(*exc_info)


# ------------------------------------------------------------------ a run

def served_loop(execute, client, question, **options) -> Iterator:
    """mcp_client_loop.run_mcp on a server for the source that `execute` (backend.executor)
    was made for, in the sandbox (a hardened process, charged to the session, opened when the
    client connects and ended when it disconnects); `options` go to the loop as
    run_function_calling's (max_turns, tool_choice…). The server lives as long as the loop (a
    loop closed while paused ends it)."""
    refused: list = []
    steps = mcp_client_loop.run_mcp(client, question, server=None,
                                    transport=lambda: _Sandboxed(execute.source, execute.session_id, refused),
                                    **options)

    def said_by_the_sandbox(event: dict) -> dict:
        if refused and event.get("type") == "error" and event.get("code") == "mcp_connect":
            return {**event, "message": tr("沙箱没有启动 MCP 服务器：{why}",
                                           "The sandbox did not start the MCP server: {why}").format(why=refused[0].message)}
        return event

    return (yield from backend.relayed(steps, said_by_the_sandbox))


def call_preview(event: dict) -> str:
    """The tools/call request a tool_call event becomes (what a rule's "ask" shows before it is sent)."""
    arguments = event.get("arguments") if isinstance(event.get("arguments"), dict) else event.get("raw_arguments")
    return json.dumps({"method": "tools/call", "params": {"name": event.get("name"), "arguments": arguments}},
                      ensure_ascii=False, indent=2)


# ------------------------------------------------------------------ the panel's views

def listed_tools(source: str, session_id: str | None = None) -> dict:
    """{"ok", "tools", "fastmcp", "error"}: per tool, the item the server lists in tools/list
    ({"name", "description", "inputSchema", "annotations"?}) and FastMCP's for the same function."""
    report = backend.extract(source or "", "mcp", False, session_id)
    views = report["tools"] if report["ok"] else []
    message = (report.get("error") or {}).get("message") or "没有说明原因"
    return {"ok": report["ok"], "tools": [view["listed"] for view in views],
            "fastmcp": [view["fastmcp"] for view in views], "error": None if report["ok"] else message}


def schema_views(source: str, registry_tools: list, session_id: str | None = None) -> dict:
    """The panel's data: tools/list as the client is shown it, FastMCP's items, and per tool whether
    inputSchema is the registry's parameters and what FastMCP derives differently.
    {"listed", "tools": [{"name", "listed", "same", "annotations", "differences", …}]}."""
    listed = listed_tools(source, session_id)
    served = {tool["name"]: tool for tool in listed["tools"]}
    theirs_by = {tool["name"]: tool for tool in listed["fastmcp"]}
    rows = []
    for tool in registry_tools:
        function = tool.get("function") or {}
        name = function.get("name")
        ours, theirs = served.get(name) or {}, theirs_by.get(name)
        found = mcp_schema_diff.differences(function.get("parameters") or {}, theirs["inputSchema"]) if theirs else []
        rows.append({"name": name, "listed": bool(ours), "same": ours.get("inputSchema") == function.get("parameters"),
                     "annotations": ours.get("annotations") or {},
                     "description_differs": theirs is not None and theirs.get("description") != function.get("description"),
                     "fastmcp_description": (theirs or {}).get("description"),
                     "output_schema": (theirs or {}).get("outputSchema"),
                     "differences": [{"where": d.where, "key": d.key, "kind": d.kind,
                                      "registry": d.registry, "fastmcp": d.fastmcp} for d in found]})
    return {"listed": listed, "tools": rows}
