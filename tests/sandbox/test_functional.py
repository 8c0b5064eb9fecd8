"""What the app relies on: schemas, results, Chinese errors with the student's line numbers, status."""
import json
import os
import threading
import time

import pytest

import sandbox
import tool_outcome
from sandbox.messages import describe_mode
from sandbox.service import Sandbox
from sandbox.settings import Settings

GOOD = '''from typing import Literal
from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("把两个整数相加")
def add(a: int, b: int = 1) -> int:
    print("正在计算", a, b)
    return a + b


@registry.tool("查询天气")
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
    return f"{city} 晴 25°{unit}"


@registry.tool("做除法")
def divide(a: float, b: float) -> float:
    return a / b
'''

FUTURE = '''from __future__ import annotations
from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("重复一段文字")
def repeat(text: str, times: int) -> str:
    return text * times
'''


def test_extract_registry_schemas():
    result = sandbox.extract_schemas(GOOD)
    assert result["ok"] is True and result["error"] is None
    functions = {tool["function"]["name"]: tool["function"] for tool in result["tools"]}
    assert set(functions) == {"add", "get_weather", "divide"}
    assert functions["add"]["description"] == "把两个整数相加"
    assert functions["add"]["parameters"]["properties"]["a"]["type"] == "integer"
    assert functions["add"]["parameters"]["required"] == ["a"]
    assert functions["get_weather"]["parameters"]["properties"]["unit"]["enum"] == ["c", "f"]
    assert set(result["warnings"]) <= set(functions)
    json.dumps(result)  # JSON only


def test_extract_strict_marks_functions():
    result = sandbox.extract_schemas(GOOD, strict=True)
    assert result["ok"] and all(tool["function"].get("strict") is True for tool in result["tools"])


def test_naive_method_shows_the_future_annotations_trap(helpers, configured):
    configured(schema_methods=helpers.naive_method)          # as the app registers it
    proper = sandbox.extract_schemas(FUTURE)
    naive = sandbox.extract_schemas(FUTURE, method="naive")
    assert proper["ok"] and naive["ok"], (proper, naive)
    assert proper["tools"][0]["function"]["parameters"]["properties"]["times"]["type"] == "integer"
    assert naive["tools"][0]["function"]["name"] == "repeat"
    assert naive["tools"][0]["function"]["parameters"]["properties"]["times"]["type"] == "string"


def test_unknown_method_is_rejected():
    result = sandbox.extract_schemas(GOOD, method="magic")
    assert result["ok"] is False and result["error"]["code"] == "invalid_request"


def test_a_schema_method_must_name_a_module_and_a_function():
    for bad in ({"naive": "naive_schema"}, {"registry": "naive_schema:naive_function_schema"}):
        with pytest.raises(ValueError):
            sandbox.configure(schema_methods=bad)


def test_run_tool_returns_every_tool_outcome_field_and_only_the_sandbox_own():
    sandbox_own = {"stdout", "stderr", "wall_ms", "worker_pid", "error"}
    for result in (sandbox.run_tool(GOOD, "add", {"a": 1}), sandbox.run_tool(GOOD, "nope", {}),
                   sandbox.run_tool(None, "add", {}), sandbox.run_tool("def broken(:\n", "add", {})):
        assert set(result) == set(tool_outcome.FIELDS) | sandbox_own, result
        assert tool_outcome.ToolOutcome(**{name: result[name] for name in tool_outcome.FIELDS}).ok is result["ok"]


def test_failures_on_both_sides_of_the_boundary_use_the_one_label_table(helpers):
    looping = sandbox.run_tool(helpers.tool_source("while True:\n    pass"), "attack", {}, session_id=None)
    blocked = sandbox.run_tool(helpers.tool_source("import os\nos.kill(1, 9)"), "attack", {})
    broken = sandbox.run_tool("def broken(:\n", "add", {})
    for result in (looping, blocked, broken):                   # parent, worker, worker before the call
        label = tool_outcome.LABELS[result["error_code"]]
        assert result["content"].startswith(f"❌ [{label}] "), result["content"]


def test_run_tool_returns_content_arguments_and_stdout():
    result = sandbox.run_tool(GOOD, "add", {"a": "5"})
    assert result["ok"] is True, result
    assert result["content"] == "6"
    assert result["error_code"] is None
    assert result["arguments"] == {"a": 5, "b": 1}
    assert result["coercions"] and "5" in result["coercions"][0]
    assert result["stdout"] == "正在计算 5 1\n"
    assert result["duration_ms"] >= 0
    json.dumps(result)


def test_run_tool_accepts_a_json_string():
    result = sandbox.run_tool(GOOD, "get_weather", '{"city": "北京", "unit": "f"}')
    assert result["ok"] and result["content"] == "北京 晴 25°f"


def test_invalid_arguments_come_back_from_the_registry():
    result = sandbox.run_tool(GOOD, "add", {"a": "abc"})
    assert result["ok"] is False and result["error_code"] == "invalid_arguments"
    assert result["problems"] and "a" in result["problems"][0]


def test_unknown_tool():
    result = sandbox.run_tool(GOOD, "add_numbers", {"a": 1})
    assert result["ok"] is False and result["error_code"] == "unknown_tool"


def test_exception_names_type_message_and_student_line():
    result = sandbox.run_tool(GOOD, "divide", {"a": 1, "b": 0})
    assert result["ok"] is False and result["error_code"] == "tool_exception"
    line = GOOD.splitlines().index("    return a / b") + 1
    assert "ZeroDivisionError" in result["content"]
    assert f"第 {line} 行" in result["content"]
    assert result["error"]["line"] == line


def test_syntax_error_reports_its_line():
    source = GOOD.replace("    return a + b", "    return a +")
    line = source.splitlines().index("    return a +") + 1
    extracted = sandbox.extract_schemas(source)
    assert extracted["ok"] is False and extracted["error"]["code"] == "syntax_error"
    assert extracted["error"]["line"] == line and f"第 {line} 行" in extracted["error"]["message"]
    ran = sandbox.run_tool(source, "add", {"a": 1})
    assert ran["ok"] is False and ran["error_code"] == "syntax_error" and f"第 {line} 行" in ran["content"]


def test_exception_at_import_reports_its_line():
    source = GOOD + "\nlimit = int('很多')\n"
    line = len(source.splitlines())
    result = sandbox.extract_schemas(source)
    assert result["error"]["code"] == "module_exception"
    assert result["error"]["line"] == line
    assert "ValueError" in result["error"]["message"]


def test_module_without_registry():
    result = sandbox.extract_schemas("def add(a: int) -> int:\n    return a\n")
    assert result["ok"] is False and result["error"]["code"] == "no_registry"
    assert "ToolRegistry" in result["error"]["message"]


def test_time_limit_message(helpers):
    result = sandbox.run_tool(helpers.tool_source("while True:\n    pass"), "attack", {})
    assert result["error_code"] == "timeout"
    assert "运行超过 2 秒，检查是否有死循环或长时间等待" in result["content"]
    helpers.assert_group_gone(result["worker_pid"])


def test_blocked_capability_is_named(helpers):
    source = helpers.tool_source("import socket\nsocket.create_connection(('127.0.0.1', 9))")
    result = sandbox.run_tool(source, "attack", {})
    assert result["error_code"] == "blocked"
    assert "网络" in result["content"] and "请使用参数或示例数据" in result["content"]
    assert result["error"]["line"] == source.splitlines().index("    socket.create_connection(('127.0.0.1', 9))") + 1


def test_async_tools_and_threads_work():
    source = '''import asyncio
from concurrent.futures import ThreadPoolExecutor
from tool_registry import ToolRegistry

registry = ToolRegistry()


@registry.tool("异步地等一下")
async def later(text: str) -> str:
    await asyncio.sleep(0.01)
    return text.upper()


@registry.tool("用线程算平方")
def squares(n: int) -> list:
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda x: x * x, range(n)))
'''
    assert sandbox.run_tool(source, "later", {"text": "ok"})["content"] == "OK"
    assert sandbox.run_tool(source, "squares", {"n": 4})["content"] == "[0, 1, 4, 9]"


def test_status_reports_layers():
    state = sandbox.status()
    assert state["mode"] in ("sandboxed", "unsandboxed", "refused")
    assert isinstance(state["notice"], str) and state["notice"]
    layers = state["layers"]
    assert layers["rlimits"] is True and layers["audit_hook"] is True
    if os.geteuid() == 0:
        assert layers["uid"] != 0, "workers must drop root"


def test_public_serving_detection(monkeypatch, configured):
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("GRADIO_SERVER_NAME", raising=False)
    configured(Settings())
    assert sandbox.serving_publicly() is False
    assert Settings(server_name="0.0.0.0").serving_publicly() is True
    assert Settings(server_name="0.0.0.0", public=False).serving_publicly() is False
    configured(server_name="127.0.0.1")
    monkeypatch.setenv("SPACE_ID", "someone/tool-workshop")
    assert sandbox.serving_publicly() is True


def test_fail_closed_without_seccomp_when_public():
    layers = {"uid": 65534, "rlimits": True, "landlock": 0, "seccomp": False, "seccomp_error": "no libseccomp"}
    public = describe_mode(layers, public=True)
    assert public["mode"] == "refused" and "seccomp" in public["notice"]
    local = describe_mode(layers, public=False)
    assert local["mode"] == "unsandboxed" and "没有隔离" in local["notice"]
    assert describe_mode(dict(layers, seccomp=True), public=True)["mode"] == "sandboxed"


def test_refused_mode_stops_every_run(monkeypatch):
    refusing = Sandbox()                      # a sandbox of its own, whose workers report no seccomp
    monkeypatch.setattr(refusing, "status", lambda: {"mode": "refused", "layers": {}, "notice": "不能运行"})
    ran = refusing.run_tool(GOOD, "add", {"a": 1})
    assert ran["ok"] is False and ran["error_code"] == "sandbox_refused" and "不能运行" in ran["content"]
    extracted = refusing.extract_schemas(GOOD)
    assert extracted["ok"] is False and extracted["error"]["code"] == "sandbox_refused"


def test_per_session_limit(helpers, configured):
    configured(tool={"per_session_concurrent": 1})
    slow = helpers.tool_source("import time\ntime.sleep(1.0)\nreturn 'done'")
    first = {}
    thread = threading.Thread(target=lambda: first.update(sandbox.run_tool(slow, "attack", {}, session_id="s1")))
    thread.start()
    deadline = time.monotonic() + 5
    while not sandbox.session_usage("s1")["running"] and time.monotonic() < deadline:
        time.sleep(0.005)
    second = sandbox.run_tool(GOOD, "add", {"a": 1}, session_id="s1")
    other = sandbox.run_tool(GOOD, "add", {"a": 1}, session_id="s2")
    thread.join()
    assert second["error_code"] == "busy" and "任务" in second["content"]
    assert other["ok"] is True
    assert first["content"] == "done"


def test_seal_secrets_removes_keys_and_blocks_dumping(monkeypatch):
    import ctypes

    monkeypatch.setenv("WORKSHOP_SEAL_TEST_KEY", "sk-seal-test")
    sealed = sandbox.seal_secrets(["WORKSHOP_SEAL_TEST_KEY", "WORKSHOP_NOT_SET"])
    assert sealed == {"WORKSHOP_SEAL_TEST_KEY": "sk-seal-test"}
    assert "WORKSHOP_SEAL_TEST_KEY" not in os.environ
    libc = ctypes.CDLL(None)
    assert libc.prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE


def test_bad_inputs_do_not_raise():
    assert sandbox.run_tool(None, "add", {})["error_code"] == "invalid_request"
    assert sandbox.run_tool(GOOD, "add", {"a": object()})["error_code"] == "invalid_request"
    assert sandbox.extract_schemas("x" * 300_000)["error"]["code"] == "source_too_large"


def test_a_sandboxed_process_gives_up_the_servers_terminal():
    """The zygote and the shell's launcher stay in the server's session; started from a terminal,
    they would share it (/dev/tty) until they give it up. The session's leader keeps it."""
    import pty

    from sandbox import hardening

    def terminal():
        try:
            os.close(os.open("/dev/tty", os.O_RDWR))
            return "tty"
        except OSError:
            return "none"

    pid, master = pty.fork()
    if pid == 0:                    # a login shell: a session leader with a terminal
        try:
            member = os.fork()
            if member == 0:         # the server's zygote or launcher, in the shell's session
                before = terminal()
                hardening.detach_terminal()
                child = os.fork()
                if child == 0:
                    os.write(1, f"child:{terminal()}\n".encode())
                    os._exit(0)
                os.waitpid(child, 0)
                os.write(1, f"member:{before}->{terminal()}\n".encode())
                os._exit(0)
            os.waitpid(member, 0)
            os.write(1, f"leader:{terminal()}\n".encode())
        finally:
            os._exit(0)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 1024)
        except OSError:             # EIO once the terminal's last user is gone
            break
        if not chunk:
            break
        seen += chunk
    os.waitpid(pid, 0)
    os.close(master)
    assert seen.decode().split() == ["child:none", "member:tty->none", "leader:tty"]


def test_probation_ticks_are_a_subset_of_the_demoted_ticks_and_supervisors_wake_at_each_turn():
    from sandbox import cpu_share
    tick = cpu_share.DUTY_TICK_SECONDS
    moments = [i * tick / 7 for i in range(7 * 40)]
    ran = [now for now in moments if cpu_share.demoted_may_run(now)]
    on_probation = [now for now in moments if cpu_share.demoted_may_run(now, on_probation=True)]
    assert set(on_probation) <= set(ran)
    assert len(ran) / len(moments) == pytest.approx(1 / cpu_share.DEMOTED_CYCLE, abs=0.02)
    assert len(on_probation) / len(moments) == pytest.approx(1 / cpu_share.PROBATION_CYCLE, abs=0.02)
    for probation in (False, True):
        for now in moments:
            woken = now + cpu_share.until_next_turn(now, probation)
            # just past a change of turn, and no change missed on the way
            assert cpu_share.demoted_may_run(woken, probation) != cpu_share.demoted_may_run(woken - 0.002, probation)
            assert all(cpu_share.demoted_may_run(m, probation) == cpu_share.demoted_may_run(now, probation)
                       for m in moments if now <= m < woken - 0.002)
