"""The naive generator degrades silently under `from __future__ import annotations`; every example runs as a script."""
import json
import pathlib
import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator

import examples_calculator
import examples_drift
import examples_employees
import examples_future_trap
import examples_weather
from naive_schema import naive_function_schema

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_naive_generator_degrades_under_future_annotations():
    tool = examples_future_trap.registry.tools["add_todo"]
    naive = naive_function_schema(tool.func, tool.description)
    assert naive["type"] == "function" and naive["function"]["name"] == "add_todo"
    props = naive["function"]["parameters"]["properties"]
    # every annotation is a string at runtime, so the fixed table finds nothing
    assert props["count"] == {"type": "string"}
    assert props["tags"] == {"type": "string"}
    assert props["priority"] == {"type": "string"}                  # the Enum's values are gone
    assert props["repeat"] == {"type": "string"}                    # so are the Literal's
    assert naive["function"]["parameters"]["required"] == ["title"]
    correct = tool.parameters["properties"]
    assert correct["count"]["type"] == "integer" and correct["tags"]["items"] == {"type": "string"}


def test_naive_generator_without_future_import_still_loses_details():
    from typing import Literal

    def f(count: int, tags: list[str], unit: Literal["c", "f"], limit: int | None = None):
        pass

    props = naive_function_schema(f, "描述")["function"]["parameters"]["properties"]
    assert props["count"] == {"type": "integer"} and props["limit"] == {"type": "integer"}
    assert props["tags"] == {"type": "array"}                       # no items
    assert props["unit"] == {"type": "string"}                      # no enum


@pytest.mark.parametrize("module", [examples_weather, examples_calculator, examples_employees, examples_future_trap,
                                    examples_drift])
def test_example_tools_are_clean(module):
    assert module.registry.tools
    for name, warnings in module.registry.warnings().items():
        assert warnings == [], (name, warnings)
    for schema in module.registry.to_schemas() + module.registry.to_schemas(strict=True):
        Draft202012Validator.check_schema(schema["function"]["parameters"])
        assert schema["function"]["description"]


def test_examples_behave():
    assert examples_weather.registry.invoke("get_weather", {"city": "北京"}) == "北京今天晴，气温 25°C，湿度 30%"
    assert "77°F" in examples_weather.registry.invoke("get_weather", {"city": "北京", "unit": "f"})
    forecast = json.loads(examples_weather.registry.invoke("get_forecast", {"city": "上海", "days": "3"}))
    assert len(forecast) == 3
    calc = examples_calculator.registry
    assert calc.invoke("calculate", {"expression": "(3+4)*5"}) == "(3+4)*5 = 35"
    assert calc.invoke("calculate", {"expression": "2 ** 10 / 4"}) == "2 ** 10 / 4 = 256"
    assert calc.invoke("calculate", {"expression": "（1+2）×3"}) == "（1+2）×3 = 9"
    for evil in ("__import__('os').system('id')", "9**9**9", "[1]*10", "1/0", "abs(-1)"):
        outcome = calc.call("calculate", {"expression": evil})
        assert outcome.error_code == "tool_exception", (evil, outcome.content)
    assert calc.invoke("convert_unit", {"value": 1, "from_unit": "km", "to_unit": "m"}) == "1 km = 1000 m"
    assert calc.call("convert_unit", {"value": 1, "from_unit": "km", "to_unit": "kg"}).error_code == "tool_exception"
    staff = examples_employees.registry
    salary = json.loads(staff.invoke("calculate_salary", {"name": "张三"}))
    assert salary["月薪合计"] == salary["基本月薪"] + salary["工龄补贴"] + salary["绩效奖金"]
    assert json.loads(staff.invoke("list_department", {"department": "研发部"}))[0]["姓名"] == "张三"
    assert staff.call("list_department", {"department": "市场部"}).error_code == "invalid_arguments"
    assert "查无此人" in staff.invoke("get_employee", {"name": "无名氏"})


def test_the_drift_example_fails_only_when_the_old_call_is_made():
    """The hand-written schema still says city; the function and the registry's schema say location."""
    hand = examples_drift.HAND_WRITTEN_SCHEMA["function"]["parameters"]
    derived = examples_drift.registry.tools["get_weather"].parameters
    assert set(hand["properties"]) == {"city", "unit"} and set(derived["properties"]) == {"location", "unit"}
    old_call = {name: "北京" for name in hand["required"]}
    with pytest.raises(TypeError, match="city"):
        examples_drift.get_weather(**old_call)
    outcome = examples_drift.registry.call("get_weather", old_call)
    assert outcome.error_code == "invalid_arguments" and "未知参数 city（是不是想用 location？" in outcome.content
    assert examples_drift.registry.invoke("get_weather", {"location": "北京"}).startswith("北京今天")


@pytest.mark.parametrize("script, expected", [
    ("examples_weather.py", "北京今天晴"),
    ("examples_calculator.py", "(3+4)*5 = 35"),
    ("examples_employees.py", "月薪合计"),
    ("examples_future_trap.py", "朴素做法"),
    ("examples_drift.py", "got an unexpected keyword argument 'city'"),
    ("naive_schema.py", "✗ add_todo.count"),
    ("tool_registry.py", "get_weather"),
])
def test_modules_run_as_scripts(script, expected):
    result = subprocess.run([sys.executable, str(ROOT / "code" / script)], capture_output=True, text=True,
                            timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout
