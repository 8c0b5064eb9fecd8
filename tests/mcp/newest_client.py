"""Run with the newest `mcp` (scripts/mcp_newest.sh's venv), not the app's: the official client of that
release against code/mcp_server.py served by `server_python` (the newest SDK's, or the app's 1.19),
and code/mcp_client_loop.py on the newest SDK. Prints one JSON object of what it saw;
tests/mcp/test_newest_sdk.py judges it.

    MCP_PYTHON tests/mcp/newest_client.py SERVER_PYTHON STUBBORN_TOOLS_FILE
"""
import importlib.metadata
import json
import pathlib
import sys

import anyio
import mcp
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"
WEATHER = CODE / "examples_weather.py"
sys.path.insert(0, str(CODE))


def params(server_python, source, *options):
    return StdioServerParameters(command=server_python, args=[str(CODE / "mcp_server.py"), *options, str(source)])


def dumped(result):
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def over_session(server_python):
    """The SDK's ClientSession (the API a host builds on): initialize, tools/list, tools/call."""
    async with stdio_client(params(server_python, WEATHER)) as (read, write), ClientSession(read, write) as session:
        info = dumped(await session.initialize())["serverInfo"]
        listed = [tool["name"] for tool in dumped(await session.list_tools())["tools"]]
        ok = dumped(await session.call_tool("get_weather", {"city": "北京"}))
        wrong = dumped(await session.call_tool("get_forecast", {"city": "上海", "days": "两天"}))
        try:
            await session.call_tool("get_wether", {"city": "北京"})
            unknown = None
        except MCPError as error:
            unknown = {"code": error.code, "message": error.message}
    return {"server_info": info, "listed": listed, "ok": ok, "wrong": wrong, "unknown": unknown}


async def over_client(server_python):
    """mcp.Client, the newest high-level client (it asks server/discover first)."""
    async with mcp.Client(params(server_python, WEATHER)) as client:
        listed = await client.list_tools()
        return [tool.name for tool in listed.tools]


async def stubborn(server_python, source):
    async with stdio_client(params(server_python, source, "--call-seconds", "1")) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        asked = dumped(await session.call_tool("ask", {}))
        spun = dumped(await session.call_tool("spin", {}))
        return {"ask": asked, "spin": spun}


def loop():
    """code/mcp_client_loop.py on this SDK, both ends: a whole run, and a wrong tool name."""
    from llm_clients import make_client
    from mcp_client_loop import run_mcp

    whole = list(run_mcp(make_client("offline"), "北京和上海的天气怎么样？", WEATHER))
    wrong = list(run_mcp(make_client("offline", mistake="unknown_tool"), "北京的天气怎么样？", WEATHER))
    return {"whole": [event["type"] for event in whole], "final": whole[-1].get("content"),
            "wrong": [event for event in wrong if event["type"] in ("tool_result", "rpc", "final")]}


if __name__ == "__main__":
    server_python, stubborn_source = sys.argv[1], sys.argv[2]
    print(json.dumps({"mcp": importlib.metadata.version("mcp"),
                      "session": anyio.run(over_session, server_python),
                      "client": anyio.run(over_client, server_python),
                      "stubborn": anyio.run(stubborn, server_python, stubborn_source),
                      "loop": loop() if server_python == sys.executable else None}, ensure_ascii=False))
