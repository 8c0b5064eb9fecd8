"""Each loop end to end: real SDKs -> local server -> offline model, tools run by the real registry."""
import json

import pytest

import examples_weather
from function_calling_loop import run_function_calling
from json_loop import run_json_from_text
from llm_clients import make_client
from react_loop import run_react
from tool_outcome import RESULT_LIMIT

REGISTRY = examples_weather.registry
TOOLS = REGISTRY.to_schemas()
LOOPS = {"native": run_function_calling, "react": run_react, "json": run_json_from_text}


def execute(name, args):
    return REGISTRY.call(name, args).to_dict()


def events_of(run):
    events = list(run)
    json.dumps(events, ensure_ascii=False)           # every event must be JSON-serialisable
    assert all("type" in e and "turn" in e for e in events)
    return events


def kinds(events, kind):
    return [e for e in events if e["type"] == kind]


@pytest.mark.parametrize("provider", ["openai", "glm"])
@pytest.mark.parametrize("loop", list(LOOPS))
@pytest.mark.parametrize("stream", [False, True])
def test_loop_answers_with_both_cities(connect, provider, loop, stream):
    events = events_of(LOOPS[loop](connect(provider), "北京和上海的天气怎么样？", TOOLS, execute, stream=stream))
    results = kinds(events, "tool_result")
    assert [r["arguments"]["city"] for r in results] == ["北京", "上海"] and all(r["ok"] for r in results)
    final = events[-1]
    assert final["type"] == "final" and "北京今天晴" in final["content"] and "上海今天多云" in final["content"]
    assert "不是真正的大模型" in final["content"]
    assert bool(kinds(events, "delta")) == stream
    if loop == "native":     # parallel: both calls in one model turn, answered by role "tool" messages
        assert {r["turn"] for r in results} == {1}
        ids = [c["id"] for c in final["messages"][1]["tool_calls"]]
        assert [m["tool_call_id"] for m in final["messages"] if m["role"] == "tool"] == ids
    else:                    # text protocols: one action per turn, observations come back as user messages
        assert [r["turn"] for r in results] == [1, 2]
        assert results[0]["message"]["content"].startswith("Observation: 北京今天晴")
        assert kinds(events, "parse")[0]["kind"] == "action"


def test_react_sends_stop_and_prompt_with_tools(connect, server):
    events_of(run_react(connect("openai"), "北京天气", TOOLS, execute))
    first = server.requests[0]["body"]
    assert first["stop"] == ["Observation:"]
    assert "get_forecast" in first["messages"][0]["content"] and "tools" not in first


def test_native_passes_tool_choice_and_parallel_flag(connect, server):
    forced = {"type": "function", "function": {"name": "get_forecast"}}
    events = events_of(run_function_calling(connect("openai"), "北京天气", TOOLS, execute,
                                            tool_choice=forced, parallel_tool_calls=False))
    bodies = [r["body"] for r in server.requests]
    assert bodies[0]["tool_choice"] == forced and bodies[0]["parallel_tool_calls"] is False
    assert "tool_choice" not in bodies[1]           # forcing only on the first turn, or it never finishes
    assert kinds(events, "tool_call")[0]["name"] == "get_forecast" and events[-1]["type"] == "final"
    assert kinds(events, "request")[0]["params"]["tool_choice"] == forced


MISTAKES = {
    "native": ["wrong_type", "missing_argument", "unknown_tool", "bad_json", "fenced_json"],
    "react": ["wrong_type", "missing_argument", "unknown_tool", "bad_json", "fenced_json", "bold_action",
              "invented_observation", "multi_step"],
    "json": ["wrong_type", "missing_argument", "unknown_tool", "bad_json", "fenced_json", "invented_observation",
             "multi_step"],
}
EXPECTED = {"wrong_type": "invalid_arguments", "missing_argument": "invalid_arguments", "unknown_tool": "unknown_tool", "bad_json": "invalid_json"}
QUESTION = "上海未来3天的天气预报"


@pytest.mark.parametrize("loop, mistake", [(loop, m) for loop, names in MISTAKES.items() for m in names])
def test_model_mistake_is_fed_back_and_the_model_recovers(connect, server, loop, mistake):
    server.reset(mistake)
    events = events_of(LOOPS[loop](connect("openai"), QUESTION, TOOLS, execute))
    assert events[-1]["type"] == "final" and "第几天" in events[-1]["content"]
    first = kinds(events, "tool_result")[0] if kinds(events, "tool_result") else None
    parses = kinds(events, "parse")
    if mistake in EXPECTED:
        if loop == "json" and mistake == "bad_json":      # nothing parsed: the retry message carries the reason
            assert not parses[0]["ok"] and "JSON" in parses[0]["reason"]
            retry = events[-1]["messages"][3]
            assert retry["role"] == "user" and "Expecting" in retry["content"]
        else:
            assert first["ok"] is False and first["error_code"] == EXPECTED[mistake]
            if mistake == "unknown_tool":
                assert "get_weather、get_forecast" in first["content"]
            if mistake == "wrong_type":               # "三" for an integer: no coercion can fix it
                assert kinds(events, "tool_call")[0]["raw_arguments"].count('"三"') == 1
                assert "days" in first["content"] and "整数" in first["content"]
        later = kinds(events, "tool_result")[-1]
        assert later["ok"] and later["arguments"]["city"] == "上海"
    elif mistake == "fenced_json":
        notes = (parses[0]["notes"] if parses else []) + kinds(events, "tool_call")[0]["problems"]
        assert any("```" in n for n in notes) and first["ok"]
    elif mistake in ("invented_observation", "multi_step", "bold_action"):
        assert parses[0]["notes"] and first["ok"]
    assert len(kinds(events, "request")) <= 4


def test_react_invented_observation_is_cut_from_history(connect, server):
    server.reset("invented_observation")
    events = events_of(run_react(connect("openai"), QUESTION, TOOLS, execute))
    assistant = events[-1]["messages"][2]
    assert assistant["role"] == "assistant" and "Observation" not in assistant["content"]
    assert "编的" in kinds(events, "response")[0]["text"]          # the raw reply still shows what it did


def test_step_mode_override_arguments_and_result(connect):
    run = run_function_calling(connect("openai"), "北京和上海的天气怎么样？", TOOLS, execute)
    seen = []
    event = next(run)
    while True:
        seen.append(event)
        if event["type"] == "tool_call" and event["arguments"]["city"] == "北京":
            event = run.send({"arguments": {"city": "广州"}})
        elif event["type"] == "tool_call":
            event = run.send({"result": "上海：人工填写的结果"})
        else:
            try:
                event = next(run)
            except StopIteration:
                break
    results = kinds(seen, "tool_result")
    assert results[0]["arguments"]["city"] == "广州" and "广州今天雷阵雨" in results[0]["content"]
    assert results[1]["content"] == "上海：人工填写的结果"
    assert "人工填写" in seen[-1]["content"] and "广州" in seen[-1]["content"]


@pytest.mark.parametrize("loop", list(LOOPS))
def test_long_tool_results_are_truncated_visibly(loop):
    huge = lambda name, args: {"ok": True, "content": "数据" * 5000, "error_code": None}
    events = events_of(LOOPS[loop](make_client("offline"), "北京天气", TOOLS, huge))
    result = kinds(events, "tool_result")[0]
    assert len(result["content"]) < RESULT_LIMIT + 100 and "已截断" in result["content"] and "10000" in result["content"]


@pytest.mark.parametrize("loop", list(LOOPS))
def test_provider_failure_ends_the_run_with_an_error_event(connect, server, loop):
    server.queue({"fault": "rate_limit"})
    events = events_of(LOOPS[loop](connect("glm"), "北京天气", TOOLS, execute))
    assert events[-1]["type"] == "error" and events[-1]["code"] == "rate_limit" and "429" in events[-1]["message"]


def test_stops_after_repeated_unparsable_replies(connect, server):
    server.queue(*[{"message": {"content": "我想想……"}}] * 5)
    events = events_of(run_react(connect("openai"), "北京天气", TOOLS, execute))
    assert events[-1]["type"] == "error" and events[-1]["code"] == "too_many_failures"
    assert len(kinds(events, "request")) == 3 and all(not p["ok"] for p in kinds(events, "parse"))
    assert "Final Answer" in events[-2]["reason"] or "Final Answer" in events[-1]["message"]


def test_stops_after_repeated_failing_calls(connect, server):
    bad = {"message": {"tool_calls": [{"id": "c1", "type": "function",
                                       "function": {"name": "nope", "arguments": "{}"}}]}}
    server.queue(*[bad] * 5)
    events = events_of(run_function_calling(connect("openai"), "北京天气", TOOLS, execute, max_turns=6))
    assert events[-1]["code"] == "too_many_failures" and len(kinds(events, "request")) == 3


def test_max_turns(connect, server):
    call = {"message": {"tool_calls": [{"id": "c1", "type": "function",
                                        "function": {"name": "get_weather", "arguments": "{\"city\": \"北京\"}"}}]}}
    server.queue(*[call] * 3)
    events = events_of(run_function_calling(connect("openai"), "北京天气", TOOLS, execute, max_turns=2))
    assert events[-1]["type"] == "error" and events[-1]["code"] == "max_turns" and "max_turns=2" in events[-1]["message"]


def test_registry_can_be_passed_directly():
    events = events_of(run_function_calling(make_client("offline"), "北京天气", None, REGISTRY))
    assert kinds(events, "tool_result")[0]["ok"] and events[-1]["type"] == "final"


def test_request_event_is_a_copy_of_what_was_sent(connect, server):
    events = events_of(run_function_calling(connect("openai"), "北京天气", TOOLS, execute, temperature=0.2))
    requests = kinds(events, "request")
    assert [r["messages"] for r in requests] == [r["body"]["messages"] for r in server.requests]
    assert requests[0]["params"] == {"model": "offline-rule-model", "temperature": 0.2, "tool_choice": None,
                                     "parallel_tool_calls": None, "stop": None, "stream": False,
                                     "max_tokens": None, "round_seconds": None}
    assert kinds(events, "response")[0]["raw"]["system_fingerprint"] == "rule-based-not-an-llm"


def test_without_an_executor_the_model_is_told_and_the_run_ends_cleanly():
    events = events_of(run_json_from_text(make_client("offline"), "北京天气", TOOLS, None))
    assert kinds(events, "tool_result")[0]["ok"] is False and events[-1]["type"] in ("final", "error")


def test_minimal_loop_is_the_same_handshake_in_a_few_lines(connect, server):
    import minimal_loop

    answer = minimal_loop.agent_loop(connect("openai"), "北京和上海的天气怎么样？")
    assert "北京：晴，25℃" in answer and "上海：晴，25℃" in answer
    bodies = [r["body"] for r in server.requests]
    assert len(bodies) == 2 and bodies[0]["tools"] == minimal_loop.TOOLS
    assert [m["role"] for m in bodies[1]["messages"]] == ["user", "assistant", "tool", "tool"]


def call_reply(name, arguments):
    return {"message": {"tool_calls": [{"id": "c1", "type": "function",
                                        "function": {"name": name, "arguments": arguments}}]}}


def first_result(connect, server, reply, execute, loop=run_function_calling):
    server.queue(reply)
    return kinds(events_of(loop(connect("openai"), "北京天气", TOOLS, execute)), "tool_result")[0]


def test_the_registry_suggestion_for_an_unknown_tool_reaches_the_model(connect, server):
    result = first_result(connect, server, call_reply("get_wether", '{"city": "北京"}'), execute)
    assert result["error_code"] == "unknown_tool" and "是不是想用 get_weather" in result["content"]


def plain(name, args):
    """A student's executor: a dispatch dict and nothing else (unknown names and text arguments make it raise)."""
    return {"get_weather": lambda city: f"{city}：晴"}[name](**args)


def test_a_plain_executor_that_raises_gets_the_true_label(connect, server):
    unknown = first_result(connect, server, call_reply("nope", '{"city": "北京"}'), plain)
    assert unknown["error_code"] == "unknown_tool" and unknown["content"].startswith("❌ [未知工具]")
    assert unknown["content"] == REGISTRY.call("nope", {}).content        # the loop says what the registry says
    broken = first_result(connect, server, call_reply("get_weather", '{"city": }'), plain)
    assert broken["error_code"] == "invalid_json" and broken["content"].startswith("❌ [参数格式错误]")
    crashed = first_result(connect, server, call_reply("get_forecast", '{"city": "北京"}'), plain)
    assert crashed["error_code"] == "tool_exception" and "KeyError" in crashed["content"]


def test_the_same_bad_json_reads_the_same_on_every_path(connect, server):
    bad = call_reply("get_weather", '{"city": "北京",}')
    by_registry = first_result(connect, server, bad, execute)
    by_registry_object = first_result(connect, server, bad, REGISTRY)
    by_plain = first_result(connect, server, bad, plain)
    assert by_registry["error_code"] == by_registry_object["error_code"] == by_plain["error_code"] == "invalid_json"
    assert by_registry["content"] == by_registry_object["content"] == by_plain["content"]
    assert by_registry["content"] == REGISTRY.call("get_weather", '{"city": "北京",}').content


@pytest.mark.parametrize("returns", ["outcome", "dict", "text", "value"])
def test_executors_may_return_an_outcome_a_dict_or_a_plain_value(connect, server, returns):
    import tool_outcome

    def execute_any(name, args):
        text = f"{args['city']}：晴"
        return {"outcome": tool_outcome.success(text, arguments=args), "dict": {"ok": True, "content": text},
                "text": text, "value": {"city": args["city"], "weather": "晴"}}[returns]

    result = first_result(connect, server, call_reply("get_weather", '{"city": "北京"}'), execute_any)
    assert result["ok"] and result["error_code"] is None and result["arguments"] == {"city": "北京"}
    assert "北京" in result["content"] and "晴" in result["content"]


@pytest.mark.parametrize("source", ["registry", "dict without clipped_from", "plain text"])
def test_a_long_result_is_clipped_once_and_the_event_says_how_long_it_was(connect, server, source):
    import tool_outcome

    long = "数据" * 5000
    clipped_by_registry = tool_outcome.clip(long)[0]
    executors = {"registry": lambda name, args: tool_outcome.success(long),
                 "dict without clipped_from": lambda name, args: {"ok": True, "content": clipped_by_registry},
                 "plain text": lambda name, args: long}
    result = first_result(connect, server, call_reply("get_weather", '{"city": "北京"}'), executors[source])
    assert result["content"] == clipped_by_registry and result["content"].count("已截断") == 1
    assert result["clipped_from"] == 10000
    assert first_result(connect, server, call_reply("get_weather", '{"city": "北京"}'), execute)["clipped_from"] is None


def test_without_an_executor_the_outcome_says_so(connect, server):
    result = first_result(connect, server, call_reply("get_weather", '{"city": "北京"}'), None)
    assert result["error_code"] == "no_executor" and result["content"].startswith("❌ [无法执行]")


@pytest.mark.parametrize("loop", list(LOOPS))
def test_every_event_has_exactly_the_keys_of_its_type(connect, server, loop):
    import typing

    import events as event_types

    types = {"request": event_types.RequestEvent, "delta": event_types.DeltaEvent,
             "response": event_types.ResponseEvent, "parse": event_types.ParseEvent,
             "tool_call": event_types.ToolCallEvent, "tool_result": event_types.ToolResultEvent,
             "final": event_types.FinalEvent, "error": event_types.ErrorEvent}
    server.reset("bad_json")
    seen = events_of(LOOPS[loop](connect("openai"), QUESTION, TOOLS, execute, stream=True))
    assert {"request", "delta", "response", "tool_call", "tool_result", "final"} <= {e["type"] for e in seen}
    for event in seen:
        keys = typing.get_type_hints(types[event["type"]])
        if event["type"] == "delta":
            assert {"type", "turn"} <= set(event) <= set(keys)
        else:           # optional keys (the naive reading, concurrent timing) only where they apply
            assert types[event["type"]].__required_keys__ <= set(event) <= set(keys), event["type"]


@pytest.mark.parametrize("loop, reply, expected", [
    ("react", "我想想……", "Action: 工具名[JSON 参数]"),
    ("json", '{"tool": "get_weather", "arguments": {', "只输出一个完整的 JSON 对象"),
])
def test_text_protocols_say_what_format_was_expected(connect, server, loop, reply, expected):
    server.queue({"message": {"content": reply}})
    events = events_of(LOOPS[loop](connect("openai"), "北京天气", TOOLS, execute))
    feedback = events[-1]["messages"][3]
    assert feedback["role"] == "user" and feedback["content"].startswith("Observation: ❌ [格式错误] ")
    assert expected in feedback["content"] and events[-1]["type"] == "final"
