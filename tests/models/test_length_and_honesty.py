"""What real models do wrong, met over real HTTP with the real SDKs (the project's own server replays
each failure): no tool call, tool_choice ignored, tools silently dropped by the chat template, answers
cut at max_tokens, a phrase repeated, a round that runs too long. Each is named, none is a success."""
import json

import pytest

import examples_weather
from accents import repeated_phrase, rough_tokens
from function_calling_loop import run_function_calling
from runs import headline
from llm_clients import LLMError, make_client
from offline import workspace as offline_workspace
from offline.server import OfflineServer
from react_loop import run_react

REGISTRY = examples_weather.registry
TOOLS = REGISTRY.to_schemas()


def execute(name, args):
    return REGISTRY.call(name, args).to_dict()


def codes(completion):
    return [a["code"] for a in completion.accents]


def test_rough_tokens_count_wide_characters_one_each_and_the_rest_by_four():
    assert rough_tokens("") == 0
    assert rough_tokens("北京天气") == 4
    assert rough_tokens("abcdefgh") == 2 and rough_tokens("abcdefghi") == 3


@pytest.mark.parametrize("text, phrase", [
    ("在这个文档中，我们可以看到，" * 40, "在这个文档中，我们可以看到，"),
    ("The weather is " + "sunny and warm. " * 12, "sunny and warm."),
])
def test_a_repeated_phrase_is_found(text, phrase):
    found = repeated_phrase(text)
    assert found is not None and found[1] >= 6
    assert found[0] in phrase * 2 and len(found[0]) == len(phrase.strip())   # the phrase, from a word's start
    assert found[0][0].isalnum()


def test_the_phrase_shown_starts_at_a_word():
    assert repeated_phrase("Hello, hello, hello, hello, hello, hello, hello, hello, hel")[0] == "hello,"


@pytest.mark.parametrize("text", ["北京：晴，25°C。上海：多云，22°C。", "-" * 80, "| a | b |\n|---|---|\n| 1 | 2 |",
                                  "哈哈" * 2])
def test_ordinary_text_is_not_repetition(text):
    assert repeated_phrase(text) is None


def test_offline_usage_counts_the_tools_like_a_real_server():
    client = make_client("offline")
    bare = client.complete([{"role": "user", "content": "你好"}])
    offered = client.complete([{"role": "user", "content": "你好"}], tools=TOOLS)
    listed = rough_tokens(json.dumps(TOOLS, ensure_ascii=False))
    assert offered.usage["prompt_tokens"] - bare.usage["prompt_tokens"] >= listed - 2
    assert "tools_not_delivered" not in codes(offered)


def test_an_answer_without_a_tool_call_is_not_a_success():
    events = list(run_function_calling(make_client("offline"), "你好", TOOLS, execute))
    assert not any(e["type"] == "tool_call" for e in events)
    found = headline.verdict(events)
    assert found["state"] == "no_tool_call" and found["icon"] == "💬" and "可能是编的" in found["title"]
    assert headline.summary(events)["ok"] is False


def test_react_without_an_action_is_no_tool_call_too():
    events = list(run_react(make_client("offline"), "你好", TOOLS, execute))
    assert headline.verdict(events)["state"] == "no_tool_call"


@pytest.mark.parametrize("stream", [False, True])
def test_max_tokens_cuts_the_answer_and_the_headline_says_so(stream):
    client = make_client("offline", max_tokens=6)
    events = list(run_function_calling(client, "北京今天天气怎么样？", TOOLS, execute, stream=stream))
    response = [e for e in events if e["type"] == "response"][-1]
    assert response["finish_reason"] == "length" and "length" in [a["code"] for a in response["accents"]]
    assert rough_tokens(events[-1]["content"]) <= 6
    assert [e for e in events if e["type"] == "request"][0]["params"]["max_tokens"] == 6
    found = headline.verdict(events)
    assert found["state"] == "truncated" and found["icon"] == "✂️" and "max_tokens" in found["title"]
    assert "✅" not in headline.headline(events)


@pytest.mark.parametrize("provider", ["openai", "glm"])
def test_max_tokens_goes_out_in_the_request(connect, server, provider):
    connect(provider, max_tokens=77).complete([{"role": "user", "content": "你好"}])
    assert server.requests[-1]["body"]["max_tokens"] == 77
    connect(provider).complete([{"role": "user", "content": "你好"}])
    assert "max_tokens" not in server.requests[-1]["body"]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "get_weather"}}])
def test_a_tool_choice_the_server_ignored_is_named(connect, server, stream, choice):
    server.queue({"message": {"content": "北京今天大概是晴天吧。"}})
    done = connect("openai").complete([{"role": "user", "content": "北京天气"}], tools=TOOLS, tool_choice=choice) \
        if not stream else [i for i in connect("openai").stream([{"role": "user", "content": "北京天气"}],
                                                                 tools=TOOLS, tool_choice=choice)][-1]
    assert "tool_choice_ignored" in codes(done)
    server.queue({"message": {"content": "北京今天大概是晴天吧。"}})
    assert "tool_choice_ignored" not in codes(connect("openai").complete([{"role": "user", "content": "北京天气"}],
                                                                         tools=TOOLS, tool_choice="auto"))


@pytest.mark.parametrize("provider", ["openai", "glm"])
def test_tools_dropped_by_the_template_are_caught_from_the_usage(connect, provider):
    done = connect(provider, accent="llamacpp-no-tools").complete([{"role": "user", "content": "北京天气"}], tools=TOOLS)
    note = next(a["message"] for a in done.accents if a["code"] == "tools_not_delivered")
    assert str(done.usage["prompt_tokens"]) in note
    assert "--chat-template-file" in note and "ollama show" in note and "LM Studio" in note
    assert not done.message.get("tool_calls")


def test_a_llama_server_template_without_tools_is_read_from_props_before_the_run():
    server = OfflineServer(accent="llamacpp-no-tools").start()
    try:
        client = make_client("openai", api_key="x", base_url=server.url + "/v1")
        events = list(run_function_calling(client, "北京今天天气怎么样？", TOOLS, execute))
        first = [e for e in events if e["type"] == "response"][0]
        notes = [a for a in first["accents"] if a["code"] == "tools_not_delivered"]
        assert len(notes) == 1 and "supports_tools 为 false" in notes[0]["message"]
        assert headline.verdict(events)["state"] == "no_tool_call"
        asked = [r["path"] for r in server.requests]
        assert asked.count("/v1/chat/completions") == 1
    finally:
        server.stop()


def test_props_is_not_asked_of_a_remote_address():
    client = make_client("openai", api_key="x", base_url="https://api.example.com/v1")
    assert client.template_note(TOOLS) is None        # no request leaves for a cloud endpoint


def test_a_repeated_answer_is_named_and_not_a_success(connect, server):
    server.queue({"message": {"content": "在这个文档中，我们可以看到，" * 30}})
    events = list(run_function_calling(connect("openai"), "北京天气", TOOLS, execute))
    response = [e for e in events if e["type"] == "response"][0]
    assert "repetition" in [a["code"] for a in response["accents"]]
    assert headline.verdict(events)["state"] == "repetition" and not headline.summary(events)["ok"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_round_past_its_time_limit_ends_and_says_which_limit(connect, server, stream):
    server.queue({"fault": "slow", "seconds": 3})
    client = connect("openai", round_seconds=1)
    events = list(run_function_calling(client, "北京天气", TOOLS, execute, stream=stream))
    assert events[-1]["type"] == "error" and events[-1]["code"] == "timeout"
    assert "每轮时限" in events[-1]["message"]
    assert headline.verdict(events)["state"] == "error"


@pytest.mark.parametrize("question", ["把 greet.py 里的 Hello 改成 你好", "新建 notes2.md"])
def test_the_offline_workspace_says_what_it_could_not_work_out(question):
    answer = offline_workspace.choose(question)
    assert isinstance(answer, str) and "没能从这句话里读出" in answer and "什么都没有改动" in answer


def test_a_quoted_edit_still_edits():
    step = next(offline_workspace.choose('把 greet.py 里的 "Hello" 改成 "你好"'))
    assert step.name == "edit" and step.args["old"] == "Hello"


def test_errors_are_still_errors():
    with pytest.raises(LLMError):
        make_client("openai", api_key="x", base_url="http://127.0.0.1:9/v1", round_seconds=1).complete(
            [{"role": "user", "content": "你好"}])


def test_tools_that_were_called_were_delivered_whatever_the_usage_says(connect, server):
    # A server that renders the tools more compactly than their JSON may count fewer prompt tokens.
    server.queue({"body": {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                           "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                               "role": "assistant", "content": None, "tool_calls": [
                                   {"id": "c1", "type": "function",
                                    "function": {"name": "get_weather", "arguments": "{\"city\": \"北京\"}"}}]}}],
                           "usage": {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21}}})
    done = connect("openai").complete([{"role": "user", "content": "北京天气"}], tools=TOOLS)
    assert done.message["tool_calls"] and "tools_not_delivered" not in codes(done)


def test_a_failure_is_not_fixed_by_a_success_in_the_same_round():
    # Round 1: a made-up tool fails while the real one succeeds beside it; the answer follows.
    events = [{"type": "request", "turn": 1, "tools": TOOLS, "messages": [], "params": {}},
              {"type": "response", "turn": 1, "finish_reason": "tool_calls", "accents": []},
              {"type": "tool_call", "turn": 1, "name": "get_air_quality"},
              {"type": "tool_result", "turn": 1, "name": "get_air_quality", "ok": False, "error_code": "unknown_tool"},
              {"type": "tool_call", "turn": 1, "name": "get_weather"},
              {"type": "tool_result", "turn": 1, "name": "get_weather", "ok": True},
              {"type": "response", "turn": 2, "finish_reason": "stop", "accents": []},
              {"type": "final", "turn": 2, "content": "北京晴，空气质量优。"}]
    assert headline.verdict(events)["state"] == "gave_up"
    later = events[:6] + [{"type": "tool_call", "turn": 2, "name": "get_weather"},
                          {"type": "tool_result", "turn": 2, "name": "get_weather", "ok": True},
                          {"type": "response", "turn": 3, "finish_reason": "stop", "accents": []},
                          {"type": "final", "turn": 3, "content": "北京晴。"}]
    assert headline.verdict(later)["state"] == "recovered"
