"""The course's own walkthrough (lesson 8.4) on the offline model: one sentence asks for an employee record by id
and an after-tax income; the model calls both tools (in one round with function calling) and the final answer
carries the right figure. Paraphrases and other numbers work too: the model has general skills (ids, amounts
matched to parameters by their labels, percentages for rates, several requests in one sentence), not this sentence."""
from typing import Annotated

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import examples_payroll
from function_calling_loop import run_function_calling
from json_loop import run_json_from_text
from lessons.editor_panel import EXAMPLE_SETS
from lessons.presets import PRESETS, WALKTHROUGH
from llm_clients import make_client
from offline.model import plan_calls
from react_loop import run_react
from tool_registry import ToolRegistry

REGISTRY = examples_payroll.registry
LOOPS = {"function_calling": run_function_calling, "react": run_react, "json": run_json_from_text}


def kinds(events, kind):
    return [e for e in events if e["type"] == kind]


def run(loop, question, registry=REGISTRY, **options):
    return list(LOOPS[loop](make_client("offline", **options.pop("client", {})), question, None, registry, **options))


def test_the_example_set_follows_the_course_text():
    schemas = {s["function"]["name"]: s["function"] for s in REGISTRY.to_schemas()}
    salary = schemas["calculate_salary"]
    assert salary["description"].startswith("计算员工税后净收入")        # from the docstring, no text in the decorator
    assert salary["parameters"]["required"] == ["base", "bonus"]
    assert salary["parameters"]["properties"]["tax_rate"]["default"] == 0.1
    assert all(salary["parameters"]["properties"][p]["description"] for p in ("base", "bonus", "tax_rate"))
    assert schemas["get_employee"]["parameters"]["properties"]["employee_id"]["type"] == "integer"
    assert WALKTHROUGH in PRESETS["员工档案与税后收入（8.4）"]
    assert EXAMPLE_SETS["员工档案与税后收入（8.4）"] == "examples_payroll.py"
    assert set(PRESETS) == set(EXAMPLE_SETS)          # every example set in the editor has its preset questions


def test_function_calling_calls_both_tools_in_one_round_and_answers_30400():
    events = run("function_calling", WALKTHROUGH)
    calls = kinds(events, "tool_call")
    assert [(c["turn"], c["name"], c["arguments"]) for c in calls] == [
        (1, "get_employee", {"employee_id": 101}),
        (1, "calculate_salary", {"base": 30000, "bonus": 8000, "tax_rate": 0.2})]
    assert all(r["ok"] for r in kinds(events, "tool_result"))
    assert events[-1]["type"] == "final" and events[-1]["turn"] == 2
    assert "30400" in events[-1]["content"] and "张三" in events[-1]["content"]


@pytest.mark.parametrize("loop", ["react", "json"])
def test_text_protocols_call_both_tools_and_answer_30400(loop):
    events = run(loop, WALKTHROUGH)
    calls = kinds(events, "tool_call")
    # a text protocol runs one action per round: the same two calls, one after the other
    assert [(c["name"], c["arguments"]) for c in calls] == [
        ("get_employee", {"employee_id": 101}), ("calculate_salary", {"base": 30000, "bonus": 8000, "tax_rate": 0.2})]
    assert all(p["ok"] for p in kinds(events, "parse")) and all(r["ok"] for r in kinds(events, "tool_result"))
    assert events[-1]["type"] == "final" and "30400" in events[-1]["content"]


# ---- paraphrases and other numbers

TEMPLATES = [
    "帮我查询员工 {id} 的档案，并计算基本工资 {base} 加上奖金 {bonus} 的税后收入（税率 {rate}%）",
    "查一下工号 {id} 的员工档案，然后算一下底薪 {base}、奖金 {bonus}、税率 {rate}% 的税后收入",
    "员工 {id} 的档案给我看看；另外基本工资 {base}，奖金 {bonus}，税率 {rate}%，税后能拿多少？",
    "奖金 {bonus}，基本工资 {base}，税率 {rate}%，税后收入是多少？再查一下员工 {id} 的档案",
    "税率 {rate}%，基本工资 {base} 元，奖金 {bonus} 元，帮我算税后收入，顺便查员工 {id} 的档案",
    "{base} 元底薪和 {bonus} 元奖金，按 {rate}% 的税率，税后是多少？同时查一下员工 {id} 的档案",
    "查询工号为 {id} 的员工档案，并算出基本工资 {base}、奖金 {bonus} 在税率 {rate}% 下的税后收入",
]


def expected_income(base, bonus, rate):
    return f"{(base + bonus) * (1 - rate / 100):.2f}"


AMOUNTS = dict(employee=st.sampled_from(sorted(examples_payroll.RECORDS)), base=st.integers(1000, 99999),
               bonus=st.integers(0, 50000), rate=st.integers(1, 60), template=st.sampled_from(TEMPLATES))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**AMOUNTS)
def test_paraphrases_with_any_numbers_plan_both_calls(employee, base, bonus, rate, template):
    question = template.format(id=employee, base=base, bonus=bonus, rate=rate)
    plan = plan_calls(question, REGISTRY.to_schemas())
    assert sorted(plan, key=lambda call: call[0]) == [
        ("calculate_salary", {"base": base, "bonus": bonus, "tax_rate": rate / 100}),
        ("get_employee", {"employee_id": employee})], question


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loop=st.sampled_from(sorted(LOOPS)), **AMOUNTS)
def test_paraphrases_with_any_numbers_run_to_the_right_figure(loop, employee, base, bonus, rate, template):
    question = template.format(id=employee, base=base, bonus=bonus, rate=rate)
    events = run(loop, question)
    assert all(r["ok"] for r in kinds(events, "tool_result")) and len(kinds(events, "tool_result")) == 2
    if loop == "function_calling":
        assert {c["turn"] for c in kinds(events, "tool_call")} == {1}
    assert events[-1]["type"] == "final"
    assert expected_income(base, bonus, rate) in events[-1]["content"]
    assert examples_payroll.RECORDS[employee]["姓名"] in events[-1]["content"]


@settings(max_examples=40, deadline=None)
@given(base=st.integers(1, 9), bonus=st.integers(100, 9999), rate=st.integers(1, 99))
def test_ten_thousands_and_decimal_rates(base, bonus, rate):
    question = f"基本工资 {base}万，奖金 {bonus}，税率 0.{rate:02d}，税后多少？"
    assert plan_calls(question, REGISTRY.to_schemas()) == [
        ("calculate_salary", {"base": base * 10000, "bonus": bonus, "tax_rate": rate / 100})]


# ---- the same skills on tools written here: other names, other descriptions, ids as strings

shop = ToolRegistry()


@shop.tool("查询订单详情")
def get_order(order_id: Annotated[str, "订单编号"]) -> str:
    return f"订单 {order_id}"


@shop.tool("计算商品的应付金额")
def checkout(price: Annotated[float, "商品单价（元）"], quantity: Annotated[int, "购买数量"],
             discount_rate: Annotated[float, "折扣率，0~1 的小数"] = 0.0,
             shipping_fee: Annotated[float, "运费（元）"] = 0.0) -> float:
    return round(price * quantity * (1 - discount_rate) + shipping_fee, 2)


@settings(max_examples=60, deadline=None)
@given(order=st.integers(1000, 999999), price=st.integers(1, 9999), quantity=st.integers(1, 50),
       discount=st.integers(1, 90), fee=st.integers(1, 30),
       template=st.sampled_from([
           "查一下订单 {order} 的详情，再算一下单价 {price} 元、数量 {quantity} 件、折扣率 {discount}%、运费 {fee} 元的应付金额",
           "运费 {fee} 元，折扣 {discount}%，数量 {quantity}，单价 {price}，应付多少？另外查询订单 {order}",
       ]))
def test_labelled_amounts_on_other_tools(order, price, quantity, discount, fee, template):
    question = template.format(order=order, price=price, quantity=quantity, discount=discount, fee=fee)
    plan = dict(plan_calls(question, shop.to_schemas()))
    assert plan == {"get_order": {"order_id": str(order)},
                    "checkout": {"price": price, "quantity": quantity, "discount_rate": discount / 100,
                                 "shipping_fee": fee}}, question


def test_the_example_file_runs_as_a_script():
    import subprocess
    import sys
    from pathlib import Path
    code = Path(__file__).resolve().parents[2] / "code"
    done = subprocess.run([sys.executable, str(code / "examples_payroll.py")], capture_output=True, text=True,
                          timeout=60, cwd=code)
    assert done.returncode == 0, done.stderr
    assert "税后净收入: 30400.00 元" in done.stdout and "税率应是 0~1 之间的小数" in done.stdout
