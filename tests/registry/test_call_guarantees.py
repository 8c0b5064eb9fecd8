"""call() never raises, whatever the tool returns or raises; one-time setup happens at registration, not inside
the timed call."""
import asyncio
import json
import pathlib
import subprocess
import sys

import pytest

import tool_arguments
from tool_registry import ToolRegistry

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"


class Unprintable:
    def __str__(self):
        raise RuntimeError("str() 坏了")

    __repr__ = __str__


def _circular():
    items = [1]
    items.append(items)
    return items


@pytest.mark.parametrize("result, why", [
    (Unprintable(), "RuntimeError: str() 坏了"),
    ({"nested": Unprintable()}, "RuntimeError: str() 坏了"),
    (_circular(), "ValueError: Circular reference detected"),
    ({(1, 2): "tuple key"}, "TypeError: keys must be str, int, float, bool or None, not tuple"),
    (10 ** 5000, "ValueError: Exceeds the limit (4300 digits) for integer string conversion"),
], ids=["str-raises", "nested-str-raises", "circular", "tuple-key", "huge-int"])
def test_a_result_that_cannot_become_text_is_a_tool_exception(result, why):
    registry = ToolRegistry()

    @registry.tool("返回一个转不成文本的值")
    def odd(label: str) -> object:
        return result

    outcome = registry.call("odd", {"label": "x"})
    assert (outcome.ok, outcome.error_code, outcome.arguments) == (False, "tool_exception", {"label": "x"})
    assert outcome.content.startswith(f"❌ [工具异常] odd 的返回值无法转成文本：{why}")
    assert outcome.content.endswith("请让工具返回字符串、数字、列表或字典。")
    json.dumps(outcome.to_dict(), ensure_ascii=False)          # the structured form stays JSON-ready
    assert registry.invoke("odd", {"label": "x"}) == outcome.content


def test_an_exception_whose_str_raises_is_still_reported():
    class Strange(Exception):
        def __str__(self):
            raise RuntimeError("连报错信息都坏了")

    registry = ToolRegistry()

    @registry.tool("抛出一个奇怪的异常")
    def strange() -> str:
        raise Strange()

    outcome = registry.call("strange")
    assert (outcome.ok, outcome.error_code) == (False, "tool_exception")
    assert outcome.content == "❌ [工具异常] strange 执行出错：Strange。请检查参数是否合理后重试，或换一种做法。"


def test_cancelled_error_from_an_async_tool_is_contained():
    registry = ToolRegistry()

    @registry.tool("被取消")
    async def cancelled() -> str:
        raise asyncio.CancelledError()

    outcome = registry.call("cancelled")
    assert (outcome.ok, outcome.error_code) == (False, "tool_exception")
    assert "CancelledError" in outcome.content


def test_keyboard_interrupt_is_not_swallowed():
    registry = ToolRegistry()

    @registry.tool("按了 Ctrl+C")
    def interrupted() -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        registry.call("interrupted")


def test_positional_only_parameters_follow_the_signature_order():
    registry = ToolRegistry()

    @registry.tool("相减")
    def minus(a: int, b: int, /) -> int:
        return a - b

    assert registry.invoke("minus", {"b": 1, "a": 10}) == "9"


def test_the_validator_is_built_at_registration_not_during_the_call(monkeypatch):
    registry = ToolRegistry()

    @registry.tool("加一")
    def add_one(n: int) -> int:
        return n + 1

    assert registry.tools["add_one"]._validator is not None

    def no_building(*args, **kwargs):
        raise AssertionError("a validator was built inside call()")

    import jsonschema
    monkeypatch.setattr(jsonschema, "Draft202012Validator", no_building)
    monkeypatch.setattr(tool_arguments, "build_validator", no_building)
    first = registry.call("add_one", {"n": "abc"})                # the first failing validation uses the cached one
    assert first.error_code == "invalid_arguments"
    assert first.problems == ['参数 n 应为整数，收到字符串 "abc"']
    assert registry.invoke("add_one", {"n": 1}) == "2"


FIRST_CALLS = """
import json, sys
sys.path.insert(0, CODE_DIR)
import datetime
from typing import Literal
from tool_registry import ToolRegistry

registry = ToolRegistry()
timed = ToolRegistry(timeout=5)

@registry.tool("加一")
def add(a: int, when: datetime.date | None = None, unit: Literal["c", "f"] = "c") -> dict:
    return {"sum": a + 1}

@registry.tool("异步回声")
async def echo(text: str) -> str:
    return text

@timed.tool("限时")
def quick() -> str:
    return "ok"

before = set(sys.modules)
outcomes = [registry.call("add", {"a": "x", "when": "bad"}), registry.call("add", '{"a": 1, "when": "2024-05-01"}'),
            registry.call("ad", {}), registry.call("echo", {"text": "hi"}), registry.call("add", "{bad"),
            timed.call("quick")]
print(json.dumps({"imported": sorted(set(sys.modules) - before), "ok": [o.ok for o in outcomes]}))
"""


def test_first_calls_import_nothing_so_their_duration_is_only_the_call():
    """A fresh interpreter: after registration, the first call of each kind (argument error, success, unknown
    tool, async tool, bad JSON, sync tool with a timeout) must not import anything, so none of the one-time
    import cost (jsonschema alone is over 100 ms) lands in duration_ms."""
    script = FIRST_CALLS.replace("CODE_DIR", repr(str(CODE)))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] == [False, True, False, True, False, True]
    assert report["imported"] == []
