"""call() never raises, whatever the tool returns or raises; one-time setup happens at registration, not inside
the timed call."""
import asyncio
import json
import pathlib
import subprocess
import sys

import pytest

import tool_arguments
import tool_registry
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


class FakeClock:
    """Stands in for time.perf_counter inside tool_registry: moves only when told to."""
    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


def test_one_time_setup_is_not_part_of_the_duration(monkeypatch):
    """Building the validator (which first imports jsonschema) is made to "take" 5 s on a fake clock: the
    first call must still report the call alone."""
    clock = FakeClock()
    monkeypatch.setattr(tool_registry, "time", clock)
    real_build, built = tool_arguments.build_validator, []

    def slow_build(schema):
        clock.now += 5.0
        built.append(schema)
        return real_build(schema)

    monkeypatch.setattr(tool_registry, "build_validator", slow_build)
    registry = ToolRegistry()

    @registry.tool("加一")
    def add_one(n: int) -> int:
        clock.now += 0.002               # the tool itself "takes" 2 ms
        return n + 1

    first = registry.call("add_one", {"n": "abc"})
    assert (first.error_code, first.duration_ms) == ("invalid_arguments", 0.0)
    assert registry.call("add_one", {"n": 1}).duration_ms == 2.0
    assert len(built) == 1               # built once, then reused
    check = registry.validate("add_one", {"n": "x"})
    assert check.problems == ['参数 n 应为整数，收到字符串 "x"'] and len(built) == 1


FIRST_CALLS = """
import json, sys, time
sys.path.insert(0, CODE_DIR)
import datetime
from typing import Literal
import tool_registry
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

readings = []                            # the set of loaded modules each time call() reads its clock

class Clock:
    def perf_counter(self):
        readings.append(set(sys.modules))
        return time.perf_counter()

tool_registry.time = Clock()
report = {"imported_while_timed": [], "ok": []}
for target, name, args in [(registry, "add", {"a": "x", "when": "bad"}), (registry, "add", '{"a": 1, "when": "2024-05-01"}'),
                           (registry, "ad", {}), (registry, "echo", {"text": "hi"}), (registry, "add", "{bad"),
                           (timed, "quick", None)]:
    readings.clear()
    outcome = target.call(name, args)
    report["ok"].append(outcome.ok)
    report["imported_while_timed"] += sorted(readings[-1] - readings[0])
print(json.dumps(report))
"""


def test_first_calls_import_nothing_while_the_clock_runs():
    """A fresh interpreter, where nothing is imported yet: the first call of each kind (argument error,
    success, unknown tool, async tool, bad JSON, sync tool with a timeout) must do its one-time imports
    (jsonschema alone is over 100 ms) before its clock starts, not between the two clock readings."""
    script = FIRST_CALLS.replace("CODE_DIR", repr(str(CODE)))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] == [False, True, False, True, False, True]
    assert report["imported_while_timed"] == []
