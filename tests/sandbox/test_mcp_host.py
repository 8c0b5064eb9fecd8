"""MCP servers in the sandbox, driven by the official SDK's ClientSession over sandbox.mcp_transport."""
import pathlib
import threading
import time

import anyio
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import McpError

import sandbox
from mcp_server import load_registry
from tool_outcome import RESULT_LIMIT

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"
WEATHER = CODE / "examples_weather.py"


def served(source, work, session_id=None):
    """Runs `work(session, server)` on a sandboxed server for `source`; returns (its value, the server)."""
    server = sandbox.mcp_transport(source, session_id)

    async def main():
        async with server as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session, server)

    return anyio.run(main), server


def failed_start(source, session_id=None):
    """A server whose source did not load: the error initialize raised, and the server."""
    server = sandbox.mcp_transport(source, session_id)

    async def main():
        async with server as (read, write), ClientSession(read, write) as session:
            with pytest.raises(McpError) as raised:
                await session.initialize()
            return raised.value

    return anyio.run(main), server


def gone(pid, within=3.0):
    """Whether the process (and its group) has ended, waiting a moment for the kernel."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not pathlib.Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.02)
    return False


async def _list(session, server):
    return (await session.list_tools()).tools


@pytest.mark.parametrize("path", sorted(CODE.glob("examples_*.py")), ids=lambda path: path.stem)
def test_tools_list_is_the_registrys_own_schema_and_annotations(path):

    listed, server = served(path.read_text(encoding="utf-8"), _list)
    registry = load_registry(str(path))
    assert [tool.name for tool in listed] == list(registry.tools)
    for tool in listed:
        own = registry.tools[tool.name]
        assert tool.inputSchema == own.parameters and tool.description == own.description
        hints = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
        expected = {"readOnlyHint": own.read_only, "destructiveHint": own.destructive}
        assert hints == {key: value for key, value in expected.items() if value is not None}
    assert server.layers.get("seccomp") is True and server.layers.get("landlock", 0) >= 1
    assert gone(server.pid)


def test_tools_call_ok_and_iserror_carry_the_registrys_text():
    async def work(session, server):
        ok = await session.call_tool("get_weather", {"city": "北京"})
        with pytest.raises(McpError) as unknown:      # no such tool: a protocol error, not a result
            await session.call_tool("get_wether", {"city": "北京"})
        unknown = unknown.value.error
        wrong = await session.call_tool("get_weather", {"city": 5, "unit": "kelvin"})
        return ok, unknown, wrong

    (ok, unknown, wrong), _ = served(WEATHER.read_text(encoding="utf-8"), work)
    registry = load_registry(str(WEATHER))
    assert ok.isError is False and ok.content[0].text == registry.call("get_weather", {"city": "北京"}).content
    assert unknown.code == -32602 and unknown.message == registry.call("get_wether", {"city": "北京"}).content
    assert wrong.isError is True and wrong.content[0].text.startswith("❌")
    assert wrong.content[0].text == registry.call("get_weather", {"city": 5, "unit": "kelvin"}).content


def test_an_async_tool_runs_on_the_sandboxed_server():
    path = CODE / "examples_async.py"

    async def work(session, server):
        return await session.call_tool("get_air_quality", {"city": "北京"})

    result, _ = served(path.read_text(encoding="utf-8"), work)
    assert result.isError is False
    assert result.content[0].text == load_registry(str(path)).call("get_air_quality", {"city": "北京"}).content


def test_a_tool_reading_stdin_gets_nothing_and_steals_no_message():
    source = ("from tool_registry import ToolRegistry\nregistry = ToolRegistry()\n\n\n"
              "@registry.tool('读一行输入')\ndef ask() -> str:\n    return input()\n")

    async def work(session, server):
        asked = await session.call_tool("ask", {})
        return asked, await session.list_tools()

    (asked, listed), server = served(source, work)
    assert asked.isError and "EOFError" in asked.content[0].text
    assert [tool.name for tool in listed.tools] == ["ask"] and server.ended is None


def test_a_syntax_error_is_the_servers_error_text_with_its_line():
    error, server = failed_start("from tool_registry import ToolRegistry\nregistry = ToolRegistry()\ndef f(:\n")
    assert error.error.code == -32603 and "第 3 行有语法错误" in error.error.message    # the client is told why
    assert "第 3 行有语法错误" in server.log() and server.ended is None
    assert gone(server.pid)


def test_an_exception_at_import_is_the_servers_error_text_after_its_prints():
    source = ("from tool_registry import ToolRegistry\nregistry = ToolRegistry()\n"
              "print('导入时的输出')\nraise RuntimeError('配置缺失')\n")
    _, server = failed_start(source)
    log = server.log()
    assert log.index("导入时的输出") < log.index("源码在导入时出错（第 4 行）：RuntimeError: 配置缺失")


def test_a_source_without_a_registry_says_how_to_write_one():
    _, server = failed_start("x = 1\n")
    assert "没有找到 ToolRegistry" in server.log()


@pytest.fixture
def quick_limits(configured):
    """Requests answered within 1 s, servers living 3 s; the zygote is already up, so a test's
    clock counts the server only."""
    configured(mcp_request_seconds=1.0, mcp_wall_seconds=3.0)
    served(WEATHER.read_text(encoding="utf-8"), _list)
    return 1.0, 3.0


def test_a_server_that_hangs_at_import_is_cut_when_initialize_goes_unanswered(quick_limits):
    started = time.monotonic()
    _, server = failed_start("import time\ntime.sleep(60)\n")
    assert time.monotonic() - started < quick_limits[0] + 2
    assert server.ended == "request_timeout"
    assert "超过 1 秒没有回答 initialize" in server.log() and "导入源码" in server.log()
    assert gone(server.pid)


def test_a_tool_that_hangs_is_cut_and_the_call_fails_instead_of_waiting(quick_limits, helpers):
    source = helpers.tool_source("import time\ntime.sleep(60)\nreturn 'woke'")

    async def work(session, server):
        with pytest.raises(McpError):
            await session.call_tool("attack", {})
        return server.ended

    started = time.monotonic()
    ended, server = served(source, work, session_id="mcp-hang")
    assert ended == "request_timeout" and "没有回答 tools/call" in server.log()
    assert time.monotonic() - started < quick_limits[0] + 2
    assert gone(server.pid)
    assert sandbox.session_usage("mcp-hang", kind="mcp")["on_probation"] is True


def test_a_server_kept_open_past_its_wall_clock_limit_is_ended(quick_limits):
    """Answering quickly is not enough: a run may not keep its server for longer than the limit."""
    async def work(session, server):
        started = time.monotonic()
        while time.monotonic() - started < quick_limits[1] + 3:
            try:
                await session.list_tools()
            except (McpError, anyio.ClosedResourceError):   # the latter once the session saw the end
                return time.monotonic() - started
            await anyio.sleep(0.2)
        return None

    lasted, server = served(WEATHER.read_text(encoding="utf-8"), work)
    assert lasted is not None and quick_limits[1] - 0.5 < lasted < quick_limits[1] + 2
    assert server.ended == "timeout" and "运行超过 3 秒" in server.log()
    assert gone(server.pid)


def test_a_huge_result_is_cut_by_the_registry_and_a_huge_print_ends_the_server(helpers):
    limits = sandbox.current_settings().limits

    async def huge_result(session, server):
        return await session.call_tool("attack", {})

    result, _ = served(helpers.tool_source("return 'z' * 10 ** 7"), huge_result)
    assert result.isError is False and len(result.content[0].text) <= RESULT_LIMIT + 200

    async def huge_print(session, server):
        with pytest.raises(McpError):
            await session.call_tool("attack", {})
        return server.ended

    ended, server = served(helpers.tool_source("for _ in range(10 ** 4):\n    print('x' * 10 ** 4)\nreturn 'printed'"), huge_print)
    assert ended == "output_too_large"
    assert len(server.log().encode()) < limits.output_bytes + 1024 and "超过 64 KB" in server.log()


def test_a_message_over_the_limit_ends_the_server_and_a_line_that_is_not_json_rpc_is_an_exception(helpers):
    """A tool that writes to the protocol channel itself (its descriptor is findable)."""
    writer = """
        import os
        for fd in range(3, 16):
            try:
                os.write(fd, DATA)
            except OSError:
                continue
        return 'written'"""

    async def bad_line(session, server):
        return await session.call_tool("attack", {})

    seen = []
    from mcp_client_loop import McpConnection

    connection = McpConnection(None, lambda: sandbox.mcp_transport(
        helpers.tool_source(writer.replace("DATA", "b'this is not json\\n'"))))
    try:
        connection.open()
        result = connection.call_tool("attack", {})
        seen = list(connection.wire)
    finally:
        connection.close()
    assert result["isError"] is False and result["content"][0]["text"] == "written"
    assert any("error" in message and "ValidationError" in message["error"]["message"] for _, message, _, _ in seen)

    async def huge_line(session, server):
        with pytest.raises(McpError):
            await session.call_tool("attack", {})
        return server.ended

    ended, server = served(helpers.tool_source(writer.replace("DATA", "b'[' * (3 << 20)")), huge_line)
    assert ended == "message_too_large" and "超过 1024 KB" in server.log()


def test_the_server_and_all_it_started_are_gone_when_the_block_ends(helpers):
    source = helpers.tool_source("""
        import threading, time
        threading.Thread(target=time.sleep, args=(60,)).start()
        return 'left a thread'""")

    async def work(session, server):
        return (await session.call_tool("attack", {})).content[0].text, server.pid

    (text, pid), server = served(source, work, session_id="mcp-gone")
    assert text == "left a thread"
    helpers.assert_group_gone(pid)
    assert sandbox.session_usage("mcp-gone", kind="mcp")["running"] == 0


def test_forget_session_ends_its_live_servers_and_only_those():
    source = WEATHER.read_text(encoding="utf-8")
    opened = threading.Event()
    release = threading.Event()
    other = {}

    def bystander():
        async def work(session, server):
            other["pid"] = server.pid
            opened.set()
            await anyio.to_thread.run_sync(release.wait, 20)
            return (await session.call_tool("get_weather", {"city": "上海"})).isError

        other["error"], other["server"] = served(source, work, session_id="mcp-stays")

    thread = threading.Thread(target=bystander)
    thread.start()
    assert opened.wait(20)

    async def work(session, server):
        assert sandbox.session_usage("mcp-forgotten", kind="mcp")["running"] == 1
        await anyio.to_thread.run_sync(sandbox.forget_session, "mcp-forgotten")
        with pytest.raises(McpError):
            await session.call_tool("get_weather", {"city": "北京"})
        return server.pid

    pid, server = served(source, work, session_id="mcp-forgotten")
    release.set()
    thread.join(20)
    assert server.ended == "session_ended" and "会话已经结束" in server.log()
    assert gone(pid)
    assert other["error"] is False and other["server"].ended is None


def test_a_session_over_its_limit_is_refused_in_chinese(configured):
    configured(mcp={"per_session_concurrent": 1}, refusal_pause_seconds=0.01, refusal_pause_max_seconds=0.01)
    source = WEATHER.read_text(encoding="utf-8")

    async def work(session, server):
        second = sandbox.mcp_transport(source, "mcp-limited")
        with pytest.raises(sandbox.Refusal) as refused:
            async with second:
                pass
        return refused.value

    refusal, _ = served(source, work, session_id="mcp-limited")
    assert refusal.code == "busy" and refusal.message == "你已经有 1 个 MCP 服务器在运行，请等这次运行结束后再试。"
    usage = sandbox.session_usage("mcp-limited", kind="mcp")
    assert usage["runs_last_minute"] == 1 and usage["running"] == 0 and usage["refused_in_a_row"] == 1


def test_the_course_loop_runs_on_the_sandboxed_server():
    from llm_clients import make_client
    from mcp_client_loop import run_mcp

    source = WEATHER.read_text(encoding="utf-8")
    found = list(run_mcp(make_client("offline"), "北京的天气怎么样？",
                         transport=lambda: sandbox.mcp_transport(source, "mcp-loop")))
    kinds = [event["type"] for event in found]
    assert "tool_result" in kinds and kinds[-1] == "final"
    result = next(event for event in found if event["type"] == "tool_result")
    assert result["content"] == load_registry(str(WEATHER)).call("get_weather", {"city": "北京"}).content
    methods = [event["method"] for event in found if event["type"] == "rpc"]
    assert methods[:3] == ["initialize", "initialize", "notifications/initialized"] and "tools/call" in methods


def test_the_course_loop_shows_the_sandboxed_servers_error_text():
    from llm_clients import make_client
    from mcp_client_loop import run_mcp

    broken = "from tool_registry import ToolRegistry\nregistry = ToolRegistry()\n1 / 0\n"
    found = list(run_mcp(make_client("offline"), "北京的天气怎么样？", transport=lambda: sandbox.mcp_transport(broken)))
    error = found[-1]
    assert error["type"] == "error" and error["code"] == "mcp_connect"
    assert "服务器回了 JSON-RPC 错误 -32603：源码在导入时出错（第 3 行）：ZeroDivisionError" in error["message"]


def test_a_source_over_the_limit_or_not_text_is_refused_before_any_server_starts():
    from sandbox.service import MAX_SOURCE_CHARS

    async def enter(source):
        server = sandbox.mcp_transport(source, "mcp-sizes")
        with pytest.raises(sandbox.Refusal) as refused:
            async with server:
                pass
        return refused.value, server.pid

    too_large, pid = anyio.run(enter, "#" * (MAX_SOURCE_CHARS + 1))
    assert too_large.code == "source_too_large" and f"超过 {MAX_SOURCE_CHARS} 个字符" in too_large.message
    assert pid is None
    not_text, _ = anyio.run(enter, b"registry = 1")
    assert not_text.code == "invalid_request"
    assert sandbox.session_usage("mcp-sizes", kind="mcp")["known"] is False


def test_a_source_at_the_limit_in_chinese_is_served():
    from sandbox.service import MAX_SOURCE_CHARS

    source = WEATHER.read_text(encoding="utf-8")
    source += "# " + "注" * (MAX_SOURCE_CHARS - len(source) - 3) + "\n"
    assert len(source) == MAX_SOURCE_CHARS
    listed, _ = served(source, _list)
    assert [tool.name for tool in listed] == list(load_registry(str(WEATHER)).tools)
