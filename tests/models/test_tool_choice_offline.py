"""tool_choice through the loop with the offline model: a forced function is what gets called and what the answer
is about; "none" answers without tools and says the setting forbade them."""
import pytest

import examples_weather
from function_calling_loop import run_function_calling
from llm_clients import make_client

FORCED = {"type": "function", "function": {"name": "get_forecast"}}


def kinds(events, kind):
    return [e for e in events if e["type"] == kind]


@pytest.mark.parametrize("parallel", [True, False])
@pytest.mark.parametrize("question, cities", [("北京今天天气怎么样？", ["北京"]),
                                              ("北京和上海今天天气怎么样？", ["北京", "上海"])])
def test_a_forced_function_is_called_and_the_answer_is_about_it(question, cities, parallel):
    events = list(run_function_calling(make_client("offline"), question, None, examples_weather.registry,
                                       tool_choice=FORCED, parallel_tool_calls=parallel))
    calls = kinds(events, "tool_call")
    assert calls[0]["name"] == "get_forecast" and calls[0]["turn"] == 1
    assert {c["name"] for c in calls} == {"get_forecast"}
    assert sorted(c["arguments"]["city"] for c in calls) == sorted(cities)
    assert kinds(events, "request")[0]["params"]["tool_choice"] == FORCED
    final = events[-1]
    assert final["type"] == "final" and "get_forecast" in final["content"] and "get_weather" not in final["content"]
    assert "第几天" in final["content"]


def test_without_forcing_the_same_question_uses_get_weather():
    events = list(run_function_calling(make_client("offline"), "北京今天天气怎么样？", None, examples_weather.registry))
    assert [c["name"] for c in kinds(events, "tool_call")] == ["get_weather"]


def test_tool_choice_none_answers_without_tools_and_names_the_setting(connect):
    for client in (make_client("offline"), connect("openai")):     # in process and over real HTTP
        events = list(run_function_calling(client, "北京今天天气怎么样？", None, examples_weather.registry,
                                           tool_choice="none"))
        assert not kinds(events, "tool_call") and events[-1]["type"] == "final"
        answer = events[-1]["content"]
        assert 'tool_choice="none"' in answer and "不允许调用工具" in answer and "get_weather" in answer
        assert "没有找到和问题匹配的工具" not in answer and "换个说法" not in answer


def test_a_question_no_tool_fits_still_says_so_under_auto():
    events = list(run_function_calling(make_client("offline"), "你好", None, examples_weather.registry))
    assert not kinds(events, "tool_call") and "没有找到和问题匹配的工具" in events[-1]["content"]


def test_forcing_over_http_with_the_real_sdk(connect):
    events = list(run_function_calling(connect("openai"), "北京今天天气怎么样？", None, examples_weather.registry,
                                       tool_choice=FORCED))
    assert [c["name"] for c in kinds(events, "tool_call")] == ["get_forecast"]
    assert "get_forecast" in events[-1]["content"] and "get_weather" not in events[-1]["content"]
