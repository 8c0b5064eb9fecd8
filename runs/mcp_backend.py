"""The MCP lesson on the server: the editor's source served over MCP, the course's client
loop (code/mcp_client_loop.py) talking to that server, and the schema panel's views.

The server for a source runs in the sandbox (`_server_transport`: sandbox.mcp_transport); the
app never imports the student's source itself. The panel's FastMCP view is a schema method of the
sandbox ("fastmcp": code/mcp_schema_diff.fastmcp_schema, registered in app.py), so that
derivation imports the source in a sandbox worker too. What the MCP client is shown
(tools/list) comes from a real initialize + tools/list against the served source; like
backend's extractions, a listing is kept in one small cache shared by every tab (a class
starts from the same examples), only when it succeeded.
"""
from __future__ import annotations

import collections
import copy
import hashlib
import json
import threading
from typing import Iterator

import mcp_client_loop
import mcp_schema_diff
import sandbox

from runs import backend

CACHE_SIZE = 128
_listed: collections.OrderedDict = collections.OrderedDict()
_lock = threading.Lock()


def _server_transport(source: str, session_id: str | None) -> dict:
    """How the MCP client reaches a server for `source`: keyword arguments of
    mcp_client_loop.run_mcp / McpConnection. The server runs in the sandbox
    (sandbox.mcp_transport: a hardened process, charged to the session), opened when the
    client connects and ended when it disconnects."""
    return {"server": None, "transport": lambda: sandbox.mcp_transport(source, session_id)}


# ------------------------------------------------------------------ a run

def served_loop(execute, client, question, **options) -> Iterator:
    """mcp_client_loop.run_mcp on a server for the source that `execute` (backend.executor)
    was made for; `options` go to the loop as run_function_calling's (max_turns, tool_choice…).
    The server lives as long as the loop (a loop closed while paused ends it)."""
    return mcp_client_loop.run_mcp(client, question, **_server_transport(execute.source, execute.session_id),
                                   **options)


def call_preview(event: dict) -> str:
    """The tools/call request a tool_call event becomes (what a rule's "ask" shows before it is sent)."""
    arguments = event.get("arguments") if isinstance(event.get("arguments"), dict) else event.get("raw_arguments")
    return json.dumps({"method": "tools/call", "params": {"name": event.get("name"), "arguments": arguments}},
                      ensure_ascii=False, indent=2)


# ------------------------------------------------------------------ the panel's views

def _key(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def listed_tools(source: str, session_id: str | None = None) -> dict:
    """{"ok", "tools", "error", "layers"}: what tools/list answers for the served source, each
    tool as on the wire ({"name", "description", "inputSchema", "annotations"?}), and the
    isolation layers the sandboxed server reported (sandbox.mcp_transport's `layers`)."""
    key = _key(source or "")
    with _lock:
        found = _listed.get(key)
        if found is not None:
            _listed.move_to_end(key)
            return copy.deepcopy(found)
    log = ""
    try:
        connection = mcp_client_loop.McpConnection(**_server_transport(source or "", session_id))
        try:
            connection.open()
            tools = [tool.model_dump(by_alias=True, mode="json", exclude_none=True)
                     for tool in connection.list_tools()]
            layers = dict(getattr(connection.opened, "layers", None) or {})   # what the contained server reported
        finally:
            log = connection.server_log().strip()
            connection.close()
        result = {"ok": True, "tools": tools, "error": None, "layers": layers}
    except Exception as exc:      # the server's failure is shown in the panel, never raised
        said = f"服务器的输出：{log[-600:]}" if log else "请先单独运行服务器，看看它报什么错。"
        result = {"ok": False, "tools": [], "layers": {}, "error": f"initialize / tools/list 没有完成（{type(exc).__name__}: {exc}）。{said}"}
    if result["ok"]:
        with _lock:
            _listed[key] = copy.deepcopy(result)
            while len(_listed) > CACHE_SIZE:
                _listed.popitem(last=False)
    return result


def schema_views(source: str, registry_tools: list, session_id: str | None = None) -> dict:
    """The panel's data: tools/list as the client sees it, FastMCP's schemas for the same
    functions, and per tool whether inputSchema is the registry's parameters and what
    FastMCP derives differently. {"listed", "fastmcp", "tools": [{"name", "same", "differences"}]}."""
    listed = listed_tools(source, session_id)
    derived = backend.extract(source, "fastmcp", False, session_id)
    by_name = {tool["name"]: tool for tool in listed["tools"]}
    rows = []
    for index, tool in enumerate(registry_tools):
        function = tool.get("function") or {}
        name = function.get("name")
        served = by_name.get(name) or {}
        theirs = derived["tools"][index]["function"] if derived["ok"] and index < len(derived["tools"]) else None
        found = (mcp_schema_diff.differences(function.get("parameters") or {}, theirs.get("parameters") or {})
                 if theirs is not None else [])
        rows.append({"name": name, "listed": bool(served),
                     "same": served.get("inputSchema") == function.get("parameters"),
                     "annotations": served.get("annotations") or {},
                     "description_differs": theirs is not None and theirs.get("description") != function.get("description"),
                     "fastmcp_description": (theirs or {}).get("description"),
                     "differences": [{"where": d.where, "key": d.key, "kind": d.kind,
                                      "registry": d.registry, "fastmcp": d.fastmcp} for d in found]})
    return {"listed": listed, "fastmcp": derived, "tools": rows}


def annotations_of(listed: list[dict]) -> dict[str, dict]:
    """Tool name -> its annotations, from a tools/list answer."""
    return {tool.get("name"): dict(tool.get("annotations") or {}) for tool in listed if tool.get("name")}


def forget_listings() -> None:
    """Tests: the next listing is asked of a server again."""
    with _lock:
        _listed.clear()

