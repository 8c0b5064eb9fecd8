"""The example sets that show what a schema cannot: a business rule refusing valid arguments, an async tool,
a tool that times out, a result clipped at RESULT_LIMIT. Every preset runs through every loop with the offline
model, which calls the tool the question is about and answers from what came back."""
import json

import pytest

import examples_async
import examples_authorization
import examples_long_result
import examples_timeout
from function_calling_loop import run_function_calling
from json_loop import run_json_from_text
from lessons.editor_panel import EXAMPLE_SETS
from lessons.presets import PRESETS
from llm_clients import make_client
from react_loop import run_react
from tool_outcome import LABELS, RESULT_LIMIT

LOOPS = {"native": run_function_calling, "react": run_react, "json": run_json_from_text}
SETS = {"转账与删除用户（Schema ≠ 授权）": examples_authorization, "异步工具（async def）": examples_async,
        "会超时的工具（timeout）": examples_timeout, "超长结果（截断）": examples_long_result}

# question -> [(tool, arguments the offline model must pick, expected error_code or None)]
EXPECTED = {
    "给张三转账 8000 元": [("transfer_money", {"payee": "张三", "amount": 8000}, "forbidden")],
    "给王五转账 100 元": [("transfer_money", {"payee": "王五", "amount": 100}, "forbidden")],
    "删除用户 1": [("delete_user", {"user_id": "1"}, "forbidden")],
    "给张三转账 800 元": [("transfer_money", {"payee": "张三", "amount": 800}, None)],
    "删除用户 42": [("delete_user", {"user_id": "42"}, None)],
    "北京和上海的空气质量怎么样？": [("get_air_quality", {"city": "北京"}, None),
                                   ("get_air_quality", {"city": "上海"}, None)],
    "成都今天雾霾严重吗": [("get_air_quality", {"city": "成都"}, None)],
    "美元汇率是多少": [("get_exchange_rate", {"currency": "usd"}, None)],
    "北京现在的路况怎么样？": [("get_traffic", {"city": "北京"}, "timeout")],
    "上海现在堵不堵？": [("get_traffic", {"city": "上海"}, None)],
    "上海和北京的路况": [("get_traffic", {"city": "上海"}, None), ("get_traffic", {"city": "北京"}, "timeout")],
    "列出上海的全部门店": [("list_stores", {"city": "上海"}, None)],
    "上海的前 5 家门店": [("list_stores", {"city": "上海", "limit": 5}, None)],
}
CASES = [(label, question) for label in SETS for question in PRESETS[label]]


def test_the_sets_are_in_the_editor_and_every_preset_has_an_expectation():
    for label, module in SETS.items():
        assert EXAMPLE_SETS[label] == module.__name__ + ".py"
    assert {q for _, q in CASES} == set(EXPECTED)


@pytest.mark.parametrize("loop", list(LOOPS))
@pytest.mark.parametrize("label, question", CASES, ids=[q for _, q in CASES])
def test_presets_call_the_right_tool_and_the_answer_tells_what_happened(label, question, loop):
    registry = SETS[label].registry
    events = list(LOOPS[loop](make_client("offline"), question, None, registry))
    results = [e for e in events if e["type"] == "tool_result"]
    got = [(r["name"], {k: v for k, v in r["arguments"].items() if v is not None}, r["error_code"]) for r in results]
    assert got == EXPECTED[question]
    final = events[-1]
    assert final["type"] == "final"
    for result in results:
        if result["ok"]:
            assert result["content"][:20] in final["content"]
        else:     # a refusal or a timeout is not retried and is told as it is, label and all
            assert f"[{LABELS[result['error_code']]}]" in final["content"]


def test_a_refusal_is_a_valid_call_refused_by_a_rule():
    registry = examples_authorization.registry
    arguments = {"payee": "张三", "amount": 8000}
    assert registry.validate("transfer_money", arguments).ok          # the schema has nothing against it
    refused = registry.call("transfer_money", arguments)
    assert not refused.ok and refused.error_code == "forbidden"
    assert refused.content.startswith("❌ [业务规则不允许] 单笔转账上限是 5000 元") and "不要拆成几笔" in refused.content
    assert refused.arguments == arguments and refused.duration_ms >= 0
    assert registry.call("transfer_money", {"payee": "张三", "amount": "8000"}).coercions    # still the registry's call


def test_the_async_tools_are_async_and_run_together():
    assert all(tool.is_async for tool in examples_async.registry.tools.values())
    events = list(run_function_calling(make_client("offline"), "北京和上海的空气质量怎么样？", None,
                                       examples_async.registry))
    a, b = [e for e in events if e["type"] == "tool_result"]
    assert a["started_ms"] < b["finished_ms"] and b["started_ms"] < a["finished_ms"]


def test_the_timeout_comes_from_the_registry_setting():
    registry = examples_timeout.registry
    assert registry.timeout is not None
    slow = registry.call("get_traffic", {"city": "北京"})
    assert slow.error_code == "timeout" and f"超过 {registry.timeout:g} 秒没有返回" in slow.content
    assert registry.call("get_traffic", {"city": "上海"}).ok


def test_the_long_result_is_clipped_with_the_note_and_the_answer_says_so():
    full = examples_long_result.registry.call("list_stores", {"city": "上海"})
    assert full.clipped_from > RESULT_LIMIT and full.content.endswith(
        f"…（结果过长已截断：共 {full.clipped_from} 个字符，只保留了前 {RESULT_LIMIT} 个）")
    short = examples_long_result.registry.call("list_stores", {"city": "上海", "limit": 5})
    assert short.clipped_from is None and len(json.loads(short.content)) == 5
    for envelope in (False, True):
        events = list(run_function_calling(make_client("offline"), "列出上海的全部门店", None,
                                           examples_long_result.registry, envelope=envelope))
        assert "这个结果过长被截断了" in events[-1]["content"] and "可以缩小范围再查" in events[-1]["content"]
