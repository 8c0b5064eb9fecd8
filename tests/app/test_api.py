"""The named endpoints ("Use via API") through gradio_client against the real app."""
from __future__ import annotations

import pytest
from gradio_client import Client

from lessons.editor_panel import EXAMPLE_SETS, FUTURE_TRAP, example_text

WEATHER = example_text(EXAMPLE_SETS["天气"])
CALCULATOR = example_text(EXAMPLE_SETS["计算器"])


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False)
    yield client
    client.close()


def test_endpoints_are_listed(client):
    names = set(client.view_api(print_info=False, return_format="dict")["named_endpoints"])
    assert {"/schema", "/try_call", "/first_call", "/run_function_calling", "/run_react"} <= names
    for info in client.view_api(print_info=False, return_format="dict")["named_endpoints"].values():
        assert not any("key" in p["parameter_name"].lower() for p in info["parameters"])


def test_schema_from_source(client):
    result = client.predict(WEATHER, False, "registry", api_name="/schema")
    names = [t["function"]["name"] for t in result["tools"]]
    assert result["ok"] and names == ["get_weather", "get_forecast"]
    strict = client.predict(WEATHER, True, "registry", api_name="/schema")
    assert all(t["function"].get("strict") is True for t in strict["tools"])
    broken = client.predict("from tool_registry import ToolRegistry\nregistry = ToolRegistry()\nx = (\n", False,
                            "registry", api_name="/schema")
    assert not broken["ok"] and broken["error"]["line"] == 3


def test_naive_and_registry_disagree_on_the_future_trap(client):
    trap = example_text(FUTURE_TRAP)
    naive = client.predict(trap, False, "naive", api_name="/schema")
    right = client.predict(trap, False, "registry", api_name="/schema")
    count_naive = naive["tools"][0]["function"]["parameters"]["properties"]["count"]["type"]
    count_right = right["tools"][0]["function"]["parameters"]["properties"]["count"]["type"]
    assert (count_naive, count_right) == ("string", "integer")


def test_try_call_coerces_and_reports(client):
    ok = client.predict(WEATHER, "get_forecast", '{"city": "杭州", "days": "2"}', api_name="/try_call")
    assert ok["ok"] and ok["arguments"]["days"] == 2 and any("days" in c for c in ok["coercions"])
    bad = client.predict(WEATHER, "get_forecast", '{"city": "杭州", "days": "很多"}', api_name="/try_call")
    assert not bad["ok"] and bad["error_code"] == "invalid_arguments" and bad["content"].startswith("❌")
    unknown = client.predict(WEATHER, "nope", "{}", api_name="/try_call")
    assert unknown["error_code"] == "unknown_tool"


def test_run_function_calling_with_a_simulated_mistake(client):
    result = client.predict(WEATHER, "杭州未来 5 天的天气预报", "auto", True, "unknown_tool", "offline", "",
                            api_name="/run_function_calling")
    results = [e for e in result["events"] if e["type"] == "tool_result"]
    assert result["ok"] and "杭州" in result["final"]
    assert results[0]["error_code"] == "unknown_tool" and results[-1]["ok"]
    assert results[0]["message"]["role"] == "tool" and results[0]["message"]["tool_call_id"] == results[0]["id"]


def test_first_call_streams_one_request_and_runs_no_tool(client):
    """Only the question is needed: streamed by default, every fragment kept with when it came and whether
    the arguments so far parse; the request event carries the body the client sent."""
    result = client.predict("北京今天天气怎么样？", api_name="/first_call")
    types = [e["type"] for e in result["events"]]
    assert types[:2] == ["purpose", "request"] and types[-2:] == ["response", "assembled"]
    assert "tool_call" not in types and "tool_result" not in types              # asked once, nothing ran
    body = result["events"][1]["body"]
    assert body["stream"] is True and body["tools"][0]["function"]["name"] == "get_weather"
    pieces = [e for e in result["events"] if e["type"] == "delta" and "index" in e]
    assert [p["closed"] for p in pieces] == [False] * (len(pieces) - 1) + [True] and len(pieces) >= 3
    assert pieces[0]["id"] and pieces[0]["name"] == "get_weather"
    [call] = result["events"][-1]["calls"]
    assert call["parsed"] == {"city": "北京"} and call["closed_at"] == len(pieces)
    assert result["ok"] and result["verdict"]["state"] == "requested" and result["verdict"]["icon"] == "📨"
    whole = client.predict("北京今天天气怎么样？", False, api_name="/first_call")
    assert not any(e["type"] == "delta" for e in whole["events"]) and whole["events"][-1]["calls"][0]["fragments"] == 0
    hello = client.predict("你好", api_name="/first_call")
    assert hello["events"][-1]["finish_reason"] == "stop" and hello["events"][-1]["calls"] == []
    assert hello["verdict"]["state"] == "answered"       # its purpose: no tool


def test_first_call_on_a_real_provider_without_a_server_key_is_refused_clearly(client):
    result = client.predict("北京今天天气怎么样？", True, "openai", "gpt-4o-mini", api_name="/first_call")
    assert not result["ok"] and "API Key" in result["error"]["message"] and result["events"] == []


def test_run_react_and_json_from_text(client):
    react = client.predict(CALCULATOR, "帮我算一下 (3+5)*12", "react", "", "offline", "", api_name="/run_react")
    assert react["ok"] and "96" in react["final"]
    assert any(e["type"] == "parse" and e["ok"] and e["kind"] == "action" for e in react["events"])
    assert any(e["type"] == "tool_result" and e["message"]["content"].startswith("Observation:") for e in react["events"])
    as_json = client.predict(CALCULATOR, "帮我算一下 (3+5)*12", "json", "", "offline", "", api_name="/run_react")
    assert as_json["ok"] and "96" in as_json["final"]


def test_a_real_provider_without_a_server_key_is_refused_clearly(client):
    result = client.predict(WEATHER, "广州冷不冷？", "auto", True, "", "openai", "gpt-4o-mini",
                            api_name="/run_function_calling")
    assert not result["ok"] and "API Key" in result["error"]["message"]


def test_an_api_client_reads_the_root_page_s_config_only(app_url):
    import json
    import urllib.request

    from serving.lesson_addresses import with_page

    def config(query: str = "") -> dict:
        with urllib.request.urlopen(app_url.rstrip("/") + "/config" + query, timeout=30) as response:
            return json.loads(response.read())

    plain, first, other = config(), config("?page="), config("?page=function-calling")
    assert plain["components"] == first["components"] and plain["dependencies"] == first["dependencies"]
    assert {c["id"] for c in other["components"]} - {c["id"] for c in plain["components"]}   # not every lesson's
    assert {"run_function_calling", "run_react", "schema"} <= {d.get("api_name") for d in plain["dependencies"]}
    assert with_page("/config", b"") == b"page=" and with_page("/config", b"deep_link=x") == b"deep_link=x&page="
    assert with_page("/config", b"page=mcp") == b"page=mcp" and with_page("/gradio_api/info", b"") == b""
