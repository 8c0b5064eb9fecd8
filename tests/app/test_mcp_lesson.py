"""The MCP lesson's parts without a browser: the timeline's JSON-RPC messages, the verdict of a
server that could not be reached, and the annotations as default permission rules."""
from __future__ import annotations

import events
import permissions

from lessons import timeline
from lessons.mcp import page as mcp_page
from lessons.mcp.timeline import render_rpc
from runs import headline


def rpc(direction, message, method=None, at_ms=1.0):
    return events.rpc(1, direction, message, method, at_ms)


def test_an_is_error_result_and_a_protocol_error_are_marked_as_failures():
    ok = rpc("receive", {"jsonrpc": "2.0", "id": 2, "result": {"content": [], "isError": False}}, "tools/call")
    failed = rpc("receive", {"jsonrpc": "2.0", "id": 3, "result": {"content": [], "isError": True}}, "tools/call")
    broken = rpc("receive", {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "Method not found"}},
                 "tools/lisst")
    assert "tw-rpc-failed" not in render_rpc(ok)
    assert "tw-rpc-failed" in render_rpc(failed) and "isError: true" in render_rpc(failed)
    shown = render_rpc(broken)
    assert "tw-rpc-failed" in shown and "协议层出错" in shown and "Method not found" in shown and "tools/lisst" in shown


def test_a_message_is_shown_with_its_direction_kind_id_and_moment_and_escaped():
    request = rpc("send", {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                           "params": {"name": "x", "arguments": {"q": "<img src=x onerror=alert(1)>"}}}, at_ms=12.6)
    shown = render_rpc(request)
    assert "→ 客户端发给服务器" in shown and "请求 <b>tools/call</b> id=7" in shown and "@ 13 ms" in shown
    assert "<img" not in shown and "&lt;img" in shown
    note = render_rpc(rpc("send", {"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert "通知" in note and "id=" not in note


def test_tools_call_messages_go_to_their_calls_in_order_and_responses_by_id():
    calls = [{"type": "tool_call", "turn": 1, "id": "a", "name": "get_weather"},
             {"type": "tool_call", "turn": 1, "id": "b", "name": "get_weather"}]
    wire = [rpc("send", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_weather"}}),
            rpc("send", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_weather"}}),
            rpc("receive", {"jsonrpc": "2.0", "id": 3, "result": {"isError": False}}, "tools/call"),
            rpc("receive", {"jsonrpc": "2.0", "id": 2, "result": {"isError": False}}, "tools/call"),
            rpc("send", {"jsonrpc": "2.0", "method": "notifications/cancelled"})]
    found, rest = timeline.rpc_by_call(calls, wire)
    assert [e["id"] for e in found[(1, "a")]] == [2, 2] and [e["id"] for e in found[(1, "b")]] == [3, 3]
    assert [e["method"] for e in rest] == ["notifications/cancelled"]


def test_the_calls_of_one_reply_find_their_messages_by_arguments_whatever_order_they_went_out_in():
    calls = [{"type": "tool_call", "turn": 1, "id": "a", "name": "get_weather", "arguments": {"city": "北京"}},
             {"type": "tool_call", "turn": 1, "id": "b", "name": "get_weather", "arguments": {"city": "上海"}}]
    wire = [rpc("send", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "get_weather", "arguments": {"city": "上海"}}}),
            rpc("send", {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                         "params": {"name": "get_weather", "arguments": {"city": "北京"}}}),
            rpc("receive", {"jsonrpc": "2.0", "id": 2, "result": {"isError": False}}, "tools/call"),
            rpc("receive", {"jsonrpc": "2.0", "id": 3, "result": {"isError": False}}, "tools/call")]
    found, rest = timeline.rpc_by_call(calls, wire)
    assert [e["id"] for e in found[(1, "a")]] == [3, 3] and [e["id"] for e in found[(1, "b")]] == [2, 2] and not rest


def test_a_server_that_could_not_be_reached_is_its_own_failure_never_a_success():
    run = [rpc("send", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
           events.error(1, "mcp_connect", "连不上 MCP 服务器：McpError: Connection closed。服务器的输出：源码在导入时出错")]
    found = headline.summary(run)
    assert not found["ok"] and found["verdict"]["state"] == "mcp_failed" and found["verdict"]["icon"] == "❌"
    assert "源码在导入时出错" in headline.headline(run)


def test_annotations_become_default_rules_read_only_allow_destructive_ask():
    listed = [{"name": "get_weather", "annotations": {"readOnlyHint": True}},
              {"name": "delete_user", "annotations": {"readOnlyHint": False, "destructiveHint": True}},
              {"name": "add_todo", "annotations": {"readOnlyHint": False, "destructiveHint": False}},
              {"name": "plain"},
              {"name": "odd", "annotations": {"readOnlyHint": True, "destructiveHint": True}}]
    rules = permissions.annotation_rules(listed)
    assert rules == {"get_weather": "allow", "delete_user": "ask", "odd": "allow"}
    assert permissions.validate_rules(rules) == []
    assert permissions.decide(rules, "add_todo", {}).verdict == "ask"        # no hint, no rule: a human decides
    assert permissions.decide({**rules, "delete_user": "deny"}, "delete_user", {}).verdict == "deny"   # yours win


def test_the_tab_gates_only_when_the_annotations_are_turned_on(monkeypatch):
    listed = {"ok": True, "tools": [{"name": "get_weather", "annotations": {"readOnlyHint": True}}]}
    monkeypatch.setattr(mcp_page.mcp_backend, "listed_tools", lambda source: listed if source == "ok" else {
        "ok": False, "tools": [], "fastmcp": [], "error": "第 3 行：语法错误"})
    assert mcp_page.annotation_gate("ok", False) == (None, "")
    assert mcp_page.annotation_gate("ok", True) == ({"get_weather": "allow"}, "")
    assert mcp_page.annotation_gate("broken", True) == ({}, "")          # no rule: every call asks


def test_a_server_the_sandbox_will_not_start_is_said_in_the_sandboxs_words():
    """A refusal (here: a source over the sandbox's size limit) is not "could not reach the server,
    run it on its own to see its error": the run says the sandbox did not start it, and why."""
    from types import SimpleNamespace

    from runs import mcp_backend
    from sandbox.service import MAX_SOURCE_CHARS

    execute = SimpleNamespace(source="#" * (MAX_SOURCE_CHARS + 1), session_id="refused-here")
    steps = list(mcp_backend.served_loop(execute, None, "你好"))
    end = steps[-1]
    assert end["type"] == "error" and end["code"] == "mcp_connect"
    assert end["message"] == f"沙箱没有启动 MCP 服务器：源码超过 {MAX_SOURCE_CHARS} 个字符，请精简后再试。"
    assert headline.verdict(steps)["state"] == "mcp_failed"
