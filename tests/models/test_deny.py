"""Step mode's deny override: the tool does not run, the model is told why and does not ask again."""
import json

import pytest

import examples_weather
from function_calling_loop import run_function_calling
from json_loop import run_json_from_text
from react_loop import run_react
from tool_outcome import LABELS

REGISTRY = examples_weather.registry
TOOLS = REGISTRY.to_schemas()
LOOPS = {"native": run_function_calling, "react": run_react, "json": run_json_from_text}


def drive(run, decide):
    """Runs a loop to the end; after each tool_call event, send(decide(event))."""
    seen, event = [], next(run)
    while True:
        seen.append(event)
        try:
            event = run.send(decide(event)) if event["type"] == "tool_call" else next(run)
        except StopIteration:
            return seen


@pytest.mark.parametrize("loop", list(LOOPS))
def test_denied_call_does_not_run_and_the_model_is_told(connect, loop):
    ran = []

    def execute(name, args):
        ran.append((name, args))
        return REGISTRY.call(name, args).to_dict()

    seen = drive(LOOPS[loop](connect("openai"), "北京天气怎么样？", TOOLS, execute),
                 lambda event: {"deny": "不想查北京"})
    json.dumps(seen, ensure_ascii=False)
    assert ran == []
    results = [e for e in seen if e["type"] == "tool_result"]
    assert len(results) == 1 and results[0]["ok"] is False and results[0]["error_code"] == "denied"
    content = results[0]["content"]
    assert content.startswith(f"❌ [{LABELS['denied']}] 用户拒绝了这次调用：不想查北京。")
    assert "不要重复" in content and results[0]["arguments"] == {"city": "北京"}
    history = seen[-1]["messages"]
    assert any(content in json.dumps(m, ensure_ascii=False) or content in str(m.get("content")) for m in history)
    assert seen[-1]["type"] == "final" and "用户拒绝" in seen[-1]["content"]


def test_deny_only_the_call_it_answers(connect):
    """Two parallel calls: the first is denied, the second runs."""
    seen = drive(run_function_calling(connect("openai"), "北京和上海的天气怎么样？", TOOLS,
                                      lambda n, a: REGISTRY.call(n, a).to_dict()),
                 lambda event: {"deny": ""} if event["arguments"]["city"] == "北京" else None)
    first, second = [e for e in seen if e["type"] == "tool_result"]
    assert first["error_code"] == "denied" and "没有说明理由" in first["content"]
    assert second["ok"] and "上海今天多云" in second["content"]


def test_a_rule_s_denial_names_the_rule_not_the_user(connect):
    seen = drive(run_function_calling(connect("openai"), "北京天气怎么样？", TOOLS,
                                      lambda n, a: REGISTRY.call(n, a).to_dict()),
                 lambda event: {"deny": "工具规则 get_weather 匹配工具 get_weather：拒绝", "rule": "get_weather"})
    result = next(e for e in seen if e["type"] == "tool_result")
    assert result["error_code"] == "rule_denied" and "用户" not in result["content"].split("。")[0]
    assert result["content"].startswith(f"❌ [{LABELS['rule_denied']}] 权限规则不允许这次调用"
                                        "（工具规则 get_weather 匹配工具 get_weather：拒绝）。")


@pytest.mark.parametrize("loop", list(LOOPS))
def test_edited_arguments_are_told_to_the_model_and_its_answer_agrees(connect, loop):
    """A person changed the call's arguments before it ran: the result says what changed, and the
    offline model's answer speaks of what ran (上海), not of what it wrote (北京)."""
    seen = drive(LOOPS[loop](connect("openai"), "北京天气怎么样？", TOOLS, lambda n, a: REGISTRY.call(n, a).to_dict()),
                 lambda event: {"arguments": {"city": "上海"}})
    result = next(e for e in seen if e["type"] == "tool_result")
    assert result["ok"] and result["arguments"]["city"] == "上海" and result["edited"] == ['city："北京" → "上海"']
    assert result["content"].startswith('（执行前，用户修改了你写的参数：city："北京" → "上海"。'
                                        '实际执行的参数是 {"city": "上海"}，下面的结果按它得出。）\n上海')
    answer = seen[-1]["content"]
    assert seen[-1]["type"] == "final" and "city=上海" in answer and "city=北京" not in answer
    assert "用户改过" in answer


def test_arguments_sent_back_unchanged_are_no_edit(connect):
    seen = drive(run_function_calling(connect("openai"), "北京天气怎么样？", TOOLS,
                                      lambda n, a: REGISTRY.call(n, a).to_dict()),
                 lambda event: {"arguments": dict(event["arguments"])})
    result = next(e for e in seen if e["type"] == "tool_result")
    assert result["edited"] == [] and result["content"].startswith("北京")
