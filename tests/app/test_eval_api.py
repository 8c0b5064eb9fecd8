"""/run_eval through gradio_client against the real app: a case set scored for one or two models,
the tools in the sandbox, and a case set it cannot use said before anything runs."""
from __future__ import annotations

import json

import pytest
from gradio_client import Client

from evaluation_cases import CASE_SETS
from lessons.editor_panel import EXAMPLE_SETS, VAGUE_WEATHER, example_text

WEATHER = example_text(EXAMPLE_SETS["天气"])
VAGUE = example_text(VAGUE_WEATHER[2])
CASES = CASE_SETS["examples_weather.py"]


@pytest.fixture(scope="module")
def client(app_url):
    client = Client(app_url, verbose=False)
    yield client
    client.close()


def run(client, source=WEATHER, cases=CASES, models=None, trials=1):
    return client.predict(source, cases, models, trials, api_name="/run_eval")


def test_the_inputs(client):
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    names = [p["parameter_name"] for p in endpoints["/run_eval"]["parameters"]]
    assert names == ["source", "cases", "models", "trials", "class_code", "max_tokens"]


def test_clear_descriptions_pass_and_vague_ones_pick_the_wrong_tool(client):
    clear = run(client)
    [model] = clear["models"]
    assert clear["ok"] and clear["done"] == clear["planned"] == len(CASES)
    assert model["totals"]["passed"] == model["totals"]["runs"] == len(CASES)
    assert model["totals"]["estimated"] and model["totals"]["cost"] is None
    assert {case["category"] for case in clear["cases"]} == {"multiple", "parallel", "irrelevance"}
    vague = run(client, source=VAGUE)["models"][0]
    failed = {row["case"]: row["problem"] for row in vague["cases"] if row["passed"] < row["runs"]}
    assert failed == {"这几天": "应调用 get_forecast，调用的却是 get_weather",
                      "周末": "应调用 get_forecast，调用的却是 get_weather"}
    assert vague["totals"]["passed"] == len(CASES) - 2


def test_two_models_side_by_side_with_trials_and_a_price_on_estimated_tokens(client):
    result = run(client, cases=json.dumps({"cases": CASES[:2]}, ensure_ascii=False), trials=2,
                 models=[{"provider": "offline", "price": "2, 8"}, {"provider": "offline", "mistake": "unknown_tool"}])
    a, b = result["models"]
    assert [m["label"] for m in result["models"]] == ["A", "B"] and result["done"] == 8
    assert a["totals"]["passed"] == 4 and b["totals"]["passed"] == 0
    assert all(run["tool"] is False and run["arguments"] is None for run in b["runs"])   # wrong tool: not compared
    assert a["price"] == {"input": 2.0, "output": 8.0} and a["totals"]["cost"] is None   # tokens are estimated


def test_a_case_set_it_cannot_use_runs_nothing(client):
    broken = run(client, cases=[{"name": "x", "question": "q", "calls": [{"name": "get_weather",
                                                                          "arguments": {"city": {"near": "北京"}}}]}])
    assert not broken["ok"] and broken["done"] == 0
    assert broken["problem"] == '第 1 个用例 的 calls[0].arguments.city.near 应为数字，收到 "北京"'
    price = run(client, models=[{"provider": "offline", "price": "很贵"}])
    assert not price["ok"] and "价格写成「输入, 输出」两个不小于 0 的数" in price["problem"]
    too_many = run(client, models=[{"provider": "offline"}] * 3)
    assert not too_many["ok"] and "一到 2 个" in too_many["problem"]
