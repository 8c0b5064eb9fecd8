"""/run_mcp through gradio_client against the real app: the same inputs and result shape as
/run_function_calling, with every JSON-RPC message among the events."""
from __future__ import annotations

import pytest
from gradio_client import Client

from lessons.editor_panel import EXAMPLE_SETS, example_text

WEATHER = example_text(EXAMPLE_SETS["天气"])
AUTHORIZATION = example_text(EXAMPLE_SETS["转账与删除用户（Schema ≠ 授权）"])
# Registers fine in the sandbox's extraction, but stops when the MCP server program loads it.
DIES_WHEN_SERVED = ("import sys\nfrom tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n\n"
                    '@registry.tool("回声")\ndef echo(text: str) -> str:\n    return text\n\n\n'
                    'if sys.argv[0].endswith("mcp_worker.py"):\n    raise RuntimeError("服务器不想启动")\n')


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False)
    yield client
    client.close()


def rpcs(result, method, kind=None):
    return [e for e in result["events"] if e["type"] == "rpc" and e["method"] == method
            and (kind is None or e["kind"] == kind)]


def test_the_same_inputs_and_result_shape_as_function_calling(client):
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    ours = [p["parameter_name"] for p in endpoints["/run_mcp"]["parameters"]]
    assert ours == [p["parameter_name"] for p in endpoints["/run_function_calling"]["parameters"]]
    over_mcp = client.predict(WEATHER, "北京今天天气怎么样？", api_name="/run_mcp")
    direct = client.predict(WEATHER, "北京今天天气怎么样？", api_name="/run_function_calling")
    assert set(over_mcp) == set(direct) and over_mcp["ok"] and over_mcp["verdict"]["state"] == "answered"
    assert over_mcp["final"] == direct["final"] and "北京" in over_mcp["final"]
    # The same calls and results reach the model. (Only the arguments differ: over MCP the loop records
    # what it sent; the registry's defaults are filled in on the server, out of the client's sight.)
    def seen(result):
        return [(e["type"], e.get("name"), e.get("content"), e.get("ok"), e.get("message"))
                for e in result["events"] if e["type"] in ("tool_call", "tool_result", "final")]
    assert seen(over_mcp) == seen(direct) and seen(direct)


def test_every_json_rpc_message_is_an_event_in_order(client):
    result = client.predict(WEATHER, "北京和上海今天天气怎么样？", api_name="/run_mcp")
    order = [(e["direction"], e["kind"], e["method"]) for e in result["events"] if e["type"] == "rpc"]
    assert order[:5] == [("send", "request", "initialize"), ("receive", "result", "initialize"),
                         ("send", "notification", "notifications/initialized"),
                         ("send", "request", "tools/list"), ("receive", "result", "tools/list")]
    calls = rpcs(result, "tools/call", "request")
    assert sorted(c["params"]["arguments"]["city"] for c in calls) == ["上海", "北京"]
    answers = rpcs(result, "tools/call", "result")
    assert sorted(a["id"] for a in answers) == sorted(c["id"] for c in calls)
    assert all(a["result"]["isError"] is False for a in answers)
    kinds = [e["type"] for e in result["events"]]
    assert kinds.index("rpc") < kinds.index("request")      # the tools were listed before the model was asked
    at = [e["at_ms"] for e in result["events"] if e["type"] == "rpc"]
    assert at == sorted(at)


def test_the_client_is_listed_the_registry_schema_itself(client):
    result = client.predict(AUTHORIZATION, "删除用户 42", api_name="/run_mcp")
    listed = rpcs(result, "tools/list", "result")[0]["result"]["tools"]
    registry = client.predict(AUTHORIZATION, False, "registry", api_name="/schema")["tools"]
    assert [t["inputSchema"] for t in listed] == [t["function"]["parameters"] for t in registry]
    assert [t["name"] for t in listed] == [t["function"]["name"] for t in registry] == ["transfer_money", "delete_user"]
    assert all(t["annotations"] == {"readOnlyHint": False, "destructiveHint": True} for t in listed)
    assert result["tools"] == registry


def test_a_failed_tool_is_an_is_error_result_and_the_verdict_says_so(client):
    result = client.predict(AUTHORIZATION, "给张三转账 8000 元", api_name="/run_mcp")
    answer = rpcs(result, "tools/call", "result")[0]["result"]
    assert answer["isError"] is True and "单笔转账上限是 5000 元" in answer["content"][0]["text"]
    tool_result = next(e for e in result["events"] if e["type"] == "tool_result")
    assert not tool_result["ok"] and tool_result["message"]["role"] == "tool"
    assert "单笔转账上限是 5000 元" in tool_result["message"]["content"]
    assert not result["ok"] and result["verdict"]["state"] == "stopped"             # the tool's own rule


def test_a_server_that_does_not_start_is_mcp_failed_with_its_own_words(client):
    result = client.predict(DIES_WHEN_SERVED, "回声一下你好", api_name="/run_mcp")
    assert not result["ok"] and result["verdict"]["state"] == "mcp_failed" and result["verdict"]["icon"] == "❌"
    assert "服务器不想启动" in result["verdict"]["detail"]
    assert not any(e["type"] == "request" for e in result["events"])     # the model was never asked
    assert rpcs(result, "initialize", "request")


def test_a_source_that_does_not_load_is_the_server_s_to_report_as_on_the_page(client):
    """The MCP server loads the source itself (lesson step 8): its words name the line, the model is never asked."""
    result = client.predict("from tool_registry import ToolRegistry\nregistry = ToolRegistry()\nx = (\n", "你好",
                            api_name="/run_mcp")
    assert not result["ok"] and result["verdict"]["state"] == "mcp_failed"
    assert "第 3 行" in result["verdict"]["detail"]
    assert not any(e["type"] == "request" for e in result["events"])


def test_a_run_over_mcp_exports_as_a_session_document(client):
    result = client.predict(WEATHER, "北京今天天气怎么样？", api_name="/run_mcp")
    document = client.predict(result, "mcp", WEATHER, "北京今天天气怎么样？", api_name="/export")
    assert document["lesson"] == "mcp" and any(e["type"] == "rpc" for e in document["events"])
