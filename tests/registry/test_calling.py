"""validate / call / invoke: visible coercion, every error text, raising, async and huge tools. Never raises."""
import asyncio
import json
from typing import Annotated, Literal

import pytest
from hypothesis import given, settings, strategies as st
from jsonschema import Draft202012Validator
from pydantic import Field

from tool_registry import ToolOutcome, ToolRegistry


@pytest.fixture
def registry():
    registry = ToolRegistry(max_result_chars=200)

    @registry.tool("重复一段文字若干次")
    def repeat(text: str, count: int = 1, ratio: float = 1.0, loud: bool = False,
               tags: list[str] | None = None, meta: dict[str, int] | None = None,
               unit: Literal["c", "f"] = "c") -> dict:
        return {"text": text * count, "ratio": ratio, "loud": loud, "tags": tags, "meta": meta, "unit": unit}

    @registry.tool("会出错的工具")
    def explode(reason: str) -> str:
        raise RuntimeError(f"炸了：{reason}")

    @registry.tool("异步工具")
    async def slow_echo(text: str, delay: float = 0.0) -> str:
        await asyncio.sleep(delay)
        return f"异步:{text}"

    @registry.tool("返回很长的结果")
    def huge(n: int) -> str:
        return "字" * n

    @registry.tool("有范围限制")
    def ranged(n: Annotated[int, Field(ge=1, le=10)], word: Annotated[str, Field(min_length=2)] = "ab") -> int:
        return n

    return registry


def test_coercion_is_visible_and_validated(registry):
    check = registry.validate("repeat", {"text": "a", "count": "5", "ratio": "2.5", "loud": "true",
                                         "tags": '["x", "y"]', "meta": '{"k": 1}'})
    assert check.ok, check.problems
    assert check.arguments == {"text": "a", "count": 5, "ratio": 2.5, "loud": True, "tags": ["x", "y"],
                               "meta": {"k": 1}, "unit": "c"}
    assert check.coercions == ['count: "5" → 5', 'ratio: "2.5" → 2.5', 'loud: "true" → true',
                               'tags: "[\\"x\\", \\"y\\"]" → ["x", "y"]', 'meta: "{\\"k\\": 1}" → {"k": 1}']
    Draft202012Validator(registry.tools["repeat"].parameters).validate(check.arguments)


def test_no_coercion_when_the_value_already_fits(registry):
    check = registry.validate("repeat", {"text": "5", "count": 2})
    assert check.ok and check.coercions == [] and check.arguments["text"] == "5"


def test_numbers_for_strings_and_integral_floats(registry):
    check = registry.validate("repeat", {"text": 42, "count": 3.0})
    assert check.ok and check.arguments["text"] == "42" and check.coercions == ['text: 42 → "42"']
    assert registry.call("repeat", {"text": "ab", "count": 2.0}).content.startswith('{"text": "abab"')


def test_arguments_as_json_text(registry):
    outcome = registry.call("repeat", '{"text": "你好", "count": 2}')
    assert outcome.ok
    assert json.loads(outcome.content)["text"] == "你好你好"
    assert "你好" in outcome.content                       # ensure_ascii=False
    assert registry.call("slow_echo", '"{\\"text\\": \\"x\\"}"').content == "异步:x"   # double-encoded JSON


def test_call_shape_and_to_dict(registry):
    outcome = registry.call("repeat", {"text": "a", "count": "2"})
    assert isinstance(outcome, ToolOutcome)
    data = outcome.to_dict()
    assert set(data) == {"ok", "content", "error_code", "duration_ms", "arguments", "problems", "coercions",
                         "clipped_from", "edited"}
    assert data["ok"] is True and data["error_code"] is None and data["duration_ms"] >= 0
    assert data["arguments"]["count"] == 2 and data["coercions"] == ['count: "2" → 2']
    json.dumps(data, ensure_ascii=False)
    assert registry.invoke("repeat", {"text": "a"}) == registry.call("repeat", {"text": "a"}).content


@pytest.mark.parametrize("args, code, text", [
    ({"text": "a", "count": "abc"}, "invalid_arguments",
     '❌ [参数错误] 参数 count 应为整数，收到字符串 "abc"。请改为整数后重试。'),
    ({"count": 1}, "invalid_arguments", "❌ [参数错误] 缺少必填参数 text（字符串）。请补上 text 后重试。"),
    ({"text": "a", "colour": "red"}, "invalid_arguments",
     "❌ [参数错误] 未知参数 colour（可用参数：text、count、ratio、loud、tags、meta、unit）。请去掉 colour，只用列出的参数。"),
    ({"text": "a", "unit": "k"}, "invalid_arguments",
     '❌ [参数错误] 参数 unit 应为以下之一："c"、"f"，收到字符串 "k"。请改为以下之一："c"、"f"后重试。'),
    ({"text": "a", "tags": ["x", [1]]}, "invalid_arguments",
     '❌ [参数错误] 参数 tags[1] 应为字符串，收到数组 [1]。请改为字符串后重试。'),
    ({"text": "a", "loud": "yes"}, "invalid_arguments",
     '❌ [参数错误] 参数 loud 应为布尔值（true/false），收到字符串 "yes"。请改为布尔值（true/false）后重试。'),
    ('{"text": "a",', "invalid_json",
     "❌ [参数格式错误] 参数不是合法的 JSON：第 1 行第 14 列附近出错（Expecting property name enclosed in double quotes）。"
     "请重新输出一个合法的 JSON 对象作为参数（键和字符串都用双引号）。"),
    ("[1, 2]", "invalid_json",
     "❌ [参数格式错误] 参数应为 JSON 对象（{\"参数名\": 值}），收到数组 [1, 2]。请重新输出一个合法的 JSON 对象作为参数（键和字符串都用双引号）。"),
    # valid JSON, but not an object: a string is not taken for JSON encoded twice unless it looks like it
    ('"hello"', "invalid_json",
     "❌ [参数格式错误] 参数应为 JSON 对象（{\"参数名\": 值}），收到字符串 \"hello\"。请重新输出一个合法的 JSON 对象作为参数（键和字符串都用双引号）。"),
    ("3", "invalid_json",
     "❌ [参数格式错误] 参数应为 JSON 对象（{\"参数名\": 值}），收到整数 3。请重新输出一个合法的 JSON 对象作为参数（键和字符串都用双引号）。"),
    ("null", "invalid_json",
     "❌ [参数格式错误] 参数应为 JSON 对象（{\"参数名\": 值}），收到空值 null。请重新输出一个合法的 JSON 对象作为参数（键和字符串都用双引号）。"),
    ('"[1, 2]"', "invalid_json",
     "❌ [参数格式错误] 参数应为 JSON 对象（{\"参数名\": 值}），收到数组 [1, 2]。请重新输出一个合法的 JSON 对象作为参数（键和字符串都用双引号）。"),
])
def test_error_texts(registry, args, code, text):
    outcome = registry.call("repeat", args)
    assert (outcome.ok, outcome.error_code, outcome.content) == (False, code, text)
    assert outcome.arguments is None and outcome.problems


def test_several_problems_are_all_reported(registry):
    outcome = registry.call("repeat", {"count": "x", "unit": "k"})
    assert outcome.problems == ["缺少必填参数 text（字符串）", '参数 count 应为整数，收到字符串 "x"',
                                '参数 unit 应为以下之一："c"、"f"，收到字符串 "k"']
    assert outcome.content.endswith("。请逐条修正以上问题后重试。")
    assert "；" in outcome.content


def test_an_unknown_parameter_names_the_one_it_probably_meant(registry):
    """A typo, or a parameter renamed in the function but not where the call came from."""
    typo = registry.call("repeat", {"txet": "a"})
    assert typo.problems == ["缺少必填参数 text（字符串）", "未知参数 txet（是不是想用 text？可用参数：text、count、ratio、"
                             "loud、tags、meta、unit）"]
    renamed = registry.call("explode", {"why": "x"})     # the only unknown one, the only missing one
    assert renamed.content == ("❌ [参数错误] 缺少必填参数 reason（字符串）；未知参数 why（是不是想用 reason？"
                               "可用参数：reason）。请逐条修正以上问题后重试。")
    alone = registry.call("explode", {"reason": "x", "why": "y"})   # nothing missing: no guess
    assert alone.content == "❌ [参数错误] 未知参数 why（可用参数：reason）。请去掉 why，只用列出的参数。"
    two = registry.call("explode", {"why": "x", "how": "y"})        # two unknown, one missing: no guess
    assert "是不是想用" not in two.content


def test_constraints_from_field(registry):
    assert registry.call("ranged", {"n": 0}).problems == ["参数 n 应 ≥ 1，收到整数 0"]
    assert registry.call("ranged", {"n": 11}).problems == ["参数 n 应 ≤ 10，收到整数 11"]
    assert registry.call("ranged", {"n": 5, "word": "a"}).problems == ["参数 word 长度应至少为 2，收到字符串 \"a\""]
    assert registry.invoke("ranged", {"n": "7"}) == "7"


def test_unknown_tool(registry):
    outcome = registry.call("repaet", {})
    assert outcome.error_code == "unknown_tool"
    assert outcome.content == ('❌ [未知工具] 没有名为 "repaet" 的工具（是不是想用 repeat？）。'
                               "请从这些工具中选择：repeat、explode、slow_echo、huge、ranged。")


def test_raising_tool(registry):
    outcome = registry.call("explode", {"reason": "测试"})
    assert (outcome.ok, outcome.error_code) == (False, "tool_exception")
    assert outcome.content == "❌ [工具异常] explode 执行出错：RuntimeError: 炸了：测试。请检查参数是否合理后重试，或换一种做法。"
    assert outcome.arguments == {"reason": "测试"}


def test_system_exit_inside_a_tool_is_contained():
    registry = ToolRegistry()

    @registry.tool("退出")
    def quit_now() -> str:
        raise SystemExit(3)

    assert registry.call("quit_now").error_code == "tool_exception"


def test_async_tool_is_awaited(registry):
    assert registry.invoke("slow_echo", {"text": "好"}) == "异步:好"


def test_async_tool_from_inside_a_running_event_loop(registry):
    async def inside():
        return registry.invoke("slow_echo", {"text": "loop"})
    assert asyncio.run(inside()) == "异步:loop"


def test_timeout_for_async_and_sync_tools():
    import threading
    registry = ToolRegistry(timeout=0.2)
    release = threading.Event()

    @registry.tool("慢")
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "done"

    @registry.tool("卡住")
    def stuck() -> str:
        release.wait(5)
        return "late"

    outcome = registry.call("slow", {"seconds": 5})
    assert outcome.error_code == "timeout"
    assert outcome.content == "❌ [超时] slow 超过 0.2 秒没有返回。请稍后重试，或缩小请求的范围。"
    assert registry.call("stuck").error_code == "timeout"
    release.set()
    assert registry.invoke("slow", {"seconds": 0}) == "done"


def test_huge_result_is_truncated_with_a_marker(registry):
    outcome = registry.call("huge", {"n": 5000})
    assert outcome.ok
    assert outcome.content.startswith("字" * 200)
    assert outcome.content.endswith("…（结果过长已截断：共 5000 个字符，只保留了前 200 个）")
    assert len(outcome.content) < 260
    assert registry.invoke("huge", {"n": 200}) == "字" * 200


def test_non_string_results_become_json():
    import dataclasses
    import datetime
    import enum

    class Mood(enum.Enum):
        HAPPY = "开心"

    @dataclasses.dataclass
    class Report:
        when: datetime.date
        mood: Mood

    registry = ToolRegistry()
    registry.tool("a", name="number")(lambda: 42)
    registry.tool("b", name="nothing")(lambda: None)
    registry.tool("c", name="report")(lambda: Report(datetime.date(2024, 5, 1), Mood.HAPPY))
    registry.tool("d", name="tags")(lambda: {"标签": {"b"}})
    assert registry.invoke("number") == "42"
    assert registry.invoke("nothing") == "null"
    assert registry.invoke("report") == '{"when": "2024-05-01", "mood": "开心"}'
    assert registry.invoke("tags") == '{"标签": ["b"]}'


def test_bad_date_string_is_an_argument_problem():
    import datetime
    registry = ToolRegistry()

    @registry.tool("约会")
    def meet(at: datetime.datetime) -> str:
        return at.isoformat()

    assert registry.invoke("meet", {"at": "2024-05-01T08:30:00"}) == "2024-05-01T08:30:00"
    outcome = registry.call("meet", {"at": "明天早上"})
    assert outcome.error_code == "invalid_arguments"
    assert outcome.problems == ['参数 at 应为日期时间字符串（如 "2024-05-01T08:30:00"），收到字符串 "明天早上"']


def test_empty_arguments_for_tools_without_parameters():
    registry = ToolRegistry()
    registry.tool("现在几点", name="now")(lambda: "12:00")
    for empty in (None, "", "  ", {}, "{}"):
        assert registry.invoke("now", empty) == "12:00"


def test_validate_does_not_mutate_the_callers_arguments(registry):
    args = {"text": "a", "count": "3"}
    registry.validate("repeat", args)
    assert args == {"text": "a", "count": "3"}


JSON = st.recursive(st.none() | st.booleans() | st.integers(-10, 10) | st.floats(allow_nan=False, width=32)
                    | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)
KEYS = st.sampled_from(["text", "count", "ratio", "loud", "tags", "meta", "unit", "other"])


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(KEYS, JSON | st.sampled_from(["5", "2.5", "true", "[\"a\"]", "{\"k\": 2}"]), max_size=6))
def test_validator_agrees_with_the_published_schema_and_call_never_raises(args):
    registry = ToolRegistry()
    received = []

    @registry.tool("任意")
    def repeat(text: str, count: int = 1, ratio: float = 1.0, loud: bool = False,
               tags: list[str] | None = None, meta: dict[str, int] | None = None,
               unit: Literal["c", "f"] = "c") -> str:
        received.append((text, count, ratio, loud, tags, meta, unit))
        return "ok"

    check = registry.validate("repeat", args)
    schema_says = Draft202012Validator(registry.tools["repeat"].parameters).is_valid(check.arguments)
    assert check.ok == schema_says
    outcome = registry.call("repeat", args)
    assert outcome.ok == check.ok
    if outcome.ok:
        text, count, ratio, loud, tags, meta, unit = received[-1]
        assert type(text) is str and type(count) is int and type(ratio) is float and type(loud) is bool
        assert unit in ("c", "f")
    for garbage in (args, json.dumps(args)[:-1], [args], 7):
        assert isinstance(registry.invoke("repeat", garbage), str)
