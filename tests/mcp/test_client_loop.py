"""code/mcp_client_loop.py end to end: the offline model, the loop, the SDK client and the server process."""
import pathlib

from llm_clients import make_client
from mcp_client_loop import run_mcp
from mcp_server import load_registry

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"
WEATHER = CODE / "examples_weather.py"


def run(question, source=WEATHER, mistake=None, **options):
    return list(run_mcp(make_client("offline", mistake=mistake), question, source, **options))


def rpcs(found, method=None):
    return [e for e in found if e["type"] == "rpc" and (method is None or e["method"] == method)]


def test_a_whole_run_shows_the_protocol_and_answers_from_the_servers_results():
    registry = load_registry(str(WEATHER))
    found = run("北京和上海的天气怎么样？")
    kinds = [(e["direction"], e["kind"], e["method"]) for e in rpcs(found)]
    assert kinds[:5] == [("send", "request", "initialize"), ("receive", "result", "initialize"),
                         ("send", "notification", "notifications/initialized"),
                         ("send", "request", "tools/list"), ("receive", "result", "tools/list")]
    init = rpcs(found, "initialize")
    assert init[0]["id"] == init[1]["id"] and init[1]["result"]["serverInfo"]["name"] == "tool-workshop"
    assert init[0]["params"]["clientInfo"]["name"] == "tool-workshop-loop"
    listed = rpcs(found, "tools/list")[1]["result"]["tools"]
    assert [t["inputSchema"] for t in listed] == [t["function"]["parameters"] for t in registry.to_schemas()]
    # tools/list became the model's tools=, unchanged
    request = next(e for e in found if e["type"] == "request")
    assert request["tools"] == registry.to_schemas()
    # two parallel tool calls → two tools/call requests and two results, all before the tool_result events
    calls = rpcs(found, "tools/call")
    sent = [e for e in calls if e["direction"] == "send"]
    assert sorted(e["params"]["arguments"]["city"] for e in sent) == ["上海", "北京"]
    assert {e["id"] for e in sent} == {e["id"] for e in calls if e["direction"] == "receive"}
    results = [e for e in found if e["type"] == "tool_result"]
    assert [r["content"] for r in results] == [registry.invoke("get_weather", {"city": c}) for c in ("北京", "上海")]
    assert all(r["ok"] and r["message"]["role"] == "tool" for r in results)
    order = [e["type"] + (":" + e["method"] if e["type"] == "rpc" else "") for e in found]
    assert order.index("tool_call") < order.index("rpc:tools/call") < order.index("tool_result")
    assert found[-1]["type"] == "final" and "北京今天晴" in found[-1]["content"]
    assert all(e["turn"] >= 1 for e in found) and all(e["at_ms"] >= 0 for e in rpcs(found))


def test_a_wrong_tool_name_is_a_protocol_error_and_the_model_is_told_the_tool_does_not_exist():
    registry = load_registry(str(WEATHER))
    found = run("北京的天气怎么样？", mistake="unknown_tool")
    answer = [e for e in rpcs(found, "tools/call") if e["direction"] == "receive"][0]
    assert answer["kind"] == "error" and answer["error"]["code"] == -32602 and answer["result"] is None
    failed = [e for e in found if e["type"] == "tool_result" and not e["ok"]]
    assert failed and failed[0]["error_code"] == "unknown_tool"
    assert failed[0]["content"] == registry.invoke(failed[0]["name"], {"city": "北京"})   # the registry's own sentence
    assert failed[0]["message"]["role"] == "tool" and "没有得到结果" not in failed[0]["content"]
    assert found[-1]["type"] == "final"


def test_a_wrong_type_gets_the_registrys_text_not_the_sdks():
    found = run("未来 3 天北京的天气预报", mistake="wrong_type")
    failed = [e for e in found if e["type"] == "tool_result" and not e["ok"]]
    assert failed and failed[0]["error_code"] == "invalid_arguments"
    assert failed[0]["content"].startswith("❌ [参数错误]") and "Input validation" not in failed[0]["content"]


def test_unparsable_arguments_never_reach_the_server():
    found = run("北京的天气怎么样？", mistake="bad_json")
    failed = [e for e in found if e["type"] == "tool_result" and not e["ok"]]
    assert failed and failed[0]["error_code"] == "invalid_json"
    sent = [e["params"]["arguments"] for e in rpcs(found, "tools/call") if e["direction"] == "send"]
    assert all(isinstance(arguments, dict) for arguments in sent)
    first_turn_calls = [e for e in rpcs(found, "tools/call") if e["turn"] == failed[0]["turn"]]
    assert first_turn_calls == []


def test_a_server_that_cannot_start_is_one_error_event_in_chinese(tmp_path):
    found = run("北京的天气怎么样？", source=tmp_path / "missing.py")
    assert found[-1]["type"] == "error" and found[-1]["code"] == "mcp_connect"
    assert "服务器回了 JSON-RPC 错误 -32603：找不到工具源码文件" in found[-1]["message"]
    answer = rpcs(found)[-1]                                          # initialize was answered with the reason
    assert (answer["method"], answer["kind"]) == ("initialize", "error")
    assert not any(e["type"] == "request" for e in found)               # the model was never asked


def test_a_server_that_hangs_while_starting_is_given_up_on(tmp_path, monkeypatch):
    import time

    import mcp_client_loop
    monkeypatch.setattr(mcp_client_loop, "TIMEOUT", 3)
    source = tmp_path / "stuck.py"
    source.write_text("import time\ntime.sleep(120)\n", encoding="utf-8")
    start = time.perf_counter()
    found = run("北京的天气怎么样？", source=source)
    assert found[-1]["type"] == "error" and found[-1]["code"] == "mcp_connect"
    assert time.perf_counter() - start < 30                          # 3 s to give up, 2 s for the SDK to stop it


def test_a_server_that_dies_during_a_call_is_a_failed_tool_result_not_a_crash(tmp_path):
    source = tmp_path / "die_tools.py"
    source.write_text('import os\nfrom tool_registry import ToolRegistry\n\nregistry = ToolRegistry()\n\n\n'
                      '@registry.tool("关闭服务器进程。用户说“关闭服务器”时使用", destructive=True)\n'
                      'def shutdown_server(reason: str = "测试") -> str:\n    os._exit(3)\n', encoding="utf-8")
    found = run("请关闭服务器", source=source)
    result = next(e for e in found if e["type"] == "tool_result")
    assert not result["ok"] and result["error_code"] == "tool_exception"
    assert result["content"].startswith("❌ [工具异常] tools/call 没有得到结果")
    assert found[-1]["type"] in ("final", "error")


def test_single_step_overrides_pass_through_to_the_inner_loop():
    steps = run_mcp(make_client("offline"), "北京的天气怎么样？", WEATHER)
    found, sent = [], None
    while True:
        try:
            event = steps.send(sent)
        except StopIteration:
            break
        found.append(event)
        sent = {"result": "手写的结果：北京下雪"} if event["type"] == "tool_call" else None
    results = [e for e in found if e["type"] == "tool_result"]
    assert results and results[0]["content"] == "手写的结果：北京下雪"
    assert rpcs(found, "tools/call") == []                            # a written result is not executed
