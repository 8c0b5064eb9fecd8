"""code/mcp_server.py driven by the official SDK client over stdio, as a real MCP host would."""
import pathlib
import sys

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_server import load_registry

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"
EXAMPLES = sorted(CODE.glob("examples_*.py"))


async def _session_run(source, work, log_path="/dev/null"):
    params = StdioServerParameters(command=sys.executable, args=[str(CODE / "mcp_server.py"), str(source)])
    with open(log_path, "w") as log:                 # the server's stderr
        async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session)


def over_stdio(source, work, log_path="/dev/null"):
    return anyio.run(_session_run, source, work, log_path)


@pytest.fixture(scope="module")
def listings():
    """tools/list of every example set, the servers started side by side."""
    found = {}

    async def list_all():
        async def one(path):
            async def work(session):
                return (await session.list_tools()).tools
            found[path.name] = await _session_run(path, work)

        async with anyio.create_task_group() as group:
            for path in EXAMPLES:
                group.start_soon(one, path)

    anyio.run(list_all)
    return found


def test_every_example_set_is_served_with_the_registrys_own_schema(listings):
    assert len(EXAMPLES) >= 10 and set(listings) == {path.name for path in EXAMPLES}
    for path in EXAMPLES:
        registry = load_registry(str(path))
        listed = {tool.name: tool for tool in listings[path.name]}
        assert list(listed) == list(registry.tools), path.name
        for name, tool in registry.tools.items():
            assert listed[name].inputSchema == tool.parameters, (path.name, name)
            assert listed[name].description == tool.description, (path.name, name)


def test_annotations_follow_the_decorator(listings):
    for path in EXAMPLES:
        registry = load_registry(str(path))
        for served in listings[path.name]:
            tool = registry.tools[served.name]
            hints = served.annotations
            if tool.read_only is None and tool.destructive is None:
                assert hints is None, served.name
                continue
            assert (hints.readOnlyHint, hints.destructiveHint) == (tool.read_only, tool.destructive), served.name
    weather = {tool.name: tool.annotations for tool in listings["examples_weather.py"]}
    assert weather["get_weather"].readOnlyHint is True and weather["get_weather"].destructiveHint is None
    money = {tool.name: tool.annotations for tool in listings["examples_authorization.py"]}
    assert (money["delete_user"].readOnlyHint, money["delete_user"].destructiveHint) == (False, True)


CALLS = [
    ("get_weather", {"city": "北京"}, True, None),                        # plain success
    ("get_forecast", {"city": "上海", "days": "2"}, True, None),          # "2" → 2: the registry coerces;
                                                                          # the SDK's own check would refuse
    ("get_forecast", {"city": "上海", "days": "两天"}, False, "invalid_arguments"),
    ("get_weather", {"city": "北京", "unit": "k"}, False, "invalid_arguments"),
    ("get_weather", {}, False, "invalid_arguments"),                      # missing required argument
    ("get_weather", {"city": "拉萨"}, False, "tool_exception"),           # the tool itself raises
    ("get_wether", {"city": "北京"}, False, "unknown_tool"),
]


def test_tool_failures_are_iserror_results_carrying_the_registrys_text():
    registry = load_registry(str(CODE / "examples_weather.py"))

    async def work(session):
        return [await session.call_tool(name, arguments) for name, arguments, _, _ in CALLS]

    results = over_stdio(CODE / "examples_weather.py", work)
    for (name, arguments, ok, code), result in zip(CALLS, results):
        expected = registry.call(name, arguments)
        assert (expected.ok, expected.error_code) == (ok, code), (name, arguments)
        assert result.isError is (not ok), (name, arguments)
        assert [block.type for block in result.content] == ["text"]
        assert result.content[0].text == expected.content, (name, arguments)
        assert (result.meta or {}).get("error_code") == code
    assert "Input validation error" not in "".join(r.content[0].text for r in results)
    assert "是不是想用 get_weather" in results[-1].content[0].text


def test_prints_in_a_tool_do_not_break_the_protocol_and_sources_outside_code_work(tmp_path):
    source = tmp_path / "noisy_tools.py"
    source.write_text('from tool_registry import ToolRegistry\n\nprint("导入时打印")\nregistry = ToolRegistry()\n\n\n'
                      '@registry.tool("打印后返回")\ndef shout(word: str) -> str:\n'
                      '    print("工具里打印", word)\n    import os\n    os.system("echo 子进程也打印")\n'
                      '    return word * 2\n', encoding="utf-8")

    async def work(session):
        first = await session.call_tool("shout", {"word": "好"})
        second = await session.call_tool("shout", {"word": "再"})
        return first, second

    first, second = over_stdio(source, work, tmp_path / "stderr.log")
    assert (first.isError, first.content[0].text) == (False, "好好")
    assert (second.isError, second.content[0].text) == (False, "再再")
    log = (tmp_path / "stderr.log").read_text(encoding="utf-8")
    assert "导入时打印" in log and "工具里打印 好" in log and "子进程也打印" in log


def test_a_file_without_a_registry_is_refused_in_chinese(tmp_path):
    import subprocess
    source = tmp_path / "empty.py"
    source.write_text("x = 1\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(CODE / "mcp_server.py"), str(source)], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "没有找到 ToolRegistry" in done.stderr and done.stdout == ""
