"""8.1, the first call (code/first_call.py): one request and its response, streamed and not, in
process and over real HTTP with the real openai and zhipuai SDKs against the local server."""
import ast
import json
import os
import subprocess
import sys
import typing

import pytest

import events as event_types
from first_call import FINISH_REASONS, first_call, json_error, request_body, sdk_code
from llm_clients import make_client

PROVIDERS = ["openai", "glm"]
TWO_CITIES = "北京和上海今天天气怎么样？"


def run(client, question=None, **options):
    done = list(first_call(client, **({"question": question} if question else {}), **options))
    json.dumps(done, ensure_ascii=False)                    # a page and an export keep them as they are
    for event in done:
        hints = typing.get_type_hints({"delta": event_types.DeltaEvent, "request": event_types.RequestEvent,
                                       "response": event_types.ResponseEvent, "error": event_types.ErrorEvent,
                                       "assembled": event_types.AssembledEvent}[event["type"]])
        assert set(event) <= set(hints), event["type"]
    return done


def fragments(done):
    return [e for e in done if e["type"] == "delta" and "index" in e]


def check_streamed_call(done, city):
    pieces = fragments(done)
    assert len(pieces) >= 3                                             # the name, then arguments in pieces
    first = pieces[0]
    assert first["id"] and first["name"] == "get_weather" and first["arguments"] == ""
    assert all("id" not in p and not p["name"] for p in pieces[1:])     # id and name come once, first
    times = [p["at_ms"] for p in pieces]
    assert times == sorted(times) and times[0] >= 0
    assert "".join(p["arguments"] for p in pieces) == pieces[-1]["so_far"]
    # the arguments are not JSON until the last fragment: the call cannot run before that
    assert [p["closed"] for p in pieces] == [False] * (len(pieces) - 1) + [True]
    assert all(isinstance(p["json_error"], str) and p["json_error"] for p in pieces[:-1])
    assert pieces[-1]["json_error"] is None
    response = next(e for e in done if e["type"] == "response")
    assembled = done[-1]
    assert assembled["type"] == "assembled" and assembled["streamed"] is True
    [call] = assembled["calls"]
    assert call["parsed"] == {"city": city} and call["id"] == first["id"] and call["name"] == "get_weather"
    assert call["fragments"] == len(pieces) == call["closed_at"]
    assert call["closed_ms"] == pieces[-1]["at_ms"] and call["first_ms"] == first["at_ms"]
    assert call["closed_ms"] <= assembled["done_ms"]
    assert response["message"]["tool_calls"][0]["function"]["arguments"] == call["arguments"]
    assert isinstance(response["raw"], list) and len(response["raw"]) > len(pieces)   # every chunk, as it came
    assert assembled["finish_reason"] == "tool_calls" == response["finish_reason"]
    assert assembled["meaning"] == FINISH_REASONS["tool_calls"]


def test_offline_stream_records_every_fragment_and_when_the_arguments_close():
    check_streamed_call(run(make_client("offline"), stream=True), "北京")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_same_through_each_sdk_over_http(connect, server, provider):
    done = run(connect(provider), stream=True)
    check_streamed_call(done, "北京")
    assert server.requests[-1]["body"]["stream"] is True


@pytest.mark.parametrize("provider", PROVIDERS)
def test_without_streaming_the_call_arrives_whole_with_the_response(connect, server, provider):
    done = run(connect(provider))
    assert [e["type"] for e in done] == ["request", "response", "assembled"]
    response, assembled = done[1], done[2]
    assert response["raw"]["object"] == "chat.completion"                  # the body as the server sent it
    [call] = assembled["calls"]
    assert call["fragments"] == 0 and call["closed_at"] is None
    assert call["closed_ms"] == call["first_ms"] == assembled["done_ms"] and call["parsed"] == {"city": "北京"}
    assert assembled["streamed"] is False and assembled["finish_reason"] == "tool_calls"


def test_two_calls_stream_one_after_the_other_and_each_closes_on_its_own():
    done = run(make_client("offline"), TWO_CITIES, stream=True)
    order = [p["index"] for p in fragments(done)]
    assert order == sorted(order) and set(order) == {0, 1}
    calls = done[-1]["calls"]
    assert [c["parsed"] for c in calls] == [{"city": "北京"}, {"city": "上海"}]
    for call in calls:
        assert call["closed_at"] == call["fragments"] == order.count(call["index"])
    assert calls[0]["closed_ms"] <= calls[1]["first_ms"]


def test_a_reply_cut_at_max_tokens_never_closes(connect, server):
    half = '{"city": "北'
    call = {"id": "call_cut", "type": "function", "function": {"name": "get_weather", "arguments": half}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    server.queue({"body": {"id": "cut", "object": "chat.completion", "created": 0, "model": "offline-rule-model",
                           "choices": [{"index": 0, "finish_reason": "length", "message": message}]}})
    done = run(connect("openai"), stream=True)
    assert all(not p["closed"] for p in fragments(done))
    [call] = done[-1]["calls"]
    assert call["parsed"] is None and call["closed_at"] is None and call["closed_ms"] is None
    assert done[-1]["finish_reason"] == "length" and "max_tokens" in done[-1]["meaning"]


def test_a_text_answer_stops_with_no_calls(connect, server):
    server.queue({"message": {"content": "北京今天晴，气温 25 度。"}})
    done = run(connect("glm"), stream=True)
    texts = [e for e in done if e["type"] == "delta" and "content" in e]
    assert texts and all("at_ms" in e and "closed" not in e for e in texts)
    assert done[-1]["calls"] == [] and done[-1]["finish_reason"] == "stop"
    assert done[-1]["meaning"] == FINISH_REASONS["stop"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_provider_failure_is_an_error_event_not_a_crash(connect, server, stream):
    server.queue({"fault": "auth"})
    done = run(connect("openai"), stream=stream)
    assert [e["type"] for e in done] == ["request", "error"] and done[-1]["code"] == "auth"


def test_json_error_on_every_prefix_of_an_object_until_the_last():
    text = json.dumps({"city": "北京", "unit": "c"}, ensure_ascii=False)
    assert all(json_error(text[:end]) for end in range(len(text)))
    assert json_error(text) is None and json_error("") == "还没有参数"


@pytest.mark.parametrize("provider, env, sdk", [("openai", "OPENAI_API_KEY", "openai"),
                                                ("glm", "ZHIPUAI_API_KEY", "zhipuai")])
@pytest.mark.parametrize("stream", [False, True])
def test_the_sdk_code_sends_exactly_the_request_body(connect, server, tmp_path, provider, env, sdk, stream):
    client = connect(provider)
    body = request_body(client, stream=stream)
    code = sdk_code(provider, body, client.base_url)
    ast.parse(code)
    assert "test-key-not-secret" not in code and f'os.environ["{env}"]' in code and f"from {sdk} import" in code
    script = tmp_path / "call.py"
    script.write_text(code, encoding="utf-8")
    environment = {**os.environ, env: "any-key"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env=environment, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "get_weather" in done.stdout
    sent = server.requests[-1]["body"]
    assert {key: sent[key] for key in body} == body                  # what the code sent is the body shown


def test_request_body_sends_only_what_was_given():
    body = request_body(make_client("offline"), "你好", None)
    assert body == {"model": "offline-rule-model", "messages": [{"role": "user", "content": "你好"}], "stream": False}
