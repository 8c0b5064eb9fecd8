"""simple_registry.py, the short registry read before tool_registry.py: a decorator registry whose
schema comes from the signature and docstring, jsonschema type checks, one dispatch dict."""
import json
import pathlib
import subprocess
import sys
import textwrap
from typing import Literal, Optional

import pytest

import simple_registry
import tool_registry
from simple_registry import SimpleRegistry
from tool_outcome import LABELS

CODE = pathlib.Path(__file__).resolve().parents[2] / "code"


@pytest.fixture
def registry():
    registry = SimpleRegistry()

    @registry.tool("查询指定城市的天气预报")
    def get_forecast(city: str, days: int = 1, unit: Literal["c", "f"] = "c", tags: list[str] | None = None) -> str:
        """天气预报。

        Args:
            city (str): 城市名，如 北京
            days: 预报几天

        Returns:
            预报文字
        """
        return f"{city}:{days}:{unit}:{tags}"

    @registry.tool()
    def boom(n: int) -> dict:
        """总是出错的工具。"""
        raise RuntimeError(f"坏了 {n}")

    return registry


def test_the_decorator_registers_and_returns_the_function_unchanged(registry):
    assert set(registry.functions) == {"get_forecast", "boom"}
    assert registry.functions["get_forecast"]("北京") == "北京:1:c:None"


def test_the_schema_comes_from_the_signature_and_the_docstring(registry):
    forecast, boom = registry.to_schemas()
    assert forecast == {"type": "function", "function": {
        "name": "get_forecast", "description": "查询指定城市的天气预报",
        "parameters": {"type": "object", "required": ["city"], "properties": {
            "city": {"type": "string", "description": "城市名，如 北京"},
            "days": {"type": "integer", "description": "预报几天"},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}}}}}}
    assert boom["function"]["description"] == "总是出错的工具。"      # no description given: the docstring's first paragraph


def test_the_schema_agrees_with_the_reference_registry_on_the_types_both_know():
    def lookup(city: str, count: int, ratio: float, exact: bool, unit: Literal["c", "f"] = "c",
               limit: Optional[int] = None, names: list[str] = (), scale: Optional[Literal["c", "f"]] = None) -> str:
        return ""

    short = simple_registry.function_schema(lookup, "查")["function"]["parameters"]
    reference = tool_registry.ToolRegistry()
    reference.tool("查")(lookup)
    full = reference.to_schemas()[0]["function"]["parameters"]
    assert short["required"] == full["required"]
    for name, schema in full["properties"].items():
        assert short["properties"][name] == {k: v for k, v in schema.items() if k in ("type", "enum", "items")}, name


def test_an_optional_enum_accepts_null():
    registry = SimpleRegistry()

    @registry.tool("换算")
    def convert(degrees: float, unit: Optional[Literal["c", "f"]] = None) -> str:
        return f"{degrees}:{unit}"

    assert registry.schemas["convert"]["function"]["parameters"]["properties"]["unit"] == {
        "type": ["string", "null"], "enum": ["c", "f", None]}
    assert registry.call("convert", '{"degrees": 20, "unit": null}') == "20:None"
    assert registry.call("convert", '{"degrees": 20, "unit": "f"}') == "20:f"
    assert registry.call("convert", '{"degrees": 20, "unit": "k"}').startswith("❌")


def test_string_annotations_from_future_are_resolved(tmp_path, monkeypatch):
    (tmp_path / "future_tools.py").write_text(textwrap.dedent('''
        from __future__ import annotations
        from simple_registry import SimpleRegistry
        registry = SimpleRegistry()

        @registry.tool("数一数")
        def count(n: int, word: str | None = None) -> str:
            return str(n)
    '''), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import future_tools
    properties = future_tools.registry.to_schemas()[0]["function"]["parameters"]["properties"]
    assert properties == {"n": {"type": "integer"}, "word": {"type": ["string", "null"]}}


def test_unknown_or_missing_annotations_fail_at_registration():
    registry = SimpleRegistry()
    with pytest.raises(TypeError, match=r"where\.when"):
        @registry.tool("x")
        def where(when: complex) -> str:
            return ""
    with pytest.raises(TypeError, match=r"bare\.value"):
        @registry.tool("x")
        def bare(value) -> str:
            return ""
    assert registry.functions == {}


def test_a_name_cannot_be_registered_twice(registry):
    with pytest.raises(ValueError, match="get_forecast"):
        @registry.tool("again")
        def get_forecast(city: str) -> str:
            return ""
    assert registry.functions["get_forecast"]("上海") == "上海:1:c:None"


def test_calls_dispatch_through_the_one_dict(registry):
    assert registry.call("get_forecast", '{"city": "北京", "days": 3, "unit": "f"}') == "北京:3:f:None"
    assert registry.call("get_forecast", {"city": "北京", "tags": ["晴"]}) == "北京:1:c:['晴']"


@pytest.mark.parametrize("name, arguments, code, mentions", [
    ("get_weather", "{}", "unknown_tool", "get_forecast"),
    ("get_forecast", '{"city": "北京"', "invalid_json", "JSON"),
    ("get_forecast", '{"city": "北京", "days": "3"}', "invalid_arguments", "days"),
    ("get_forecast", '{"days": 3}', "invalid_arguments", "city"),
    ("get_forecast", '{"city": "北京", "unit": "k"}', "invalid_arguments", "unit"),
    ("get_forecast", "[1, 2]", "invalid_arguments", "object"),
    ("boom", '{"n": 2}', "tool_exception", "坏了 2"),
])
def test_every_failure_is_text_for_the_model_never_an_exception(registry, name, arguments, code, mentions):
    text = registry.call(name, arguments)
    assert text.startswith(f"❌ [{LABELS[code]}] ") and mentions in text


def test_the_type_check_runs_before_the_function():
    registry, seen = SimpleRegistry(), []

    @registry.tool("记下")
    def note(count: int) -> str:
        seen.append(count)
        return "ok"

    assert registry.call("note", {"count": "5"}).startswith("❌")      # no coercion in the short version
    assert registry.call("note", {"count": True}).startswith("❌")
    assert seen == [] and registry.call("note", {"count": 5}) == "ok" and seen == [5]


def test_results_that_are_not_text_are_sent_as_json():
    registry = SimpleRegistry()

    @registry.tool("数据")
    def data() -> dict:
        return {"城市": "北京", "温度": 25}

    assert json.loads(registry.call("data", "")) == {"城市": "北京", "温度": 25}


def test_it_runs_alone_and_is_short():
    source = (CODE / "simple_registry.py").read_text(encoding="utf-8")
    assert 100 <= len(source.splitlines()) <= 150
    assert "naive_schema.py" in source.split('"""')[1] and "tool_registry.py" in source.split('"""')[1]
    done = subprocess.run([sys.executable, str(CODE / "simple_registry.py")], capture_output=True, text=True,
                          timeout=60, cwd=CODE.parent)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert json.loads(lines[0])["function"]["name"] == "get_forecast"
    assert any("❌ [参数错误]" in line for line in lines) and any("❌ [未知工具]" in line for line in lines)
