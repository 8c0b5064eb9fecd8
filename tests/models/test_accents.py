"""Providers' accents replayed by the local server, met by the real openai and zhipuai SDKs over real HTTP:
every accent through every loop (streaming and not) completes, and the explanation reaches the Completion."""
import json
import urllib.request

import pytest

import examples_weather
from accents import StreamAssembler, tidy
from function_calling_loop import run_function_calling
from json_loop import run_json_from_text
from llm_clients import Completion, LLMError, without_parameter
from offline.accents import ACCENTS, QUIRKS, quirks_of
from react_loop import run_react

REGISTRY = examples_weather.registry
TOOLS = REGISTRY.to_schemas()
LOOPS = {"native": run_function_calling, "react": run_react, "json": run_json_from_text}
QUESTION = "北京和上海的天气怎么样？"
ASK = [{"role": "user", "content": QUESTION}]

# What each accent must be explained as: in every loop / only when tools go in the request / only when streaming.
EXPLAINED = {
    "openai": (set(), set(), set()),
    "deepseek": ({"reasoning_field"}, set(), set()),
    "glm": ({"reasoning_field"}, set(), set()),
    "dashscope": (set(), set(), set()),             # "" content only shows without streaming: see below
    "moonshot": (set(), set(), set()),
    "siliconflow": ({"reasoning_field"}, set(), set()),
    "volcengine": ({"reasoning_field"}, set(), set()),
    "ollama": ({"reasoning_field"}, {"stop_with_tool_calls"}, set()),
    "vllm-no-parser": ({"think_tags"}, {"tool_call_as_text"}, set()),
    "rough-gateway": ({"usage_partial"}, {"missing_id", "missing_type", "arguments_object"}, {"stream_no_index"}),
}
NOT_STREAMED_ONLY = {"dashscope": {"empty_content"}}
# Accents no client can repair: the server never shows the model the tools (test_length_and_honesty.py).
CANNOT_BE_FIXED = {"llamacpp-no-tools": "drops_tools"}


def execute(name, args):
    return REGISTRY.call(name, args).to_dict()


def recording(client):
    """Keep every Completion the loop receives (the client itself is untouched: this only listens)."""
    seen = []
    original = client.stream

    def stream(*args, **kwargs):
        for item in original(*args, **kwargs):
            if isinstance(item, Completion):
                seen.append(item)
            yield item
    client.stream = stream
    return client, seen


def codes(completions):
    return {a["code"] for c in completions for a in c.accents}


def test_every_accent_is_covered_here():
    assert set(EXPLAINED) | set(CANNOT_BE_FIXED) == set(ACCENTS)


@pytest.mark.parametrize("provider", ["openai", "glm"])
@pytest.mark.parametrize("loop", list(LOOPS))
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("accent", list(EXPLAINED))
def test_every_accent_through_every_loop(connect, server, provider, loop, stream, accent):
    client, seen = recording(connect(provider, accent=accent))
    events = list(LOOPS[loop](client, QUESTION, TOOLS, execute, stream=stream))
    json.dumps(events, ensure_ascii=False)
    final = events[-1]
    assert final["type"] == "final", final
    assert "北京今天晴" in final["content"] and "上海今天多云" in final["content"]
    results = [e for e in events if e["type"] == "tool_result"]
    assert [r["arguments"]["city"] for r in results] == ["北京", "上海"] and all(r["ok"] for r in results)

    everywhere, with_tools, streamed = EXPLAINED[accent]
    expected = set(everywhere) | (with_tools if loop == "native" else set()) | (streamed if stream and loop == "native" else set())
    expected |= NOT_STREAMED_ONLY.get(accent, set()) if (loop == "native" and not stream) else set()
    assert codes(seen) == expected
    for completion in seen:
        assert all(a["message"] and isinstance(a["message"], str) for a in completion.accents)
        if "reasoning_field" in expected or "think_tags" in expected:
            assert "我应该先查工具" in completion.reasoning
    for body in (r["body"] for r in server.requests):     # what went back never carries the thinking as text
        assert all("<think>" not in (m.get("content") or "") for m in body["messages"] if m["role"] == "assistant")


@pytest.mark.parametrize("provider", ["openai", "glm"])
@pytest.mark.parametrize("stream", [False, True])
def test_deepseek_reasoning_goes_back_only_with_tool_calls(connect, server, provider, stream):
    events = list(run_function_calling(connect(provider, accent="deepseek"), QUESTION, TOOLS, execute, stream=stream))
    assert events[-1]["type"] == "final"
    history = server.requests[-1]["body"]["messages"]
    with_calls = [m for m in history if m["role"] == "assistant" and m.get("tool_calls")]
    assert with_calls and all(m["reasoning_content"] == "用户在问天气，我应该先查工具，再根据结果回答。" for m in with_calls)
    final = events[-1]["messages"][-1]
    assert "reasoning_content" not in final and "tool_calls" not in final


@pytest.mark.parametrize("provider", ["openai", "glm"])
def test_a_server_that_wants_reasoning_back_explains_itself(connect, server, provider):
    history = [ASK[0], {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"北京\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "晴"}]
    with pytest.raises(LLMError) as caught:
        connect(provider, quirks=("needs_reasoning_back",)).complete(history, tools=TOOLS)
    assert caught.value.code == "bad_request" and "reasoning_content 必须原样放回历史" in str(caught.value)
    assert caught.value.retry_without is None


@pytest.mark.parametrize("quirk", sorted(q for q in QUIRKS if not q.startswith("rejects_") and q != "needs_reasoning_back"
                                          and q not in CANNOT_BE_FIXED.values()))
@pytest.mark.parametrize("stream", [False, True])
def test_every_single_quirk_leaves_a_runnable_conversation(connect, quirk, stream):
    client, seen = recording(connect("openai", quirks=(quirk,)))
    events = list(run_function_calling(client, QUESTION, TOOLS, execute, stream=stream))
    assert events[-1]["type"] == "final" and "上海今天多云" in events[-1]["content"]
    calls = [c for done in seen for c in done.message.get("tool_calls") or []]
    assert calls and all(c["id"] and c["type"] == "function" for c in calls)
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{"city": "北京"}, {"city": "上海"}]


STREAM_SHAPES = [("stream_whole_call",), ("stream_interleaved",), ("stream_empty_id",), ("stream_no_index",),
                 ("stream_interleaved", "stream_no_index"), ("stream_no_index", "no_id"), ("stream_whole_call", "args_object")]


@pytest.mark.parametrize("provider", ["openai", "glm"])
@pytest.mark.parametrize("shape", STREAM_SHAPES, ids="+".join)
def test_streamed_tool_calls_in_every_shape_assemble_the_same(connect, server, provider, shape):
    done = list(connect(provider, quirks=shape).stream(ASK, tools=TOOLS))[-1]
    plain = connect(provider).complete(ASK, tools=TOOLS)
    assert done.message["tool_calls"] == plain.message["tool_calls"] or "no_id" in shape
    assert [json.loads(c["function"]["arguments"]) for c in done.message["tool_calls"]] == [{"city": "北京"}, {"city": "上海"}]
    assert ("stream_no_index" in codes([done])) == ("stream_no_index" in shape)
    assert any(len(c["choices"][0]["delta"].get("tool_calls") or []) for c in done.raw)   # the raw chunks are kept


def test_interleaved_chunks_really_interleave(connect, server):
    raw = list(connect("openai", quirks=("stream_interleaved",)).stream(ASK, tools=TOOLS))[-1].raw
    order = [part["index"] for chunk in raw for part in chunk["choices"][0]["delta"].get("tool_calls") or []]
    assert order[:4] == [0, 1, 0, 1]


# ---------------------------------------------------------------- tool calls written as text

@pytest.mark.parametrize("content, shape", [
    ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "北京"}}\n</tool_call>', "<tool_call>"),
    ('Thought: 先查北京\nAction: get_weather[{"city": "北京"}]', "parse_react"),
    ('{"name": "get_weather", "arguments": {"city": "北京"}}', "parse_json_reply"),
    ('Sure! Here is the call:\n```json\n{"name": "get_weather", "arguments": {"city": "北京"}}\n```', "一段话后面跟着 JSON 调用"),
])
@pytest.mark.parametrize("stream", [False, True])
def test_tool_call_written_as_text_is_read_and_explained(connect, server, content, shape, stream):
    server.queue({"message": {"content": content}})
    client, seen = recording(connect("openai"))
    events = list(run_function_calling(client, "北京天气", TOOLS, execute, stream=stream))
    note = next(a["message"] for a in seen[0].accents if a["code"] == "tool_call_as_text")
    assert shape in note and "--enable-auto-tool-choice --tool-call-parser" in note and "ollama show" in note
    call = [e for e in events if e["type"] == "tool_call"][0]
    assert call["name"] == "get_weather" and call["arguments"] == {"city": "北京"}
    assert events[-1]["type"] == "final"


def test_unreadable_text_tool_call_stays_an_answer_with_the_explanation(connect, server):
    server.queue({"message": {"content": '<tool_call>{"name": "send_email", "arguments": {"to": "x"}}</tool_call>'}})
    client, seen = recording(connect("openai"))
    events = list(run_function_calling(client, "北京天气", TOOLS, execute))
    assert events[-1]["type"] == "final" and "send_email" in events[-1]["content"]
    assert "读不出可用的调用" in seen[0].accents[0]["message"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_call_after_prose_keeps_the_prose_as_content(connect, server, stream):
    server.queue({"message": {"content": 'Sure! I will look it up.\n```json\n{"name": "get_weather", '
                                         '"arguments": {"city": "北京"}}\n```\nOne moment.'}})
    client, seen = recording(connect("openai"))
    events = list(run_function_calling(client, "北京天气", TOOLS, execute, stream=stream))
    assert seen[0].message["content"] == "Sure! I will look it up.\n\nOne moment."
    assert [c["function"]["arguments"] for c in seen[0].message["tool_calls"]] == ['{"city": "北京"}']
    assert "「Sure! I will look it up." in next(a["message"] for a in seen[0].accents if a["code"] == "tool_call_as_text")
    assert [e["type"] for e in events].count("tool_result") == 1 and events[-1]["type"] == "final"


@pytest.mark.parametrize("content, said", [
    ('Here is the data:\n```json\n{"city": "北京", "temp": 25}\n```', None),              # data, not a call's shape
    ('The tool takes {"name": "get_weather"} and a city.', None),                        # a name but no arguments
    ('Calling:\n```json\n{"name": "send_email", "arguments": {"to": "x"}}\n```', "'send_email' 不在这次提供的工具里"),
])
def test_prose_with_json_that_is_not_a_call_of_an_offered_tool_stays_an_answer(content, said):
    message, finish, _, found = tidy({"content": content}, "stop", tool_names=["get_weather"])
    assert message == {"role": "assistant", "content": content} and finish == "stop"
    if said is None:
        assert found == []          # nothing looked like a call: no word about calls
    else:
        assert [a["code"] for a in found] == ["tool_call_as_text"] and said in found[0]["message"]


def test_text_without_tools_in_the_request_is_never_taken_for_a_call():
    message, finish, _, found = tidy({"content": 'Action: get_weather[{"city": "北京"}]'}, "stop", tool_names=[])
    assert message == {"role": "assistant", "content": 'Action: get_weather[{"city": "北京"}]'} and found == []


def test_an_answer_in_json_is_not_a_tool_call():
    message, _, _, found = tidy({"content": '{"answer": "晴"}'}, "stop", tool_names=["get_weather"])
    assert message["content"] == '{"answer": "晴"}' and "tool_calls" not in message and found == []


# ---------------------------------------------------------------- pieces the loops never see

def test_double_encoded_and_object_arguments_and_missing_ids_are_stable():
    raw = {"content": "", "tool_calls": [
        {"function": {"name": "get_weather", "arguments": json.dumps(json.dumps({"city": "北京"}))}},
        {"id": "", "function": {"name": "get_weather", "arguments": {"city": "上海"}}}]}
    first, finish, _, found = tidy(raw, "stop", ["get_weather"])
    again = tidy(raw, "stop", ["get_weather"])[0]
    assert [c["function"]["arguments"] for c in first["tool_calls"]] == ['{"city": "北京"}', '{"city": "上海"}']
    assert first == again and first["tool_calls"][0]["id"] != first["tool_calls"][1]["id"]
    assert first["content"] is None and finish == "tool_calls"
    assert {a["code"] for a in found} == {"arguments_double_encoded", "arguments_object", "missing_id", "missing_type",
                                          "empty_content", "stop_with_tool_calls"}
    assert "第 1 个" in next(a["message"] for a in found if a["code"] == "arguments_double_encoded")


def test_a_closing_think_tag_alone_is_taken_as_thinking():
    message, _, reasoning, found = tidy({"content": "想一想……</think>\n北京晴。"}, "stop")
    assert message["content"] == "北京晴。" and reasoning == "想一想……" and found[0]["code"] == "think_tags"


def test_think_tags_in_the_middle_of_an_answer_are_left_alone():
    text = "我想说：<think>这不是开头的思考块</think> 就这样。"
    message, _, reasoning, found = tidy({"content": text}, "stop")
    assert message["content"] == text and reasoning is None and found == []


def test_assembler_without_index_or_id_starts_a_call_at_each_new_name():
    assembler = StreamAssembler()
    for part in ({"function": {"name": "a", "arguments": "{\"x\""}}, {"function": {"arguments": ": 1}"}},
                 {"function": {"name": "b", "arguments": "{}"}}):
        assembler.add({"choices": [{"delta": {"tool_calls": [part]}}]})
    calls = assembler.message()["tool_calls"]
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in calls] == [("a", '{"x": 1}'), ("b", "{}")]


@pytest.mark.parametrize("stream", [False, True])
def test_missing_usage_is_explained(connect, stream):
    done = list(connect("openai", quirks=("no_usage",)).stream(ASK, tools=TOOLS, _stream=stream))[-1]
    note = next(a["message"] for a in done.accents if a["code"] == "usage_missing")
    assert done.usage is None and ("include_usage" in note) == stream


def test_partial_usage_is_completed_and_explained(connect):
    done = connect("openai", quirks=("partial_usage",)).complete(ASK, tools=TOOLS)
    assert done.usage["total_tokens"] == done.usage["prompt_tokens"] + done.usage["completion_tokens"]
    assert "total_tokens" in done.accents[0]["message"]


# ---------------------------------------------------------------- parameters a server refuses

REFUSED = [
    ("moonshot", {"tool_choice": "required"}, "tool_choice", "思考模式"),
    ("moonshot", {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}, "tool_choice", "思考模式"),
    ("vllm-no-parser", {"tool_choice": "auto"}, "tool_choice", "--enable-auto-tool-choice --tool-call-parser"),
    ("rough-gateway", {"parallel_tool_calls": False}, "parallel_tool_calls", "parallel_tool_calls=false"),
    ("deepseek", {"strict": True}, "strict", "tools[].function.strict"),
]


@pytest.mark.parametrize("provider", ["openai", "glm"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("accent, options, parameter, words", REFUSED)
def test_refused_parameter_names_itself_and_the_retry_without_it_works(connect, provider, stream, accent, options,
                                                                       parameter, words):
    client = connect(provider, accent=accent)
    tools = [{**t, "function": {**t["function"], "strict": True}} for t in TOOLS] if "strict" in options else TOOLS
    params = {k: v for k, v in options.items() if k != "strict"}
    with pytest.raises(LLMError) as caught:
        list(client.stream(ASK, tools=tools, _stream=stream, **params))
    error = caught.value
    assert error.code == "bad_request" and error.retry_without == parameter
    assert words in str(error) and "再试一次" in str(error)
    tools, choice, parallel = without_parameter(tools, params.get("tool_choice"), params.get("parallel_tool_calls"), parameter)
    done = list(client.stream(ASK, tools=tools, tool_choice=choice, parallel_tool_calls=parallel, _stream=stream))[-1]
    assert done.message.get("tool_calls")


def test_a_parameter_that_was_not_sent_is_never_offered_for_retry(connect, server):
    server.queue({"error": "unknown_parallel"})
    with pytest.raises(LLMError) as caught:
        connect("openai").complete(ASK, tools=TOOLS)
    assert caught.value.retry_without is None and caught.value.code == "bad_request"


def test_native_loop_reports_the_refusal_as_an_error_event(connect):
    events = list(run_function_calling(connect("openai", accent="moonshot"), QUESTION, TOOLS, execute, tool_choice="required"))
    assert events[-1]["type"] == "error" and "tool_choice" in events[-1]["message"]


# ---------------------------------------------------------------- providers' own error shapes

ERROR_SHAPES = [
    ("glm_1214", "bad_request", ["智谱返回错误码 1214", "content 为 \"\" 又带 tool_calls", "字段不能同时为空"]),
    ("glm_1113", "rate_limit", ["智谱返回错误码 1113", "欠费"]),
    ("dashscope_key", "auth", ["阿里云百炼返回 InvalidApiKey", "request_id 8d5e8b1c"]),
    ("dashscope_parameter", "context_exceeded", ["上下文长度", "InvalidParameter", "Range of input length"]),
    ("llamacpp_cut_call", "server", ["读不了历史里一个调用的参数", "finish_reason 是 length",
                                           "Failed to parse tool call arguments"]),
    ("llamacpp_context", "context_exceeded", ["上下文长度", "这次请求有 4133 个 token，服务端的上下文只有 4096 个",
                                              "exceeds the available context size"]),
    ("deepseek_balance", "rate_limit", ["HTTP 402", "余额不足", "Insufficient Balance"]),
    ("deepseek_reasoning", "bad_request", ["reasoning_content 必须原样放回历史"]),
]


@pytest.mark.parametrize("provider", ["openai", "glm"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name, code, words", ERROR_SHAPES)
def test_provider_error_shapes_become_specific_messages(connect, server, provider, stream, name, code, words):
    server.queue({"error": name})
    with pytest.raises(LLMError) as caught:
        list(connect(provider).stream(ASK, tools=TOOLS, _stream=stream))
    assert caught.value.code == code
    for word in words:
        assert word in str(caught.value)
    assert "test-key-not-secret" not in str(caught.value)


@pytest.mark.parametrize("name", ["llamacpp_context", "dashscope_parameter"])
def test_a_request_over_the_context_is_named_without_advice_that_does_not_fit(connect, server, name):
    """Too long a conversation is not a malformed message nor a short answer: no word of GLM's empty
    content, nor of a larger max_tokens (which would only make a looping model loop longer)."""
    server.queue({"error": name})
    with pytest.raises(LLMError) as caught:
        list(connect("openai").stream(ASK, tools=TOOLS, _stream=False))
    said = str(caught.value)
    assert caught.value.code == "context_exceeded" and "对话越长请求越长" in said
    assert "GLM" not in said and "content" not in said and "max_tokens" not in said


@pytest.mark.parametrize("provider", ["openai", "glm"])
@pytest.mark.parametrize("stream", [False, True])
def test_gateway_html_page_is_named_as_such(connect, server, provider, stream):
    server.queue({"fault": "gateway_html"})
    with pytest.raises(LLMError) as caught:
        list(connect(provider).stream(ASK, _stream=stream))
    message = str(caught.value)
    assert caught.value.code == "server" and "HTML 错误页「502 Bad Gateway」" in message and "nginx" in message


# ---------------------------------------------------------------- the server's switch

def test_server_accent_for_the_whole_instance_and_over_control(server, connect):
    server.reset(accent="ollama")
    assert "reasoning_field" in codes([connect("openai").complete(ASK, tools=TOOLS)])
    post = urllib.request.Request(server.url + "/_control", data=json.dumps({"quirks": ["no_id"]}).encode(),
                                  headers={"Content-Type": "application/json"})
    urllib.request.urlopen(post).read()
    assert codes([connect("openai").complete(ASK, tools=TOOLS)]) == {"missing_id"}
    server.reset()
    assert codes([connect("openai").complete(ASK, tools=TOOLS)]) == set()


def test_unknown_accent_names_the_choices(server):
    with pytest.raises(ValueError, match="可选：openai, deepseek"):
        quirks_of("deepsek")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(urllib.request.Request(server.url + "/accent/nope/v1/chat/completions", data=b"{}"))
    assert caught.value.code == 404 and "未知的口音" in caught.value.read().decode()
