"""Clients against the local server over real HTTP with both real SDKs: raw bodies, streaming, failures, GLM quirks."""
import json
import socket
import urllib.request

import pytest

from llm_clients import LLMError, make_client
from offline.model import MODEL_NAME

WEATHER = [{"type": "function", "function": {
    "name": "get_weather", "description": "查询指定城市的当前天气",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "城市名"}},
                   "required": ["city"]}}}]
ASK = [{"role": "user", "content": "北京和上海的天气怎么样？"}]
PROVIDERS = ["openai", "glm"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_complete_keeps_raw_body_and_normalises_parallel_tool_calls(connect, server, provider):
    done = connect(provider).complete(ASK, tools=WEATHER)
    assert done.raw["model"] == MODEL_NAME and done.raw["object"] == "chat.completion"
    assert done.raw["choices"][0]["message"]["content"] is None       # exactly as sent, not re-serialised
    assert done.finish_reason == "tool_calls"
    calls = done.message["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{"city": "北京"}, {"city": "上海"}]
    assert done.message["content"] is None and done.usage["total_tokens"] > 0
    sent = server.requests[-1]
    assert sent["body"]["tools"] == WEATHER and sent["body"]["stream"] is False
    assert sent["auth_scheme"] == "Bearer"                            # zhipuai in plain bearer-key mode too


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_assembles_tool_call_fragments_by_index(connect, provider):
    items = list(connect(provider).stream(ASK, tools=WEATHER))
    done, deltas = items[-1], items[:-1]
    fragments = [d for d in deltas if "index" in d]
    assert {d["index"] for d in fragments} == {0, 1}
    assert len(fragments) > 4                                          # arguments really came in pieces
    for index, city in ((0, "北京"), (1, "上海")):
        joined = "".join(d["arguments"] for d in fragments if d["index"] == index)
        assert json.loads(joined) == {"city": city}
        assert done.message["tool_calls"][index]["function"]["arguments"] == joined
    assert isinstance(done.raw, list) and done.raw[-1]["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_assembles_text(connect, server, provider):
    server.queue({"message": {"content": "北京今天晴，气温 25 度，适合出门散步。"}})
    items = list(connect(provider).stream([{"role": "user", "content": "hi"}]))
    pieces = [d["content"] for d in items[:-1] if "content" in d]
    assert len(pieces) > 2 and "".join(pieces) == items[-1].text == "北京今天晴，气温 25 度，适合出门散步。"
    assert items[-1].finish_reason == "stop" and "tool_calls" not in items[-1].message


FAULTS = [("auth", "auth", "Key"), ("rate_limit", "rate_limit", "请等几秒再试"), ("server", "server", "稍后重试"),
          ("not_json", "bad_response", "不是 JSON"), ("cut_stream", "stream_cut", "断")]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("fault, code, words", FAULTS)
def test_every_provider_failure_becomes_llm_error(connect, server, provider, stream, fault, code, words):
    server.queue({"fault": fault})
    client = connect(provider)
    with pytest.raises(LLMError) as caught:
        if stream:
            list(client.stream(ASK, tools=WEATHER))
        else:
            client.complete(ASK, tools=WEATHER)
    assert caught.value.code == code
    assert words in str(caught.value) and "test-key-not-secret" not in str(caught.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout(connect, server, provider):
    server.queue({"fault": "slow", "seconds": 1.0})
    with pytest.raises(LLMError) as caught:
        connect(provider, timeout=0.2).complete(ASK)
    assert caught.value.code == "timeout" and "超时" in str(caught.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_connection_refused(provider):
    with socket.socket() as probe:          # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = make_client(provider, api_key="k", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(LLMError) as caught:
        client.complete(ASK)
    assert caught.value.code == "connection" and f"127.0.0.1:{port}" in str(caught.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_max_retries_is_passed_to_the_sdk(connect, server, provider):
    server.queue({"fault": "server"})
    done = connect(provider, max_retries=1).complete(ASK, tools=WEATHER)
    assert done.message["tool_calls"] and len(server.requests) == 2


@pytest.mark.parametrize("provider, env", [("openai", "OPENAI_API_KEY"), ("glm", "ZHIPUAI_API_KEY")])
def test_missing_key_says_which_variable(monkeypatch, provider, env):
    monkeypatch.delenv(env, raising=False)
    with pytest.raises(LLMError) as caught:
        make_client(provider, base_url="http://127.0.0.1:9/v1")
    assert caught.value.code == "auth" and env in str(caught.value)


def test_key_and_model_from_environment(monkeypatch, server):
    monkeypatch.setenv("ZHIPUAI_API_KEY", "env-key")
    monkeypatch.setenv("GLM_MODEL", "glm-4-flash")
    client = make_client("glm", base_url=server.url + "/api/paas/v4")
    client.complete(ASK)
    assert server.requests[-1]["body"]["model"] == "glm-4-flash" and server.requests[-1]["has_key"]


HISTORY = [
    {"role": "user", "content": "北京天气"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"北京\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": {"天气": "晴"}},
]


def test_glm_client_sends_what_glm_accepts(connect, server):
    done = connect("glm").complete(HISTORY, tools=WEATHER, tool_choice="auto", parallel_tool_calls=False)
    sent = server.requests[-1]["body"]
    assert "content" not in sent["messages"][1]                      # no "" next to tool_calls (error 1214)
    assert sent["messages"][2]["content"] == '{"天气": "晴"}'           # tool result as a string
    assert sent["tool_choice"] == "auto" and sent["parallel_tool_calls"] is False
    assert done.finish_reason == "stop" and "晴" in done.text


def test_glm_endpoint_rejects_empty_content_with_tool_calls(connect, server):
    # The same history sent unchanged (through the openai SDK) is what GLM refuses with 1214.
    client = make_client("openai", api_key="k", base_url=server.url + "/api/paas/v4")
    history = [dict(m) for m in HISTORY[:2]] + [{"role": "tool", "tool_call_id": "call_1", "content": "晴"}]
    with pytest.raises(LLMError) as caught:
        client.complete(history)
    assert caught.value.code == "bad_request" and "1214" in str(caught.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_none_parameters_are_omitted(connect, server, provider):
    connect(provider).complete(ASK)
    sent = server.requests[-1]["body"]
    assert not {"tools", "tool_choice", "parallel_tool_calls", "temperature", "stop"} & set(sent)


def test_control_endpoint_and_request_log_over_http(server):
    post = urllib.request.Request(server.url + "/_control", data=json.dumps({"queue": [{"fault": "auth"}]}).encode(),
                                  headers={"Content-Type": "application/json"})
    assert json.loads(urllib.request.urlopen(post).read())["pending"] == 1
    client = make_client("openai", api_key="secret-value", base_url=server.url + "/v1")
    with pytest.raises(LLMError):
        client.complete(ASK)
    log = urllib.request.urlopen(server.url + "/_requests").read().decode()
    assert json.loads(log)[-1]["body"]["messages"] == ASK and "secret-value" not in log


def test_offline_client_matches_the_server(server):
    offline = make_client("offline").complete(ASK, tools=WEATHER)
    remote = make_client("openai", api_key="k", model=MODEL_NAME, base_url=server.url + "/v1").complete(ASK, tools=WEATHER)
    assert offline.raw == remote.raw and offline.message == remote.message
