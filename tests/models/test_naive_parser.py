"""The parse event of the ReAct loop says what a naive first parser would have read from the same reply:
the offline model's formatting quirks trip it while the robust parser copes, and the broken formats trip both."""
import pytest

import examples_weather
from llm_clients import make_client
from react_loop import run_react
from text_parsers import NAIVE_ACTION, parse_react

QUESTION = "北京和上海明天的天气预报"


def first_parse(mistake):
    events = list(run_react(make_client("offline", mistake=mistake), QUESTION, None, examples_weather.registry))
    return [e for e in events if e["type"] == "parse"], events


def test_on_the_standard_format_both_parsers_agree():
    parses, events = first_parse(None)
    assert events[-1]["type"] == "final"
    for parse in parses:
        naive = parse["naive"]
        assert naive["agrees"] and naive["matched"] and naive["kind"] == parse["kind"]
        assert naive["verdict"] == "朴素正则读出的结果相同"
    action, final = parses[0], parses[-1]
    assert action["naive"]["tool"] == action["groups"]["tool"] == "get_forecast"
    assert action["naive"]["args"] == action["groups"]["args"]
    assert final["naive"]["answer"] == final["groups"]["answer"]


@pytest.mark.parametrize("mistake, matched, verdict", [
    ("bold_action", False, "朴素正则没有匹配"),
    ("fenced_json", False, "朴素正则没有匹配"),
    ("invented_observation", True, "朴素正则匹配到了错误的内容：它先找 Final Answer"),
    ("multi_step", True, "朴素正则匹配到了错误的内容：工具 get_forecast"),
])
def test_quirks_trip_the_naive_pattern_while_the_robust_parser_copes(mistake, matched, verdict):
    parses, events = first_parse(mistake)
    first = parses[0]
    assert first["ok"] and first["kind"] == "action" and first["groups"]["tool"] == "get_forecast"
    naive = first["naive"]
    assert naive["matched"] is matched and not naive["agrees"] and naive["verdict"].startswith(verdict)
    assert events[-1]["type"] == "final" and all(r["ok"] for r in events if r["type"] == "tool_result")
    if mistake == "invented_observation":
        assert naive["kind"] == "final" and naive["answer"] == "一切正常"
    if mistake == "multi_step":            # the greedy (.*) swallowed the second step
        assert "上海" in naive["args"] and "上海" not in first["groups"]["args"]


@pytest.mark.parametrize("mistake, why", [
    ("no_action_line", "没有 \"Action:\" 行"), ("action_input_kv", "Action Input 也不是 JSON"),
    ("paren_call", "圆括号")])
def test_broken_formats_trip_both_and_say_why(mistake, why):
    parses, events = first_parse(mistake)
    first = parses[0]
    assert not first["ok"] and not first["naive"]["matched"] and first["naive"]["agrees"]
    assert first["naive"]["verdict"] == "朴素正则也没有匹配"
    assert why in first["reason"]
    feedback = next(m for m in events[-1]["messages"] if m["role"] == "user" and "格式错误" in m["content"])
    assert why in feedback["content"]                    # the model reads the same reason and rewrites
    assert parses[1]["ok"] and parses[1]["naive"]["agrees"] and events[-1]["type"] == "final"


def test_think_block_fools_only_the_naive_parser():
    text = "<think>\nAction: delete_all[{}]\n</think>\nThought: 查天气\nAction: get_weather[{\"city\": \"北京\"}]"
    parsed, _ = parse_react(text)
    assert parsed["groups"]["tool"] == "get_weather"
    assert parsed["naive"]["tool"] == "delete_all" and not parsed["naive"]["agrees"]


def test_naive_pattern_is_the_one_shown():
    parsed, _ = parse_react("Action: get_weather[北京]")
    assert parsed["naive"]["pattern"] == NAIVE_ACTION.pattern and parsed["naive"]["agrees"]
    assert set(parsed) >= {"ok", "kind", "pattern", "groups", "span", "notes", "reason", "naive"}
