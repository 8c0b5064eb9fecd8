"""code/mcp_server.py driven by the official SDK client over stdio, as a real MCP host would."""
import datetime
import pathlib
import subprocess
import sys

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

from mcp_server import load_registry

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"
EXAMPLES = sorted(CODE.glob("examples_*.py"))


async def _session_run(source, work, log_path="/dev/null", options=()):
    params = StdioServerParameters(command=sys.executable, args=[str(CODE / "mcp_server.py"), *options, str(source)])
    with open(log_path, "w") as log:                 # the server's stderr
        # A request unanswered for 20 s fails the test instead of hanging it.
        async with stdio_client(params, errlog=log) as (read, write), \
                ClientSession(read, write, read_timeout_seconds=datetime.timedelta(seconds=20)) as session:
            await session.initialize()
            return await work(session)


def over_stdio(source, work, log_path="/dev/null", options=()):
    return anyio.run(_session_run, source, work, log_path, options)


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


def test_an_unknown_tool_is_a_protocol_error_not_a_result():
    """The specification's error handling: an unknown tool is a JSON-RPC error (-32602); the
    registry's sentence, with its guess, is the error's message."""
    async def work(session):
        with pytest.raises(McpError) as raised:
            await session.call_tool("get_wether", {"city": "北京"})
        return raised.value.error

    error = over_stdio(CODE / "examples_weather.py", work)
    assert error.code == types.INVALID_PARAMS
    assert error.message == load_registry(str(CODE / "examples_weather.py")).call("get_wether", {}).content
    assert "是不是想用 get_weather" in error.message


def test_server_info_names_the_course_server_not_the_sdk():
    async def initialize(source, work, log_path, options):
        params = StdioServerParameters(command=sys.executable, args=[str(CODE / "mcp_server.py"), str(source)])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await session.initialize()

    info = anyio.run(initialize, CODE / "examples_weather.py", None, None, None).serverInfo
    assert (info.name, info.version) == ("tool-workshop", "1.0.0")


STUBBORN = """from tool_registry import ToolRegistry
import threading

registry = ToolRegistry()


@registry.tool("读一行输入")
def ask() -> str:
    return input()


@registry.tool("永远不返回")
def spin() -> str:
    while True:
        pass


@registry.tool("数一数服务器里的线程")
def threads() -> int:
    return threading.active_count()
"""



def test_a_tool_reading_stdin_gets_nothing_and_steals_no_message(tmp_path):
    source = tmp_path / "stubborn_tools.py"
    source.write_text(STUBBORN, encoding="utf-8")

    async def work(session):
        asked = await session.call_tool("ask", {})
        listed = await session.list_tools()
        return asked, listed

    asked, listed = over_stdio(source, work)
    assert asked.isError and "EOFError" in asked.content[0].text
    assert [tool.name for tool in listed.tools] == ["ask", "spin", "threads"]


async def _threads(session):
    return int((await session.call_tool("threads", {})).content[0].text)


async def _until_threads(session, count):
    """Asks the server for its thread count until it is `count` (a stopped thread ends soon after)."""
    for _ in range(100):
        if await _threads(session) == count:
            return True
        await anyio.sleep(0.1)
    return False


def test_a_tool_that_never_returns_is_answered_at_the_time_limit_and_stopped(tmp_path):
    source = tmp_path / "stubborn_tools.py"
    source.write_text(STUBBORN, encoding="utf-8")

    async def work(session):
        before = await _threads(session)
        result = await session.call_tool("spin", {})
        return result, await _until_threads(session, before)

    result, stopped = over_stdio(source, work, options=("--call-seconds", "1"))
    assert result.isError and result.meta == {"error_code": "timeout"}
    assert result.content[0].text == "❌ [超时] spin 超过 1 秒没有返回。请换一种做法，或如实告诉用户。"
    assert stopped


def test_a_cancelled_call_is_stopped(tmp_path):
    source = tmp_path / "stubborn_tools.py"
    source.write_text(STUBBORN, encoding="utf-8")
    sent = []                                           # the requests the client wrote, as on the wire

    class Recorded:
        def __init__(self, stream):
            self.stream = stream

        async def send(self, message):
            sent.append(message.message.model_dump(by_alias=True, exclude_none=True))
            await self.stream.send(message)

        async def aclose(self):
            await self.stream.aclose()

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            await self.aclose()

    async def run():
        params = StdioServerParameters(command=sys.executable,
                                       args=[str(CODE / "mcp_server.py"), "--call-seconds", "600", str(source)])
        async with stdio_client(params) as (read, write), ClientSession(read, Recorded(write)) as session:
            await session.initialize()
            before = await _threads(session)
            outcome = {}

            async def spin():
                try:
                    outcome["result"] = await session.call_tool("spin", {})
                except McpError as error:             # mcp 1.19's server answers "Request cancelled"
                    outcome["error"] = error

            async with anyio.create_task_group() as group:
                group.start_soon(spin)
                while await _threads(session) == before:    # until the tool's thread runs
                    await anyio.sleep(0.05)
                spin_id = next(m["id"] for m in sent if (m.get("params") or {}).get("name") == "spin")
                await session.send_notification(types.ClientNotification(types.CancelledNotification(
                    params=types.CancelledNotificationParams(requestId=spin_id, reason="用户不等了"))))
                stopped = await _until_threads(session, before)
                group.cancel_scope.cancel()
            return outcome, stopped

    outcome, stopped = anyio.run(run)
    assert "result" not in outcome and stopped


def test_the_server_exits_when_stdin_closes_even_with_a_tool_still_running(tmp_path):
    """The client closes stdin to end the server (the stdio transport's shutdown)."""
    source = tmp_path / "stubborn_tools.py"
    source.write_text(STUBBORN, encoding="utf-8")
    server = subprocess.Popen([sys.executable, str(CODE / "mcp_server.py"), "--call-seconds", "600", str(source)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "test", "version": "1"}}},
                 {"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "spin", "arguments": {}}}]
        import json
        server.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 0
        server.stdin.close()
        assert server.wait(timeout=30) == 0
    finally:
        server.kill()
        server.wait()


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
    source = tmp_path / "empty.py"
    source.write_text("x = 1\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(CODE / "mcp_server.py"), str(source)], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "没有找到 ToolRegistry" in done.stderr and done.stdout == ""


def test_a_source_that_fails_at_import_answers_initialize_with_its_own_line(tmp_path):
    """Every client, not only the course's, can say why: the error names the file and the line."""
    source = tmp_path / "broken_tools.py"
    source.write_text('from tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n'
                      'raise RuntimeError("配置缺失")\n', encoding="utf-8")

    async def connect():
        params = StdioServerParameters(command=sys.executable, args=[str(CODE / "mcp_server.py"), str(source)])
        log = tmp_path / "stderr.log"
        with open(log, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                with pytest.raises(McpError) as raised:
                    await session.initialize()
        return raised.value.error, log.read_text(encoding="utf-8")

    error, log = anyio.run(connect)
    assert error.code == types.INTERNAL_ERROR
    assert error.message == f"工具源码 {source} 第 5 行出错：RuntimeError: 配置缺失。请修正后再试。"
    assert "Traceback" not in log and error.message in log
