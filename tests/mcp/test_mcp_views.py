"""code/mcp_schema_diff.mcp_views, the page's per-function view: its `listed` item is what
code/mcp_server.py really answers in tools/list (the official SDK client over stdio), and
its `fastmcp` item what FastMCP derives for the same function."""
import pathlib

import pytest
from mcp.server.fastmcp.tools import Tool as FastMCPTool

from mcp_schema_diff import mcp_views, registered
from mcp_server import load_registry
from tests.mcp.test_server import over_stdio

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"


async def _listed(session):
    return [tool.model_dump(by_alias=True, mode="json", exclude_none=True)
            for tool in (await session.list_tools()).tools]


@pytest.mark.parametrize("example", ["examples_weather.py", "examples_authorization.py", "examples_payroll.py"])
def test_the_listed_item_is_the_servers_own_answer(example):
    registry = load_registry(str(CODE / example))
    views = [mcp_views(tool.func, tool.description) for tool in registry.tools.values()]
    assert [view["listed"] for view in views] == over_stdio(CODE / example, _listed)


def test_annotations_are_found_on_the_registered_tool():
    registry = load_registry(str(CODE / "examples_authorization.py"))
    for tool in registry.tools.values():
        assert registered(tool.func) is tool
        assert mcp_views(tool.func)["listed"]["annotations"] == {"readOnlyHint": False, "destructiveHint": True}


def test_the_fastmcp_item_is_fastmcps_for_the_same_function_and_description():
    registry = load_registry(str(CODE / "examples_weather.py"))
    tool = registry.tools["get_weather"]
    theirs = FastMCPTool.from_function(tool.func, description=tool.description)
    view = mcp_views(tool.func, tool.description)["fastmcp"]
    assert view["inputSchema"] == theirs.parameters and view["outputSchema"] == theirs.output_schema
    assert view["inputSchema"]["properties"]["city"]["title"] == "City"
    assert "additionalProperties" not in view["inputSchema"]
